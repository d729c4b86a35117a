package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// moreFixture is fixture plus the files the extra malformed invocations
// need: malformed and out-of-range configs, and a symlink where a target file
// would go (root/links/rope.go → root/afile) and one as the output directory
// (root/filelink → root/afile).
func moreFixture(t *testing.T) (root, out string) {
	t.Helper()
	root, out = fixture(t)
	llama := func(extra string) string {
		return `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32` + extra + `}`
	}
	for name, data := range map[string]string{
		"empty.json":       "",
		"array.json":       "[]",
		"theta1.json":      llama(`, "rope_theta": 1`),
		"thetabig.json":    llama(`, "rope_theta": 1e999`),
		"thetastr.json":    llama(`, "rope_theta": "10000"`),
		"dynamic.json":     llama(`, "rope_theta": 10000, "rope_scaling": {"rope_type": "dynamic", "factor": 2}`),
		"zeroheads.json":   `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 0, "rope_theta": 10000}`,
		"trailing.json":    llama(`, "rope_theta": 10000`) + "\n{}",
		"partial.json":     llama(`, "rope_theta": 10000, "partial_rotary_factor": 1.5`),
		"ok.json":          llama(`, "rope_theta": 10000`),
		"nullscale.json":   llama(`, "rope_theta": 10000, "rope_scaling": {"rope_type": "llama3", "factor": 8}`),
		"negfactor.json":   llama(`, "rope_theta": 10000, "rope_scaling": {"rope_type": "linear", "factor": -2}`),
		"hugeheaddim.json": `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 1000000, "rope_theta": 10000}`,
	} {
		mustOK(t, os.WriteFile(filepath.Join(root, name), []byte(data), 0o644))
	}
	mustOK(t, os.Mkdir(filepath.Join(root, "links"), 0o777))
	mustOK(t, os.Symlink(filepath.Join(root, "afile"), filepath.Join(root, "links", "rope.go")))
	mustOK(t, os.Symlink(filepath.Join(root, "afile"), filepath.Join(root, "filelink")))
	return root, out
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// moreBadInvocations are malformed invocations beyond TestBadInvocations':
// boundary and overflowing numbers, number syntaxes strconv rejects,
// look-alike characters, case and whitespace in names, every scaling
// parameter missing, unused or out of range, malformed lists and booleans,
// malformed and out-of-range configs, symlinks, and flag syntax. Each exits
// 2 with one line naming the flag (or argument) and the value, prints
// nothing on stdout and changes nothing on disk.
var moreBadInvocations = []struct {
	name string
	args []string // $ROOT is the fixture root; "-o $ROOT/out" comes first
	want []string // strings stderr must hold
}{
	// Head and rotary dimension.
	{"dim 4098", []string{"-dim", "4098"}, []string{"-dim 4098", "4096"}},
	{"dim 1", []string{"-dim", "1"}, []string{"-dim 1", "even"}},
	{"dim empty", []string{"-dim="}, []string{`-dim ""`, "integer"}},
	{"dim with a space", []string{"-dim", " 64"}, []string{`-dim " 64"`, "integer"}},
	{"dim hex", []string{"-dim", "0x40"}, []string{`-dim "0x40"`, "integer"}},
	{"dim arabic digits", []string{"-dim", "٦٤"}, []string{`-dim "٦٤"`, "integer"}},
	{"dim unicode minus", []string{"-dim", "−2"}, []string{`-dim "−2"`, "integer"}},
	{"dim max int", []string{"-dim", "9223372036854775807"}, []string{"-dim 9223372036854775807", "4096"}},
	{"dim min int", []string{"-dim", "-9223372036854775808"}, []string{"-dim -9223372036854775808", "4096"}},
	{"dim a = b", []string{"-dim=64=2"}, []string{`-dim "64=2"`, "integer"}},
	{"dim 5000 digits", []string{"-dim", strings.Repeat("9", 5000)}, []string{`-dim "999999`, "out of range"}},
	{"dim last one odd", []string{"-dim", "64", "-dim", "7"}, []string{"-dim 7"}},
	{"rotary above default dim", []string{"-rotary-dim", "130"}, []string{"-rotary-dim 130", "128"}},
	{"rotary hex", []string{"-rotary-dim", "0x2"}, []string{`-rotary-dim "0x2"`, "integer"}},
	{"rotary min int", []string{"-rotary-dim", "-9223372036854775808"}, []string{"-rotary-dim -9223372036854775808"}},
	// Base.
	{"base hex float below 1", []string{"-base", "0x1p-2"}, []string{"-base", "> 1"}},
	{"base underflowing", []string{"-base", "1e-400"}, []string{"-base", "> 1"}},
	{"base -Inf", []string{"-base", "-Inf"}, []string{"-base -Inf", "finite"}},
	{"base empty", []string{"-base="}, []string{`-base ""`, "number"}},
	{"base trailing junk", []string{"-base", "10000x"}, []string{`-base "10000x"`, "number"}},
	// Types and layout: case, whitespace, combinations.
	{"dtype upper case", []string{"-dtype", "F32"}, []string{`-dtype "F32"`, "f32"}},
	{"dtype empty", []string{"-dtype", ""}, []string{`-dtype ""`}},
	{"dtype leading space", []string{"-dtype", " f32"}, []string{"-dtype", `"f32", "f64"`}},
	{"out dtype with f16", []string{"-dtype", "f16", "-out-dtype", "f16"}, []string{`-out-dtype "f16"`, "f32"}},
	{"out dtype with bf16", []string{"-dtype", "bf16", "-out-dtype", "bf16"}, []string{`-out-dtype "bf16"`, "f32"}},
	{"out dtype with f64", []string{"-dtype", "f64", "-out-dtype", "bf16"}, []string{`-out-dtype "bf16"`, "f32"}},
	{"out dtype upper case", []string{"-out-dtype", "F16"}, []string{`-out-dtype "F16"`}},
	{"out dtype f64", []string{"-out-dtype", "f64"}, []string{`-out-dtype "f64"`, `"f32", "f16", "bf16", "e4m3", "e5m2", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4", "int8_per_token_head", "nvfp4_gs"`}},
	{"out dtype listed twice", []string{"-out-dtype", "f16,q8_0,f16"}, []string{`-out-dtype "f16,q8_0,f16"`, `"f16" listed twice`}},
	{"out dtype empty list entry", []string{"-out-dtype", "f16,"}, []string{`-out-dtype "f16,"`, `"" is not a cache type`}},
	{"q8_0 with a head dim not a multiple of 32", []string{"-dim", "48", "-out-dtype", "q8_0"}, []string{`-dim 48`, `-out-dtype "q8_0"`, "multiple of 32"}},
	{"nvfp4 with a head dim not a multiple of 64", []string{"-dim", "96", "-out-dtype", "f16,nvfp4"}, []string{`-dim 96`, `-out-dtype "f16,nvfp4"`, "multiple of 64"}},
	{"int8_per_token_head with a head dim not a multiple of 32", []string{"-dim", "80", "-out-dtype", "int8_per_token_head"}, []string{`-dim 80`, `-out-dtype "int8_per_token_head"`, "multiple of 32"}},
	{"nvfp4_gs with a head dim not a multiple of 32", []string{"-dim", "80", "-out-dtype", "nvfp4_gs"}, []string{`-dim 80`, `-out-dtype "nvfp4_gs"`, "multiple of 32"}},
	{"layout upper case", []string{"-layout", "NEOX"}, []string{`-layout "NEOX"`, "neox"}},
	{"layout empty", []string{"-layout", ""}, []string{`-layout ""`}},
	{"layout trailing tab", []string{"-layout", "neox\t"}, []string{"-layout", `"interleaved" or "neox"`}},
	// Package name.
	{"package with a space", []string{"-pkg", "ro pe"}, []string{`-pkg "ro pe"`, "identifier"}},
	{"package with a newline", []string{"-pkg", "rope\n"}, []string{`-pkg "rope\n"`, "identifier"}},
	{"package with a dot", []string{"-pkg", "a.b"}, []string{`-pkg "a.b"`, "identifier"}},
	{"package is a number", []string{"-pkg", "1"}, []string{`-pkg "1"`, "identifier"}},
	{"package is if", []string{"-pkg", "if"}, []string{`-pkg "if"`, "keyword"}},
	// Scaling: names, missing, unused and out-of-range parameters.
	{"scaling capitalised", []string{"-scaling", "Linear", "-factor", "2"}, []string{`-scaling "Linear"`, "linear"}},
	{"linear without factor", []string{"-scaling", "linear"}, []string{`-scaling "linear"`, "needs -factor"}},
	{"factor Inf", []string{"-scaling", "linear", "-factor", "Inf"}, []string{"-factor +Inf", "finite"}},
	{"factor NaN", []string{"-scaling", "linear", "-factor", "NaN"}, []string{"-factor NaN", "finite"}},
	{"factor without scaling", []string{"-factor", "4"}, []string{"-factor 4", "does not use"}},
	{"orig-ctx without scaling", []string{"-orig-ctx", "5"}, []string{"-orig-ctx 5", "does not use"}},
	{"low-freq-factor without scaling", []string{"-low-freq-factor", "1"}, []string{"-low-freq-factor 1", "llama3"}},
	{"mscale-all-dim without scaling", []string{"-mscale-all-dim", "1"}, []string{"-mscale-all-dim 1", "yarn"}},
	{"yarn without factor", []string{"-scaling", "yarn"}, []string{`-scaling "yarn"`, "needs -factor"}},
	{"yarn without orig-ctx", []string{"-scaling", "yarn", "-factor", "4"}, []string{`-scaling "yarn"`, "needs -orig-ctx", "original context"}},
	{"yarn negative orig-ctx", []string{"-scaling", "yarn", "-factor", "4", "-orig-ctx", "-5"}, []string{"-orig-ctx -5"}},
	{"yarn negative attn-factor", []string{"-scaling", "yarn", "-factor", "4", "-orig-ctx", "4096", "-attn-factor", "-1"}, []string{"-attn-factor -1", "> 0"}},
	{"yarn mscale alone", []string{"-scaling", "yarn", "-factor", "4", "-orig-ctx", "4096", "-mscale", "1"}, []string{"-mscale 1", "-mscale-all-dim"}},
	{"yarn mscale-all-dim alone", []string{"-scaling", "yarn", "-factor", "4", "-orig-ctx", "4096", "-mscale-all-dim", "1"}, []string{"-mscale-all-dim 1", "-mscale"}},
	{"yarn betas crossed", []string{"-scaling", "yarn", "-factor", "4", "-orig-ctx", "4096", "-beta-fast", "1", "-beta-slow", "32"}, []string{"-beta-fast 1", "β_slow"}},
	{"llama3 without bands", []string{"-scaling", "llama3", "-factor", "8", "-orig-ctx", "8192"}, []string{`-scaling "llama3"`, "needs -low-freq-factor"}},
	{"llama3 bands crossed", []string{"-scaling", "llama3", "-factor", "8", "-orig-ctx", "8192", "-low-freq-factor", "4", "-high-freq-factor", "1"}, []string{"-low-freq-factor 4", "-high-freq-factor"}},
	{"longrope without factor", []string{"-dim", "4", "-scaling", "longrope", "-short-factor", "1,1", "-long-factor", "1,1", "-orig-ctx", "100"}, []string{"-factor 0", "longrope"}},
	{"ntk base overflows", []string{"-dim", "4", "-scaling", "ntk", "-factor", "1e300"}, []string{"-factor 1e+300", "finite"}},
	{"ntk rotary 2", []string{"-dim", "4", "-rotary-dim", "2", "-scaling", "ntk", "-factor", "2"}, []string{`-scaling "ntk"`, "at least 4"}},
	{"freq-factors zero", []string{"-dim", "8", "-freq-factors", "0,1,1,1"}, []string{"-freq-factors 0", "value 1 of 4"}},
	{"freq-factors NaN", []string{"-dim", "8", "-freq-factors", "1,NaN,1,1"}, []string{"-freq-factors NaN", "value 2 of 4"}},
	// Lists and booleans.
	{"list of one comma", []string{"-freq-factors", ","}, []string{`-freq-factors ","`, "element 1"}},
	{"list with semicolons", []string{"-short-factor", "1;2"}, []string{`-short-factor "1;2"`, `"1;2"`}},
	{"list with spaces only", []string{"-long-factor", "1 2"}, []string{"-long-factor", `"1 2"`}},
	{"tests=maybe", []string{"-tests=maybe"}, []string{`-tests "maybe"`, "true or false"}},
	{"explain=2", []string{"-explain=2"}, []string{`-explain "2"`, "true or false"}},
	{"truncate=yes", []string{"-truncate=yes"}, []string{`-truncate "yes"`, "true or false"}},
	// Configs.
	{"empty config", []string{"-hf-config", "$ROOT/empty.json"}, []string{"-hf-config", "empty.json", "empty"}},
	{"config is an array", []string{"-hf-config", "$ROOT/array.json"}, []string{"-hf-config", "array.json", "object"}},
	{"config base 1", []string{"-hf-config", "$ROOT/theta1.json"}, []string{"-hf-config", "theta1.json", "-base 1"}},
	{"config base overflows", []string{"-hf-config", "$ROOT/thetabig.json"}, []string{"-hf-config", "thetabig.json", "rope_theta"}},
	{"config base is a string", []string{"-hf-config", "$ROOT/thetastr.json"}, []string{"-hf-config", "thetastr.json", "rope_theta"}},
	{"config dynamic ntk", []string{"-hf-config", "$ROOT/dynamic.json"}, []string{"-hf-config", "dynamic.json", "dynamic"}},
	{"config zero heads", []string{"-hf-config", "$ROOT/zeroheads.json"}, []string{"-hf-config", "zeroheads.json", "num_attention_heads"}},
	{"config trailing data", []string{"-hf-config", "$ROOT/trailing.json"}, []string{"-hf-config", "trailing.json"}},
	{"config partial rotary 1.5", []string{"-hf-config", "$ROOT/partial.json"}, []string{"-hf-config", "partial.json", "partial_rotary_factor"}},
	{"config llama3 incomplete", []string{"-hf-config", "$ROOT/nullscale.json"}, []string{"-hf-config", "nullscale.json"}},
	{"config negative factor", []string{"-hf-config", "$ROOT/negfactor.json"}, []string{"-hf-config", "negfactor.json", "factor"}},
	{"config huge head dim", []string{"-hf-config", "$ROOT/hugeheaddim.json"}, []string{"-hf-config", "hugeheaddim.json"}},
	{"good config, bad flag", []string{"-hf-config", "$ROOT/ok.json", "-dim", "7"}, []string{"-dim 7", "even"}},
	{"config path with a newline", []string{"-hf-config", "$ROOT/no\nsuch.json"}, []string{"-hf-config", "such.json"}},
	// -engine and its flags.
	{"engine without shapes", []string{"-engine"}, []string{"-engine", "no shapes", "-shape"}},
	{"engine shape of two fields", []string{"-engine", "-shape", "128,64"}, []string{`-shape "128,64"`, "HEAD,ROTARY,LAYOUT"}},
	{"engine shape rotary above head", []string{"-engine", "-shape", "128,130,neox"}, []string{`-shape "128,130,neox"`, "rotary dim 130"}},
	{"engine shape odd head", []string{"-engine", "-shape", "7,6,neox"}, []string{`-shape "7,6,neox"`, "head dim 7"}},
	{"engine shape layout upper case", []string{"-engine", "-shape", "128,128,NEOX"}, []string{`-shape "128,128,NEOX"`, "layout"}},
	{"engine shape not numbers", []string{"-engine", "-shape", "x,64,neox"}, []string{`-shape "x,64,neox"`, "HEAD,ROTARY,LAYOUT"}},
	{"engine bad norm kind", []string{"-engine", "-shape", "128,128,neox,rmsnorm/head"}, []string{`-shape "128,128,neox,rmsnorm/head"`, `norm "rmsnorm/head"`, "KIND/SCOPE"}},
	{"engine bad norm suffix", []string{"-engine", "-shape", "128,128,neox,rms/head/before"}, []string{`-shape "128,128,neox,rms/head/before"`, "after"}},
	{"engine norm listed twice", []string{"-engine", "-shape", "128,128,neox,rms/head,rms/head"}, []string{`-shape "128,128,neox,rms/head,rms/head"`, "twice"}},
	{"engine token norm on an odd shape", []string{"-engine", "-shape", "6,6,neox,rms/token,rms/head"}, []string{`-shape "6,6,neox,rms/token,rms/head"`, `norm "rms/token"`}},
	{"engine shape with spaces", []string{"-engine", "-shape", "128, 128, neox"}, []string{`-shape "128, 128, neox"`, "HEAD,ROTARY,LAYOUT"}},
	{"engine with a spec flag", []string{"-engine", "-shape", "128,128,neox", "-base", "500000"}, []string{"-base", "not with -engine"}},
	{"engine with f64 caches", []string{"-engine", "-shape", "128,128,neox", "-dtype", "f64", "-out-dtype", "f16"}, []string{`-out-dtype "f16"`, `-dtype "f64"`, "f32"}},
	{"engine cache type unknown", []string{"-engine", "-shape", "128,128,neox", "-out-dtype", "f16,fp8"}, []string{`-out-dtype "f16,fp8"`, `"fp8" is not a cache type`}},
	{"engine config missing", []string{"-engine", "-hf-config", "$ROOT/nosuch.json"}, []string{"-hf-config", "nosuch.json"}},
	{"engine gguf missing", []string{"-engine", "-gguf", "$ROOT/nosuch.gguf"}, []string{"-gguf", "nosuch.gguf"}},
	{"shape without engine", []string{"-shape", "128,128,neox"}, []string{"-shape", "only with -engine"}},
	{"shape norms flag gone", []string{"-engine", "-shape", "128,128,neox", "-shape-norms", "rms/head"}, []string{"-shape-norms"}},
	{"two configs without engine", []string{"-hf-config", "$ROOT/ok.json", "-hf-config", "$ROOT/ok.json"}, []string{"-hf-config given 2 times", "-engine"}},
	// Output and arguments.
	{"output is a symlink to a file", []string{"-o", "$ROOT/filelink"}, []string{"-o", "filelink", "not a directory"}},
	{"target is a symlink", []string{"-o", "$ROOT/links"}, []string{"-o", "links", "not a regular file"}},
	{"output is a hand-written file", []string{"-o", "$ROOT/out/keep.txt"}, []string{"-o", "keep.txt", "not a directory"}},
	{"output flag without value", []string{"-o"}, []string{"-o", "needs a value"}},
	{"lone dash", []string{"-"}, []string{`unexpected argument "-"`}},
	{"dash equals", []string{"-=x"}, []string{"-=x", "syntax"}},
}

// TestBadInvocationsMore runs moreBadInvocations as TestBadInvocations runs
// its cases.
func TestBadInvocationsMore(t *testing.T) {
	t.Logf("%d more malformed invocations", len(moreBadInvocations))
	for _, tc := range moreBadInvocations {
		t.Run(tc.name, func(t *testing.T) {
			root, out := moreFixture(t)
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
				t.Errorf("ropegen %q: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
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

// TestDeterministicAcrossDirs: the same command run in two different
// directories (with relative paths, as go:generate runs it) writes identical
// bytes, and nothing in the output depends on where or when it ran: no
// absolute path (the directories, the temp dir, /tmp, /work, the home
// directory), no host or user name, no date or time.
func TestDeterministicAcrossDirs(t *testing.T) {
	cfg := `{"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32, "rope_theta": 500000,
	"rope_scaling": {"rope_type": "llama3", "factor": 32, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}}`
	commands := [][]string{
		{"-o", "out", "-tests"},
		{"-o", "out", "-dim", "64", "-dtype", "f16", "-layout", "neox", "-tests"},
		{"-o", "sub/out", "-dim", "96", "-rotary-dim", "64", "-out-dtype", "bf16", "-tests", "-pkg", "kv"},
		{"-o", "out", "-dim", "80", "-dtype", "f64", "-scaling", "yarn", "-factor", "4", "-orig-ctx", "4096", "-tests"},
		{"-o", "out", "-hf-config", "config.json", "-tests"},
	}
	if testing.Short() {
		commands = commands[:2]
	}
	host, _ := os.Hostname()
	home, _ := os.UserHomeDir()
	user := os.Getenv("USER")
	now := time.Now()
	forbidden := []string{"/tmp", "/work", os.TempDir(), filepath.Dir(t.TempDir())}
	if home != "" && home != "/" {
		forbidden = append(forbidden, home)
	}
	words := []string{now.Month().String(), now.Weekday().String()}
	if host != "" {
		words = append(words, host)
	}
	if len(user) > 2 {
		words = append(words, user)
	}
	years := regexp.MustCompile(`(^|[^0-9.eE+-])(` + strconv.Itoa(now.Year()) + `|` + strconv.Itoa(now.Year()-1) + `)([^0-9.eE]|$)`)
	clock := regexp.MustCompile(`\b\d{1,2}:\d{2}(:\d{2})?\b|\b\d{4}-\d{2}-\d{2}\b`)
	for _, args := range commands {
		var runs [2]map[string]string
		var dirs [2]string
		for i := range runs {
			dirs[i] = t.TempDir()
			mustOK(t, os.WriteFile(filepath.Join(dirs[i], "config.json"), []byte(cfg), 0o644))
			t.Chdir(dirs[i])
			code, stdout, stderr := ropegenRun(t, args...)
			if code != 0 || stdout != "" || stderr != "" {
				t.Fatalf("ropegen %s in %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), dirs[i], code, stdout, stderr)
			}
			out := args[slices.Index(args, "-o")+1]
			runs[i] = snapshot(t, out)
		}
		if d := diffSnapshots(runs[0], runs[1]); len(d) > 0 {
			t.Errorf("ropegen %s: the run in %s and the run in %s differ: %v", strings.Join(args, " "), dirs[0], dirs[1], d)
		}
		for name, content := range runs[0] {
			if strings.HasPrefix(content, "d") {
				continue // a directory
			}
			for _, s := range append(forbidden, dirs[:]...) {
				if s != "" && strings.Contains(content, s) {
					t.Errorf("ropegen %s: %s contains the path %q", strings.Join(args, " "), name, s)
				}
			}
			for _, w := range words {
				if regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(content) {
					t.Errorf("ropegen %s: %s contains %q (host, user or date)", strings.Join(args, " "), name, w)
				}
			}
			if m := years.FindString(content); m != "" {
				t.Errorf("ropegen %s: %s contains a year: %q", strings.Join(args, " "), name, m)
			}
			if m := clock.FindString(content); m != "" {
				t.Errorf("ropegen %s: %s contains a time or date: %q", strings.Join(args, " "), name, m)
			}
			if !bytes.HasPrefix([]byte(content[strings.IndexByte(content, ' ')+1:]), []byte(`// Code generated by "ropegen `+strings.Join(args, " ")+`"; DO NOT EDIT.`)) {
				t.Errorf("ropegen %s: %s does not begin with the header of the command as typed", strings.Join(args, " "), name)
			}
		}
		if len(runs[0]) < 6 {
			t.Errorf("ropegen %s: only %d entries written: %v", strings.Join(args, " "), len(runs[0]), runs[0])
		}
	}
}
