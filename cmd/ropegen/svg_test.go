package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/gen"
	"github.com/ropegen/ropegen/spec"
)

// The figures in docs/figures are what ropegen draws today, with the
// commands README.md shows.
func TestSVGFiguresFresh(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"rope128.svg", []string{"-dim", "128", "-base", "10000"}},
		{"llama31.svg", []string{"-hf-config", filepath.Join(root, "spec", "testdata", "hf", "llama-3.1-8b.json")}},
	} {
		want, err := os.ReadFile(filepath.Join(root, "docs", "figures", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), tc.file)
		args := append(tc.args, "-explain", "-svg", out)
		code, _, stderr := ropegenRun(t, args...)
		if code != 0 {
			t.Fatalf("ropegen %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/figures/%s is stale: regenerate it with ropegen %s -explain -svg docs/figures/%s (see README.md, Plans as figures)",
				tc.file, strings.Join(tc.args, " "), tc.file)
		}
	}
}

// -explain -svg prints the same explanation as -explain and writes the
// figure; run again, it replaces its own figure.
func TestSVGWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "plan.svg")
	_, plain, _ := ropegenRun(t, "-explain", "-dim", "64")
	for range 2 {
		code, stdout, stderr := ropegenRun(t, "-explain", "-dim", "64", "-svg", out)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if stdout != plain || plain == "" {
			t.Errorf("-explain -svg printed\n%s\nwant what -explain prints:\n%s", stdout, plain)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		s := spec.DefaultSpec()
		s.HeadDim = 64
		if err := gen.ExplainSVG(&want, s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Error("the file is not gen.ExplainSVG's figure of the spec")
		}
		checkNoTemps(t, dir)
	}
}

func TestSVGRefusals(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.svg")
	const handMade = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n"
	if err := os.WriteFile(mine, []byte(handMade), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.svg"), 0o777); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, tc := range []struct {
		args []string
		want []string // in the one line of stderr
	}{
		{[]string{"-svg", filepath.Join(dir, "a.svg")}, []string{`-svg "` + filepath.Join(dir, "a.svg") + `"`, "only with -explain"}},
		{[]string{"-explain", "-svg", ""}, []string{`-svg ""`, "want the path"}},
		{[]string{"-explain", "-svg", mine}, []string{`-svg "` + mine + `"`, "refusing to overwrite", gen.SVGHeader}},
		{[]string{"-explain", "-svg", filepath.Join(dir, "sub.svg")}, []string{"-svg", "not a regular file"}},
		{[]string{"-explain", "-svg", filepath.Join(dir, "no", "a.svg")}, []string{"-svg", "no directory", filepath.Join(dir, "no")}},
		{[]string{"-explain", "-svg", filepath.Join(mine, "a.svg")}, []string{"-svg", "not a directory"}},
		{[]string{"-explain", "-dim", "7", "-svg", filepath.Join(dir, "a.svg")}, []string{"-dim 7"}},
	} {
		code, stdout, stderr := ropegenRun(t, tc.args...)
		if code != exitUsage || stdout != "" {
			t.Errorf("ropegen %q: exit %d, stdout %q; want exit %d and nothing printed", tc.args, code, stdout, exitUsage)
		}
		checkOneLine(t, stderr, tc.want...)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Errorf("refused runs changed the directory: %v", d)
	}
}
