package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/gen"
	"github.com/ropegen/ropegen/spec"
)

// ropegenRun runs ropegen with args and returns the exit status and what it
// wrote.
func ropegenRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// snapshot records every entry under root: its mode and, for files, its
// contents.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			v += " " + string(data)
		}
		m[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	slices.Sort(d)
	return d
}

const handWritten = "package rope\n\n// Written by hand.\n"

// fixture makes a directory tree for the failure cases:
//
//	root/out/keep.txt      hand-written, not a target
//	root/out/rope.go       an earlier ropegen output
//	root/afile             a regular file
//	root/bad.json          not JSON
//	root/odd.json          a config whose head dim is odd
//	root/cfgdir/           a directory
func fixture(t *testing.T) (root, out string) {
	t.Helper()
	root = t.TempDir()
	out = filepath.Join(root, "out")
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("out/keep.txt", "keep me\n")
	write("out/rope.go", gen.Header("-old")+"\n\npackage rope\n")
	write("afile", "not a directory\n")
	write("bad.json", "{not json")
	write("odd.json", `{"model_type": "llama", "hidden_size": 896, "num_attention_heads": 128, "head_dim": 7, "rope_theta": 10000}`)
	if err := os.Mkdir(filepath.Join(root, "cfgdir"), 0o777); err != nil {
		t.Fatal(err)
	}
	return root, out
}

// checkOneLine checks that stderr is exactly one line "ropegen: …" holding
// every string of want.
func checkOneLine(t *testing.T, stderr string, want ...string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "ropegen: ") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr = %q, want one line \"ropegen: …\\n\"", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr = %q, want it to mention %q", stderr, w)
		}
	}
}

