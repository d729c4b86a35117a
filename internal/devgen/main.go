// Command devgen is a development helper: it writes a package for a quick
// spec. Usage: devgen outdir dim rotary layout [dtype [outdtype [tests]]]
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ropegen/ropegen/gen"
	"github.com/ropegen/ropegen/spec"
)

func main() {
	s := spec.DefaultSpec()
	fmt.Sscan(os.Args[2], &s.HeadDim)
	fmt.Sscan(os.Args[3], &s.RotaryDim)
	s.Layout = spec.Layout(os.Args[4])
	if len(os.Args) > 5 {
		s.DType = os.Args[5]
	}
	if len(os.Args) > 6 && os.Args[6] != "-" {
		s.Caches = spec.ParseCaches(os.Args[6])
	}
	files, err := gen.Generate(s, gen.Options{Command: "test", Tests: len(os.Args) > 7})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.MkdirAll(os.Args[1], 0o755)
	for _, f := range files {
		os.WriteFile(filepath.Join(os.Args[1], f.Name), f.Data, 0o644)
	}
}
