package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFresh checks that verify's checked-in stream kernels are exactly what
// streamgen writes: run `go generate ./verify` after changing the emitter.
func TestFresh(t *testing.T) {
	fs, err := files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range fs {
		got, err := os.ReadFile(filepath.Join("..", "..", "verify", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("verify/%s is stale: run go generate ./verify", name)
		}
	}
}