// TestBadInvocations: every malformed invocation exits 2 with one line on
// stderr naming the flag (or argument) and the value, prints nothing on
// stdout and changes nothing on disk.
func TestBadInvocations(t *testing.T) {
	tests := []struct {
		name string
		args []string // $ROOT is the fixture root; "-o $ROOT/out" comes first
		want []string // strings stderr must hold
	}{
		// Head dimension.
		{"odd dim", []string{"-dim", "7"}, []string{"-dim 7", "even"}},
		{"zero dim", []string{"-dim", "0"}, []string{"-dim 0", "even"}},
		{"negative dim", []string{"-dim", "-2"}, []string{"-dim -2"}},
		{"huge dim", []string{"-dim", "8192"}, []string{"-dim 8192", "4096"}},
		{"overflowing dim", []string{"-dim", "99999999999999999999"}, []string{`-dim "99999999999999999999"`, "out of range"}},
		{"non-numeric dim", []string{"-dim", "abc"}, []string{`-dim "abc"`, "integer"}},
		{"fractional dim", []string{"-dim", "12.5"}, []string{`-dim "12.5"`, "integer"}},
		{"dim without value", []string{"-dim"}, []string{"-dim", "needs a value"}},
		// Rotary dimension.
		{"rotary above head dim", []string{"-dim", "64", "-rotary-dim", "128"}, []string{"-rotary-dim 128", "64"}},
		{"odd rotary", []string{"-rotary-dim", "63"}, []string{"-rotary-dim 63", "even"}},
		{"negative rotary", []string{"-rotary-dim", "-2"}, []string{"-rotary-dim -2"}},
		// Base.
		{"base 1", []string{"-base", "1"}, []string{"-base 1", "> 1"}},
		{"base below 1", []string{"-base", "0.5"}, []string{"-base 0.5", "> 1"}},
		{"negative base", []string{"-base", "-10000"}, []string{"-base -10000"}},
		{"NaN base", []string{"-base", "NaN"}, []string{"-base NaN", "finite"}},
		{"Inf base", []string{"-base", "Inf"}, []string{"-base", "Inf", "finite"}},
		{"non-numeric base", []string{"-base", "abc"}, []string{`-base "abc"`, "number"}},
		{"overflowing base", []string{"-base", "1e999"}, []string{`-base "1e999"`, "out of range"}},
		// Types, layout, package.
		{"unknown dtype", []string{"-dtype", "f128"}, []string{`-dtype "f128"`, "f32"}},
		{"unknown out dtype", []string{"-out-dtype", "q4"}, []string{`-out-dtype "q4"`}},
		{"unknown layout", []string{"-layout", "halfsplit"}, []string{`-layout "halfsplit"`, "interleaved", "neox"}},
		{"package not an identifier", []string{"-pkg", "9lives"}, []string{`-pkg "9lives"`, "identifier"}},
		{"package with a dash", []string{"-pkg", "my-rope"}, []string{`-pkg "my-rope"`, "identifier"}},
		{"package is a keyword", []string{"-pkg", "func"}, []string{`-pkg "func"`, "keyword"}},
		{"empty package", []string{"-pkg", ""}, []string{`-pkg ""`}},
		{"blank package", []string{"-pkg", "_"}, []string{`-pkg "_"`}},
		// Scaling.
		{"unknown scaling", []string{"-scaling", "bogus"}, []string{`-scaling "bogus"`}},
		{"zero factor", []string{"-scaling", "linear", "-factor", "0"}, []string{`-scaling "linear"`, "needs -factor"}},
		{"negative factor", []string{"-scaling", "linear", "-factor", "-2"}, []string{"-factor -2"}},
		{"non-numeric factor", []string{"-factor", "abc"}, []string{`-factor "abc"`, "number"}},
		{"non-numeric orig-ctx", []string{"-orig-ctx", "4k"}, []string{`-orig-ctx "4k"`, "integer"}},
		{"bad truncate", []string{"-truncate=maybe"}, []string{`-truncate "maybe"`, "true or false"}},
		{"short list too short", []string{"-dim", "8", "-scaling", "longrope", "-factor", "4", "-orig-ctx", "4096",
			"-short-factor", "1,1", "-long-factor", "1,1,1,1"}, []string{"-short-factor"}},
		{"freq-factors wrong length", []string{"-dim", "8", "-freq-factors", "1,2,3"}, []string{"-freq-factors"}},
		{"malformed list element", []string{"-freq-factors", "1,abc,3"}, []string{`-freq-factors "1,abc,3"`, `"abc"`, "element 2"}},
		{"empty list element", []string{"-short-factor", "1,,2"}, []string{`-short-factor "1,,2"`, "element 2"}},
		{"out of range list element", []string{"-long-factor", "1,1e999"}, []string{`-long-factor "1,1e999"`, `"1e999"`}},
		// Config.
		{"missing config", []string{"-hf-config", "$ROOT/missing.json"}, []string{"-hf-config", "missing.json"}},
		{"malformed config", []string{"-hf-config", "$ROOT/bad.json"}, []string{"-hf-config", "bad.json"}},
		{"config is a directory", []string{"-hf-config", "$ROOT/cfgdir"}, []string{"-hf-config", "cfgdir"}},
		{"config with odd head dim", []string{"-hf-config", "$ROOT/odd.json"}, []string{"-hf-config", "odd.json"}},
		// Output path and arguments.
		{"output is a file", []string{"-o", "$ROOT/afile"}, []string{"-o", "afile", "not a directory"}},
		{"output below a file", []string{"-o", "$ROOT/afile/sub"}, []string{"-o", "afile/sub", "not a directory"}},
		{"empty output", []string{"-o", ""}, []string{`-o ""`}},
		{"new output dir, bad spec", []string{"-o", "$ROOT/new/dir", "-dim", "3"}, []string{"-dim 3"}},
		{"positional argument", []string{"extra"}, []string{"extra", "argument"}},
		{"positional after flags", []string{"-dim", "64", "rope.go"}, []string{"rope.go", "argument"}},
		{"argument after --", []string{"--", "-dim", "64"}, []string{"-dim", "argument"}},
		{"unknown flag", []string{"-dimm", "64"}, []string{"-dimm", "unknown flag"}},
		{"stringer's flag", []string{"-output", "x.go"}, []string{"-output", "unknown flag"}},
		{"bad flag syntax", []string{"---dim", "64"}, []string{"---dim", "syntax"}},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, out := fixture(t)
			args := []string{"-o", out}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "$ROOT", root))
			}
			want := slices.Clone(tc.want)
			for i, w := range want {
				want[i] = strings.ReplaceAll(w, "/", string(filepath.Separator))
			}
			before := snapshot(t, root)
			code, stdout, stderr := ropegenRun(t, args...)
			if code != exitUsage {
				t.Errorf("ropegen %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			checkOneLine(t, stderr, want...)
			if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
				t.Errorf("the directory changed: %v", d)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		root, _ := fixture(t)
		before := snapshot(t, root)
		t.Chdir(root)
		code, stdout, stderr := ropegenRun(t, arg)
		if code != exitOK {
			t.Errorf("ropegen %s: exit %d, want 0", arg, code)
		}
		if stdout != "" {
			t.Errorf("ropegen %s: stdout = %q, want nothing (usage goes to stderr)", arg, stdout)
		}
		for _, w := range []string{
			"Usage of ropegen:",
			"-dim n", "(default 128)",
			"-rotary-dim", "-base", "(default 10000)",
			"-dtype", `(default "f32")`, "-out-dtype",
			"-layout", `(default "interleaved")`,
			"-pkg", `(default "rope")`,
			"-o directory", `(default ".")`,
			"-tests", "-explain", "-hf-config", "-gguf path",
			"-scaling", `(default "none")`,
			"-factor", "-orig-ctx", "-beta-fast", "-beta-slow", "-attn-factor",
			"-mscale", "-mscale-all-dim", "-truncate", "(default true)",
			"-low-freq-factor", "-high-freq-factor",
			"-short-factor", "-long-factor", "-freq-factors",
		} {
			if !strings.Contains(stderr, w) {
				t.Errorf("ropegen %s: usage lacks %q", arg, w)
			}
		}
		if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
			t.Errorf("ropegen %s changed the directory: %v", arg, d)
		}
	}
}

