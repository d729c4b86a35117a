// Package templates holds the text/template sources from which ropegen
// writes its arm64 files, and [Kernel], the documented data they execute
// with: the template contract.
//
// The templates are embedded (see [FS] and [Names]) and run with [Execute],
// which gives them the NEON encoder's functions ([neon.Emitter.FuncMap]:
// fmul, fadd, fsub, …, each printing one `WORD $0x… // mnemonic` line) plus
// the helpers listed in [Helpers], and which fails if any encoder call
// rejected an operand. Everything a template prints is decided by the
// Kernel: the generator (gen.Plan → Kernel) makes every choice — the block
// plan, the registers, the byte offsets — and the templates only spell the
// instructions. See README.md for the walk-through.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"math/bits"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/ropegen/ropegen/asm/neon"
)

// FS holds the templates, one file per generated file, named after it with
// ".tmpl" appended: "rope_arm64.s.tmpl", "rope_arm64.go.tmpl"; and
// "norm_arm64.s.tmpl", the QK-norm kernel, which gen writes as
// rope_norm_arm64.s.
//
//go:embed *.tmpl
var FS embed.FS

// Ext is the extension of every template file.
const Ext = ".tmpl"

// Names returns the names of the embedded templates, sorted.
func Names() []string {
	names, err := fs.Glob(FS, "*"+Ext)
	if err != nil {
		panic("templates: " + err.Error()) // the pattern is constant and valid
	}
	sort.Strings(names)
	return names
}

// Source returns the text of the named template, or an error naming the
// templates there are.
func Source(name string) (string, error) {
	b, err := FS.ReadFile(name)
	if err != nil || path.Ext(name) != Ext {
		return "", fmt.Errorf("templates: no template %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return string(b), nil
}

// Helper is a function a template can call, besides the NEON encoder's.
type Helper struct {
	Name        string
	Description string
	Func        any
}

// Helpers lists the functions every template gets in addition to the encoder
// functions of [neon.Emitter.FuncMap].
var Helpers = []Helper{
	{
		Name:        "vlist",
		Description: "Go register list: vlist \"S4\" 3 4 and vlist \"S4\" (a []int{3, 4}) are both `[V3.S4, V4.S4]`.",
		Func:        vlist,
	},
	{
		Name:        "sub",
		Description: "Integer subtraction: sub a b is a−b.",
		Func:        func(a, b int) int { return a - b },
	},
	{
		Name:        "pass",
		Description: "A sub-template's argument in norm_arm64.s.tmpl: pass n \"1\" has .N = n, .L = \"1\" (a label suffix), .S = false.",
		Func:        func(n *Norm, l string) normPass { return normPass{N: n, L: l} },
	},
	{
		Name:        "passStore",
		Description: "pass with .S = true: the norm's scale pass stores into x, narrowed.",
		Func:        func(n *Norm, l string) normPass { return normPass{N: n, L: l, S: true} },
	},
	{
		Name:        "fn",
		Description: "The argument of norm_arm64.s.tmpl's func: fn n only has .N = n, .O = only (the norm alone, no rotation).",
		Func:        func(n *Norm, only bool) normPass { return normPass{N: n, O: only} },
	},
	{
		Name:        "log2",
		Description: "log2 n of a power of two n (an element size): 1, 2 or 3.",
		Func:        func(n int) int { return bits.TrailingZeros(uint(n)) },
	},
	{
		Name:        "tailAccs",
		Description: "The partial-sum registers a float64 norm's last t values (t even, < 8) go to: 24, 25, 26 in turn, t/2 of them.",
		Func:        func(t int) []int { return []int{24, 25, 26}[:t/2] },
	},
	{
		Name:        "seq",
		Description: "The integers 0…n−1: range seq 8 walks the registers V0…V7 (the cache templates).",
		Func:        seq,
	},
	{
		Name:        "add",
		Description: "Integer addition: add a b is a+b (a register or an offset from a base).",
		Func:        func(a, b int) int { return a + b },
	},
	{
		Name:        "mod2",
		Description: "Integer remainder: mod2 a is a%2; the cache templates pick the low or the high half (FCVTN or FCVTN2, …) with it.",
		Func:        func(a int) int { return a % 2 },
	},
	{
		Name:        "half",
		Description: "Integer halving: half a is a/2, rounded toward zero.",
		Func:        func(a int) int { return a / 2 },
	},
	{
		Name:        "chunk",
		Description: "A CacheChunk of cache_arm64.s.tmpl: chunk values k has .Values = values and the constants' registers .K = k.",
		Func:        func(values int, k CacheConsts) CacheChunk { return CacheChunk{values, k} },
	},
	{
		Name:        "args",
		Description: "The argument of cache_arm64.s.tmpl's chunk sub-template: args name c has .Name = name (the function) and .C = c (a chunk).",
		Func:        func(name string, c CacheChunk) cacheArgs { return cacheArgs{name, c} },
	},
	{
		Name:        "fail",
		Description: "Stops the template with an error: fail \"what\" value, for a Kernel value no branch spells.",
		Func:        func(msg string, v any) (string, error) { return "", fmt.Errorf("%s %q", msg, fmt.Sprint(v)) },
	},
}

// seq returns 0, 1, …, n−1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// vlist spells a Go register list; regs are ints or []ints.
func vlist(arr string, regs ...any) (string, error) {
	var s []string
	add := func(r int) { s = append(s, fmt.Sprintf("V%d.%s", r, arr)) }
	for _, r := range regs {
		switch r := r.(type) {
		case int:
			add(r)
		case []int:
			for _, x := range r {
				add(x)
			}
		default:
			return "", fmt.Errorf("vlist: register %v is a %T, want int or []int", r, r)
		}
	}
	return "[" + strings.Join(s, ", ") + "]", nil
}

// normPass is a sub-template argument of norm_arm64.s.tmpl (helpers pass
// and passStore).
type normPass struct {
	N *Norm
	L string
	S bool
	O bool
}

// ExecuteNorm runs norm_arm64.s.tmpl with n, as Execute runs the kernel
// templates.
func ExecuteNorm(n *Norm) ([]byte, error) { return execute("norm_arm64.s.tmpl", n) }

// Execute runs the named template with k and returns its output. It fails
// if the template does not parse or run, or if any encoder function was
// given an operand its instruction does not accept (the first such error,
// e.g. "neon: fmul: operand Vm = 32 out of range (accepted 0..31)"); then no
// output is returned.
func Execute(name string, k *Kernel) ([]byte, error) { return execute(name, k) }

// execute runs the named template with data.
func execute(name string, data any) ([]byte, error) {
	src, err := Source(name)
	if err != nil {
		return nil, err
	}
	var e neon.Emitter
	fm := e.FuncMap()
	for _, f := range Helpers {
		fm[f.Name] = f.Func
	}
	t, err := template.New(name).Funcs(fm).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	return b.Bytes(), nil
}
