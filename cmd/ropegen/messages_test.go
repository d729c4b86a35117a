package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMessagesQuoteStrings checks that every string value ropegen reports
// is Go-quoted, so that a trailing space is visible: flag values that fail
// to parse, spec values that fail validation, paths and stray arguments.
func TestMessagesQuoteStrings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f ")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"-layout", "neox "}, `ropegen: -layout "neox ": layout must be "interleaved" or "neox"` + "\n"},
		{[]string{"-dtype", "f16 "}, `ropegen: -dtype "f16 ": dtype must be one of "f32", "f64", "f16", "bf16"` + "\n"},
		{[]string{"-out-dtype", "bf16 "}, `ropegen: -out-dtype "bf16 ": "bf16 " is not a cache type: want a comma-separated list of "f32", "f16", "bf16", "e4m3", "e5m2", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4", "int8_per_token_head", "nvfp4_gs" (the KV cache types float32 keys and values are stored as)` + "\n"},
		{[]string{"-scaling", "yarn "}, `ropegen: -scaling "yarn ": scaling must be one of "none", "linear", "ntk", "yarn", "llama3", "longrope", "dynamic", "proportional"` + "\n"},
		{[]string{"-axes", "vision "}, `ropegen: -axes "vision ": axes must be one of "none", "mrope", "mrope-interleaved", "mrope-ernie", "vision", "pixtral"` + "\n"},
		{[]string{"-pkg", "rope "}, `ropegen: -pkg "rope ": package name must be a Go identifier, not a keyword, _ or main` + "\n"},
		{[]string{"-dim", "64 "}, `ropegen: -dim "64 ": want a decimal integer` + "\n"},
		{[]string{"-truncate=yes "}, `ropegen: -truncate "yes ": want true or false (as -flag=value)` + "\n"},
		{[]string{"-dim", "64", "x "}, `ropegen: unexpected argument "x ": ropegen takes flags only (see ropegen -h)` + "\n"},
		{[]string{"-o", file}, `ropegen: -o "` + file + `": not a directory` + "\n"},
		// Numbers that parse but fail validation are shown as numbers.
		{[]string{"-dim", "7"}, "ropegen: -dim 7: head dim must be even, 2…4096\n"},
	} {
		code, stdout, stderr := ropegenRun(t, append([]string{"-o", filepath.Join(dir, "out")}, tc.args...)...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("ropegen %q: exit %d, stdout %q, stderr\n\t%q\nwant exit %d and\n\t%q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
	// -hf-config: the path is quoted whatever LoadHFConfig says after it.
	missing := filepath.Join(dir, "missing.json ")
	code, _, stderr := ropegenRun(t, "-hf-config", missing, "-explain")
	if prefix := `ropegen: -hf-config "` + missing + `": `; code != exitUsage || len(stderr) < len(prefix) || stderr[:len(prefix)] != prefix {
		t.Errorf("-hf-config %q: exit %d, stderr %q, want exit %d and a line beginning %q", missing, code, stderr, exitUsage, prefix)
	}
}