// TestNoGlobalFlags: ropegen's flags live in its own FlagSet.
func TestNoGlobalFlags(t *testing.T) {
	c, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.fs.Lookup("dim") == nil {
		t.Fatal("no -dim")
	}
	if c.fs.Lookup("stubs") != nil || c.fs.Lookup("test.v") != nil {
		t.Error("ropegen's FlagSet holds flags from flag.CommandLine")
	}
}

func TestDefaults(t *testing.T) {
	c, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !specEqual(c.spec, spec.DefaultSpec()) {
		t.Errorf("no flags: spec %+v, want spec.DefaultSpec() %+v", c.spec, spec.DefaultSpec())
	}
	if !reflect.DeepEqual(c.opt, options{out: "."}) {
		t.Errorf("no flags: options %+v", c.opt)
	}
}

func specEqual(a, b spec.Spec) bool { return reflect.DeepEqual(a, b) }

// TestFlagsMapOntoSpec: every flag lands in its field.
func TestFlagsMapOntoSpec(t *testing.T) {
	c, err := parse(strings.Fields("-dim 64 -rotary-dim 32 -base 500000 -dtype f64 -out-dtype f16 -layout neox -pkg kern " +
		"-scaling yarn -factor 4 -orig-ctx 8192 -beta-fast 16 -beta-slow 2 -attn-factor 1.5 -mscale 0.7 -mscale-all-dim 0.8 " +
		"-truncate=false -low-freq-factor 1 -high-freq-factor 4 -short-factor 1,2 -long-factor 3,4.5 -freq-factors 1e0,2 " +
		"-o out -tests -explain -hf-config c.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Spec{
		HeadDim: 64, RotaryDim: 32, Base: 500000, DType: "f64", Caches: []spec.CacheType{spec.CacheF16}, Layout: "neox", Package: "kern",
		Scaling: spec.Scaling{
			Type: "yarn", Factor: 4, OrigCtx: 8192, BetaFast: 16, BetaSlow: 2, AttnFactor: 1.5, MScale: 0.7, MScaleAllDim: 0.8,
			Truncate: false, LowFreqFactor: 1, HighFreqFactor: 4,
			ShortFactor: []float64{1, 2}, LongFactor: []float64{3, 4.5}, FreqFactors: []float64{1, 2},
		},
	}
	if !specEqual(c.spec, want) {
		t.Errorf("spec\n got %+v\nwant %+v", c.spec, want)
	}
	if want := (options{out: "out", hfConfig: "c.json", hfConfigs: []string{"c.json"}, tests: true, explain: true}); !reflect.DeepEqual(c.opt, want) {
		t.Errorf("options %+v, want %+v", c.opt, want)
	}
}

// TestOverride: with -hf-config only the flags given replace the config's
// values.
func TestOverride(t *testing.T) {
	loaded := spec.Spec{
		HeadDim: 64, Base: 500000, DType: "f32", Layout: spec.NeoX, Package: "rope",
		Scaling: spec.Scaling{Type: "llama3", Factor: 8, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4, Truncate: false},
	}
	c, err := parse(strings.Fields("-base 20000 -pkg llama -factor 16 -o x -tests"))
	if err != nil {
		t.Fatal(err)
	}
	got := loaded
	c.override(&got)
	want := loaded
	want.Base, want.Package, want.Scaling.Factor = 20000, "llama", 16
	if !specEqual(got, want) {
		t.Errorf("override\n got %+v\nwant %+v", got, want)
	}

	// A flag set to its default still overrides.
	c, err = parse(strings.Fields("-dim 128 -layout interleaved -truncate -rotary-dim 0"))
	if err != nil {
		t.Fatal(err)
	}
	loaded.RotaryDim = 32
	got = loaded
	c.override(&got)
	want = loaded
	want.HeadDim, want.Layout, want.Scaling.Truncate, want.RotaryDim = 128, spec.Interleaved, true, 0
	if !specEqual(got, want) {
		t.Errorf("override with defaults\n got %+v\nwant %+v", got, want)
	}
}

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-dim", "64", "-o", "../x"}, "-dim 64 -o ../x"},
		{[]string{"-dim=64", "-pkg", "rope"}, "-dim=64 -pkg rope"},
		{[]string{"-o", "a b"}, "-o a b"},
		{[]string{"-o", "a\nb"}, `-o "a\nb"`},
	} {
		if got := command(tc.args); got != tc.want {
			t.Errorf("command(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestWrite: a plain run writes the package, recording the arguments as
// typed, and creates missing directories.
func TestWrite(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	args := []string{"-dim", "64", "-o", "a/b/rope", "-pkg", "rope"}
	code, stdout, stderr := ropegenRun(t, args...)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(root, "a/b/rope/rope.go"))
	if err != nil {
		t.Fatal(err)
	}
	header := `// Code generated by "ropegen -dim 64 -o a/b/rope -pkg rope"; DO NOT EDIT.` + "\n"
	if !bytes.HasPrefix(data, []byte(header)) {
		t.Errorf("rope.go begins %q, want %q", firstLine(data), header)
	}
	checkNoTemps(t, filepath.Join(root, "a/b/rope"))
}

func firstLine(b []byte) string {
	l, _, _ := bytes.Cut(b, []byte("\n"))
	return string(l)
}

func checkNoTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// TestWriteTests: -tests also writes rope_test.go. Needs the generator.
func TestWriteTests(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := ropegenRun(t, "-dim", "64", "-o", dir, "-tests")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"rope.go", "rope_test.go"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.HasPrefix(data, []byte(gen.HeaderPrefix)) {
			t.Errorf("%s begins %q", name, firstLine(data))
		}
	}
}

// TestRefuseHandWritten: a target file ropegen did not write stops the run
// before anything is written.
func TestRefuseHandWritten(t *testing.T) {
	root, out := fixture(t)
	if err := os.WriteFile(filepath.Join(out, "rope.go"), []byte(handWritten), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	code, stdout, stderr := ropegenRun(t, "-o", out, "-tests")
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}
	checkOneLine(t, stderr, filepath.Join(out, "rope.go"), "header", gen.HeaderPrefix)
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}
}

