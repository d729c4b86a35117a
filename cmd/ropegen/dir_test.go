package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory holding another package's Go files is refused, naming -o, the
// file and both packages, and nothing is written; files of the same package
// (and its _test package) are fine.
func TestOtherPackageRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	code, stdout, stderr := ropegenRun(t, "-o", dir, "-dim", "8", "-pkg", "rope")
	if code != exitUsage || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
	}
	for _, w := range []string{"-o", "main.go", "package main", "package rope"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not mention %q", stderr, w)
		}
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}

	same := t.TempDir()
	for name, src := range map[string]string{"extra.go": "package rope\n", "extra_test.go": "package rope_test\n"} {
		if err := os.WriteFile(filepath.Join(same, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := ropegenRun(t, "-o", same, "-dim", "8", "-pkg", "rope"); code != 0 {
		t.Fatalf("same package: exit %d: %s", code, stderr)
	}
}

// Regenerating without -tests removes the rope_test.go ropegen wrote, but
// not a hand-written one.
func TestStaleTestFileRemoved(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := ropegenRun(t, "-o", dir, "-dim", "8", "-tests"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "rope_test.go")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := ropegenRun(t, "-o", dir, "-dim", "8"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "rope_test.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rope_test.go written by -tests is still there after a run without it (%v)", err)
	}
	mine := "package rope\n\n// mine\n"
	if err := os.WriteFile(filepath.Join(dir, "rope_test.go"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := ropegenRun(t, "-o", dir, "-dim", "8"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "rope_test.go")); err != nil || string(data) != mine {
		t.Errorf("a hand-written rope_test.go changed (%v)", err)
	}
}

// -scaling with -hf-config replaces the config's scheme: a parameter the new
// scheme lacks is asked of the flags, and the message does not blame the
// config.
func TestScalingOverridesConfig(t *testing.T) {
	cfg := filepath.Join("..", "..", "spec", "testdata", "hf", "llama-3.1-8b.json")
	for _, args := range [][]string{
		{"-hf-config", cfg, "-scaling", "yarn", "-explain"},
		{"-hf-config", cfg, "-scaling", "yarn", "-factor", "4", "-explain"},
	} {
		code, _, stderr := ropegenRun(t, args...)
		if code != exitUsage || !strings.Contains(stderr, `-scaling "yarn": needs -`) || strings.Contains(stderr, "config") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message naming -scaling, not the config", args, code, stderr)
		}
	}
	code, stdout, stderr := ropegenRun(t, "-hf-config", cfg, "-scaling", "yarn", "-factor", "4", "-orig-ctx", "8192", "-explain")
	if code != 0 || !strings.Contains(stdout, "scaling: yarn") {
		t.Errorf("yarn over llama3's config: exit %d, %s%s", code, stdout, stderr)
	}
}