// TestRefuseNotRegular: a directory where a file would go is refused too.
func TestRefuseNotRegular(t *testing.T) {
	root, out := fixture(t)
	if err := os.Remove(filepath.Join(out, "rope.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out, "rope.go"), 0o777); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	code, _, stderr := ropegenRun(t, "-o", out)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	checkOneLine(t, stderr, "rope.go", "not a regular file")
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}
}

// TestRefuseAnyTarget: one hand-written target among several stops all of
// them (the generator-independent form of the -tests case).
func TestRefuseAnyTarget(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte(handWritten), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	err := writeFiles(dir, "rope", []gen.File{
		{Name: "a.go", Data: []byte(gen.Header("x") + "\npackage a\n")},
		{Name: "b.go", Data: []byte(gen.Header("x") + "\npackage a\n")},
	})
	var ie *inputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "b.go") {
		t.Errorf("err = %v, want an input error naming b.go", err)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}
}

// TestOverwriteGenerated: a file ropegen wrote earlier is replaced, keeping
// its permissions; other files are left alone.
func TestOverwriteGenerated(t *testing.T) {
	_, out := fixture(t)
	stale := gen.Header("-old -tests") + "\n\npackage rope\n"
	if err := os.WriteFile(filepath.Join(out, "rope_test.go"), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(out, "rope.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-o", out, "-dim", "32"}
	code, _, stderr := ropegenRun(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "rope.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := firstLine(data), gen.Header(strings.Join(args, " ")); got != want {
		t.Errorf("rope.go begins %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(out, "rope.go")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rope.go mode %v (%v), want it kept at 0600", fi.Mode(), err)
	}
	// Documented: an earlier run's file this run does not produce is
	// removed (it begins with the header).
	if _, err := os.Stat(filepath.Join(out, "rope_test.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rope_test.go from an earlier -tests run is still there (%v)", err)
	}
	if data, err := os.ReadFile(filepath.Join(out, "keep.txt")); err != nil || string(data) != "keep me\n" {
		t.Errorf("keep.txt changed (%v)", err)
	}
	checkNoTemps(t, out)
}

// TestDeterministic: the same arguments give the same bytes.
func TestDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"-o", "out"},
		{"-o", "out", "-dim", "64", "-tests"},
		{"-o", "out", "-dim", "96", "-rotary-dim", "64", "-layout", "neox", "-base", "500000"},
	} {
		t.Chdir(t.TempDir())
		var runs [2]map[string]string
		for i := range runs {
			code, _, stderr := ropegenRun(t, args...)
			if code != 0 {
				t.Fatalf("ropegen %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			runs[i] = snapshot(t, "out")
			if err := os.RemoveAll("out"); err != nil {
				t.Fatal(err)
			}
		}
		if d := diffSnapshots(runs[0], runs[1]); len(d) > 0 {
			t.Errorf("ropegen %s: second run differs: %v", strings.Join(args, " "), d)
		}
	}
}

// failRename makes the nth call of rename (from 1) fail.
func failRename(t *testing.T, n int) {
	calls := 0
	rename = func(from, to string) error {
		calls++
		if calls == n {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("simulated failure")}
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })
}

// TestRenameFailure: when a rename fails the directory ends as it began:
// temporaries removed, renamed files put back.
func TestRenameFailure(t *testing.T) {
	files := []gen.File{
		{Name: "a.go", Data: []byte(gen.Header("new") + "\npackage a // a new\n")},
		{Name: "b.go", Data: []byte(gen.Header("new") + "\npackage a // b new\n")},
		{Name: "c.go", Data: []byte(gen.Header("new") + "\npackage a // c new\n")},
	}
	for n := 1; n <= len(files); n++ {
		dir := t.TempDir()
		// a.go exists (generated earlier), b.go and c.go are new.
		if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(gen.Header("old")+"\npackage a // a old\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		failRename(t, n)
		err := writeFiles(dir, "a", files)
		var ie *inputError
		if err == nil || errors.As(err, &ie) {
			t.Errorf("rename %d failing: err = %v, want a write error", n, err)
		}
		if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
			t.Errorf("rename %d failing: the directory changed: %v", n, d)
		}
	}
}

// TestRenameFailureRun: the same through run: exit 1, one line, and a
// directory ropegen created is removed again.
func TestRenameFailureRun(t *testing.T) {
	root, out := fixture(t)
	before := snapshot(t, root)
	failRename(t, 1)
	code, stdout, stderr := ropegenRun(t, "-o", out)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}
	checkOneLine(t, stderr, "rope.go", "simulated failure")
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}

	failRename(t, 1)
	code, _, stderr = ropegenRun(t, "-o", filepath.Join(root, "new", "dir"))
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	checkOneLine(t, stderr, "simulated failure")
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}
}

// TestUnwritable: a directory that cannot be written is a write failure
// (exit 1), not bad input, and leaves nothing behind.
func TestUnwritable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root can write anywhere")
	}
	root, out := fixture(t)
	if err := os.Chmod(out, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(out, 0o755) })
	before := snapshot(t, root)
	code, _, stderr := ropegenRun(t, "-o", out)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	checkOneLine(t, stderr, "rope.go")
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("the directory changed: %v", d)
	}
}

// TestExplain: -explain prints the plan and writes nothing.
func TestExplain(t *testing.T) {
	root, out := fixture(t)
	before := snapshot(t, root)
	code, stdout, stderr := ropegenRun(t, "-o", out, "-explain", "-dim", "8", "-tests")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if stdout == "" {
		t.Error("-explain printed nothing")
	}
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Errorf("-explain changed the directory: %v", d)
	}

	// A bad spec prints nothing on stdout.
	code, stdout, stderr = ropegenRun(t, "-explain", "-dim", "9")
	if code != exitUsage || stdout != "" {
		t.Errorf("-explain -dim 9: exit %d, stdout %q", code, stdout)
	}
	checkOneLine(t, stderr, "-dim 9")
}

const llamaConfig = `{
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 2048,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "head_dim": 64,
  "max_position_embeddings": 131072,
  "rope_theta": 500000.0,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  }
}`

// TestHFConfig: the config gives the spec; flags given override it, flags
// not given do not. Needs spec.LoadHFConfig and the generator.
func TestHFConfig(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "config.json")
	if err := os.WriteFile(cfg, []byte(llamaConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags          []string
		headDim, base  string
		wantFromConfig bool
	}{
		{nil, "64", "500000", true},
		{[]string{"-base", "20000"}, "64", "20000", true},
		{[]string{"-dim", "128"}, "128", "500000", true},
	} {
		out := t.TempDir()
		args := append([]string{"-hf-config", cfg, "-o", out}, tc.flags...)
		code, _, stderr := ropegenRun(t, args...)
		if code != 0 {
			t.Errorf("ropegen %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			continue
		}
		if got := genConst(t, out, "HeadDim"); got != tc.headDim {
			t.Errorf("ropegen %s: HeadDim = %s, want %s", strings.Join(args, " "), got, tc.headDim)
		}
		if got := genConst(t, out, "Base"); got != tc.base {
			t.Errorf("ropegen %s: Base = %s, want %s", strings.Join(args, " "), got, tc.base)
		}
	}
}

// genConst returns the value of the constant name declared in the package in
// dir, as an exact decimal string, or "" if there is none.
func genConst(t *testing.T, dir, name string) string {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s is not a literal", name)
					}
					v := constant.MakeFromLiteral(lit.Value, lit.Kind, 0)
					return constant.ToInt(v).ExactString()
				}
			}
		}
	}
	return ""
}

func TestConfigError(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"c.json: model_type: missing", `-hf-config "c.json": model_type: missing`},
		{`"c.json": model_type: missing`, `-hf-config "c.json": model_type: missing`},
		{"-hf-config: not implemented yet", `-hf-config "c.json": not implemented yet`},
		{"-hf-config c.json: bad", `-hf-config "c.json": bad`},
		{`-hf-config "c.json": bad`, `-hf-config "c.json": bad`},
		{"open failed", `-hf-config "c.json": open failed`},
	} {
		if got := sourceError("-hf-config", "c.json", errors.New(tc.msg)); got != tc.want {
			t.Errorf("sourceError(-hf-config, %q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"-dim 7: head dim must be even": "-dim 7: head dim must be even",
		"a\n\tb\r\nc\n":                 "a; b; c",
		`-o "a  b": x`:                  `-o "a  b": x`,
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// -layer-type, -rope-local and -hf-part reach the config reader; without
// -hf-config they are bad input naming the flag.
func TestHFLayerTypeAndPart(t *testing.T) {
	data := filepath.Join("..", "..", "spec", "testdata", "hf")
	olmo := filepath.Join(data, "olmo-3.1-32b-instruct.json")
	devstral := filepath.Join(data, "devstral-small-2-24b-instruct-2512.json")
	for _, tc := range []struct {
		args []string
		want []string // in -explain's output
	}{
		{[]string{"-hf-config", olmo, "-explain"}, []string{"scaling: yarn, factor 8", "layers of type full_attention (16 of 64: 3, 7, 11, …, 63)", "— this package", "-layer-type sliding_attention writes its package"}},
		{[]string{"-hf-config", olmo, "-layer-type", "sliding_attention", "-explain"}, []string{"scaling: none", "base 500000", "this package is the sliding_attention layers' RoPE"}},
		{[]string{"-hf-config", olmo, "-rope-local", "-explain"}, []string{"scaling: none"}},
		{[]string{"-hf-config", devstral, "-hf-part", "vision", "-explain"}, []string{"axes: pixtral, 2 positions per token", "spec: dim 64, rotary-dim 64, base 10000, layout neox"}},
		{[]string{"-hf-config", devstral, "-explain"}, []string{"note: llama_4_scaling_beta 0.1", "scaling: yarn, factor 48"}},
	} {
		code, stdout, stderr := ropegenRun(t, tc.args...)
		if code != 0 {
			t.Errorf("ropegen %s: exit %d: %s", strings.Join(tc.args, " "), code, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("ropegen %s: output lacks %q:\n%s", strings.Join(tc.args, " "), w, stdout)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-layer-type", "full_attention"}, `ropegen: -layer-type "full_attention": needs -hf-config`},
		{[]string{"-hf-part", "vision"}, `ropegen: -hf-part "vision": needs -hf-config`},
		{[]string{"-hf-config", olmo, "-layer-type", "linear_attention"}, `-layer-type "linear_attention": model_type "olmo3" has no layers of that type (its layer types: sliding_attention, full_attention)`},
		{[]string{"-hf-config", olmo, "-hf-part", "audio"}, `-hf-part "audio": want one of "text", "indexer", "vision"`},
		{[]string{"-hf-config", filepath.Join(data, "exaone-4.0-32b.json"), "-layer-type", "full_attention"}, `-layer-type "full_attention": these layers use no RoPE (EXAONE 4's global layers`},
	} {
		out := t.TempDir()
		code, stdout, stderr := ropegenRun(t, append(tc.args, "-o", out)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("ropegen %s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("ropegen %s wrote %d files", strings.Join(tc.args, " "), len(ents))
		}
	}
}
