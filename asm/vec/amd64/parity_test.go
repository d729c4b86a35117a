package amd64

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	old "github.com/ropegen/ropegen/asm/amd64"
	"github.com/ropegen/ropegen/asm/vec"
)

// The parity check of issue 25: for the same shapes, the kernels this
// target emits against the ones asm/amd64 (the emitter it replaces) emits,
// instruction class by class, function by function. A class may not grow.
// ROPEGEN_PARITY=1 prints the table.

// class sorts one instruction line into the classes the comparison counts.
func class(ins string) []string {
	f := strings.Fields(ins)
	if len(f) == 0 {
		return nil
	}
	op, args := f[0], strings.Join(f[1:], " ")
	ops := strings.Split(args, ", ")
	var cs []string
	mem := func(s string) bool { return strings.Contains(s, "(") }
	if len(ops) > 0 && mem(ops[len(ops)-1]) && !strings.HasPrefix(op, "CMP") && !strings.HasPrefix(op, "LEA") {
		cs = append(cs, "store")
	}
	for _, o := range ops[:max(0, len(ops)-1)] {
		if mem(o) && !strings.HasPrefix(op, "LEA") {
			cs = append(cs, "load")
		}
	}
	switch {
	case !strings.HasPrefix(op, "V") && !strings.HasPrefix(op, "K"):
		cs = append(cs, "scalar")
	case regexp.MustCompile(`^V(MUL|FMADD|DIV|SQRT)`).MatchString(op):
		cs = append(cs, "mul")
	case regexp.MustCompile(`^V(ADD|SUB)[PS][SD]`).MatchString(op):
		cs = append(cs, "add")
	case regexp.MustCompile(`^V(CVT|PMOV[ZS]X|PMOVD|PMOVQ)`).MatchString(op):
		cs = append(cs, "convert")
	case regexp.MustCompile(`^V(PERM|SHUF|PSHUF|EXTRACT|INSERT|UNPCK|PUNPCK|PACK|PBROADCAST|BROADCAST|PEXTR)`).MatchString(op):
		cs = append(cs, "shuffle")
	case regexp.MustCompile(`^VMOV`).MatchString(op):
		cs = append(cs, "move")
	default:
		cs = append(cs, "other")
	}
	return cs
}

// counts are a function's instruction classes inside its loops (the work
// per head or block), the instructions outside them (once a call), and its
// conditional branches.
type counts struct {
	n           map[string]int
	once, loops int
}

var classes = []string{"load", "store", "mul", "add", "shuffle", "convert", "move", "other", "scalar"}

func countFuncs(asm []byte) map[string]*counts {
	fs := map[string]*counts{}
	var name string
	var lines []string
	flush := func() {
		if name == "" {
			return
		}
		// An instruction is in a loop when a later branch goes back to a
		// label before it.
		label := map[string]int{}
		inLoop := make([]bool, len(lines))
		for i, l := range lines {
			if strings.HasSuffix(l, ":") {
				label[strings.TrimSuffix(l, ":")] = i
			}
			if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[0], "J") {
				if j, ok := label[f[1]]; ok {
					for k := j; k <= i; k++ {
						inLoop[k] = true
					}
				}
			}
		}
		c := &counts{n: map[string]int{}}
		for i, l := range lines {
			switch {
			case strings.HasSuffix(l, ":"):
			case !inLoop[i]:
				c.once++
			default:
				if strings.HasPrefix(l, "J") && !strings.HasPrefix(l, "JMP") {
					c.loops++
				}
				for _, cl := range class(l) {
					c.n[cl]++
				}
			}
		}
		fs[name] = c
	}
	for _, l := range strings.Split(string(asm), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "TEXT "):
			flush()
			name = strings.TrimPrefix(strings.Fields(t)[1], "·")
			name, lines = name[:strings.Index(name, "(")], nil
		case strings.HasPrefix(t, "DATA") || strings.HasPrefix(t, "GLOBL"):
			flush()
			name = ""
		case name == "" || t == "" || strings.HasPrefix(t, "//"):
		default:
			lines = append(lines, t)
		}
	}
	flush()
	return fs
}

// oldNames maps asm/amd64's names (level stripped) to the kinds here.
var oldNames = map[string]vec.Kind{
	"apply": vec.Fwd, "applyInverse": vec.Inv, "applyRows": vec.FwdRows, "applyInverseRows": vec.InvRows,
	"applyTo": vec.To, "applyNorm": vec.Norm, "applyNormOnly": vec.NormOnly, "fill": vec.Fill,
	"cacheStore": vec.Store, "cacheStoreShift": vec.StoreShift, "cacheLoad": vec.Load, "cacheLoadShift": vec.LoadShift,
	"cacheShift": vec.Shift, "cacheShiftInverse": vec.ShiftInv, "cacheRotTo": vec.RotTo,
}

type parityCase struct {
	shape vec.Shape
	x     vec.Elem
	to    vec.Elem // "to" kernels' type
	norm  *vec.NormVariant
	cache vec.Elem
}

func (p parityCase) String() string {
	s := p.shape.Suffix() + " " + p.x.Name
	if p.to != (vec.Elem{}) {
		s += "→" + p.to.Name
	}
	if p.norm != nil {
		s += " " + p.norm.String()
	}
	if p.cache != (vec.Elem{}) {
		s += " cache " + p.cache.Name
	}
	return s
}

// emitBoth returns both emitters' functions for p, by new name.
func emitBoth(t *testing.T, p parityCase) (olds, news map[string]*counts) {
	s := p.shape
	k := old.Kernel{HeadDim: s.HeadDim, RotaryDim: s.RotaryDim, NeoX: s.NeoX, DType: p.x.Name, OutDType: p.to.Name}
	var fs []*vec.Func
	add := func(kind vec.Kind, f vec.Func) {
		f.Kind, f.Shape = kind, s
		fs = append(fs, &f)
	}
	var oldAsm []byte
	if p.cache == (vec.Elem{}) {
		for _, kind := range []vec.Kind{vec.Fwd, vec.Inv, vec.FwdRows, vec.InvRows, vec.Fill} {
			add(kind, vec.Func{X: p.x})
		}
		if p.to != (vec.Elem{}) {
			add(vec.To, vec.Func{X: p.x, Cache: p.to})
		}
		if p.norm != nil {
			k.Norm = &old.Norm{Kind: p.norm.Kind, Eps: 1e-6, Token: p.norm.Token, After: p.norm.After}
			add(vec.Norm, vec.Func{X: p.x, Norm: *p.norm})
			add(vec.NormOnly, vec.Func{X: p.x, Norm: *p.norm})
		}
		out, err := old.Generate(k, "// old", "amd64,!purego")
		if err != nil {
			t.Fatal(err)
		}
		oldAsm = out.Asm
	} else {
		shift := s.RotaryDim
		if p.cache == vec.Q8 {
			shift = (shift + 31) / 32 * 32
		}
		out, err := old.GenerateCache(old.CacheKernel{Kernel: k, Cache: p.cache.Name, ShiftValues: shift}, "// old", "amd64,!purego")
		if err != nil {
			t.Fatal(err)
		}
		oldAsm = out.Asm
		for _, kind := range []vec.Kind{vec.Store, vec.Load} {
			add(kind, vec.Func{X: vec.F32, Cache: p.cache})
			if shift != s.HeadDim {
				add(kind+"Shift", vec.Func{X: vec.F32, Cache: p.cache})
			}
		}
		if p.cache == vec.F16 || p.cache == vec.BF16 {
			add(vec.Shift, vec.Func{X: vec.F32, Cache: p.cache})
			add(vec.ShiftInv, vec.Func{X: vec.F32, Cache: p.cache})
		} else {
			add(vec.RotTo, vec.Func{X: vec.F32})
		}
	}
	asm, _, err := Generate(fs, "// new", "amd64,!purego")
	if err != nil {
		t.Fatal(err)
	}
	news = countFuncs(asm)
	olds = map[string]*counts{}
	for name, c := range countFuncs(oldAsm) {
		for _, l := range Levels {
			base, ok := strings.CutSuffix(name, strings.ToUpper(l.Name))
			if !ok {
				continue
			}
			kind, ok := oldNames[base]
			if !ok {
				t.Fatalf("old function %s: no kind", name)
			}
			f := vec.Func{Kind: kind, Shape: s, X: p.x, Level: l.Name}
			switch {
			case kind == vec.Norm || kind == vec.NormOnly:
				f.Norm = *p.norm
			case kind == vec.To:
				f.Cache = p.to
			case p.cache != (vec.Elem{}) && kind != vec.RotTo:
				f.Cache = p.cache
			}
			olds[f.Name()] = c
		}
	}
	return olds, news
}

var parityCases = func() []parityCase {
	n := func(kind string, token, after bool) *vec.NormVariant {
		return &vec.NormVariant{Kind: kind, Token: token, After: after}
	}
	sh := func(h, r int, neox bool) vec.Shape { return vec.Shape{HeadDim: h, RotaryDim: r, NeoX: neox} }
	return []parityCase{
		{shape: sh(128, 128, true), x: vec.F32},
		{shape: sh(128, 128, false), x: vec.F32},
		{shape: sh(64, 64, true), x: vec.F32},
		{shape: sh(128, 64, false), x: vec.F32, to: vec.F16},
		{shape: sh(128, 128, true), x: vec.F32, to: vec.BF16},
		{shape: sh(80, 32, true), x: vec.F32},
		{shape: sh(128, 128, true), x: vec.F64},
		{shape: sh(128, 128, false), x: vec.F16},
		{shape: sh(96, 96, true), x: vec.BF16},
		{shape: sh(512, 512, true), x: vec.F32},
		{shape: sh(576, 576, false), x: vec.F32, to: vec.F16},
		{shape: sh(128, 128, true), x: vec.F32, norm: n("rms", false, false)},
		{shape: sh(128, 128, false), x: vec.F32, norm: n("gemma", false, false)},
		{shape: sh(128, 128, true), x: vec.F32, norm: n("l2", false, true)},
		{shape: sh(128, 128, true), x: vec.F32, norm: n("rms", true, false)},
		{shape: sh(128, 64, false), x: vec.F32, norm: n("rms", true, true)},
		{shape: sh(128, 128, true), x: vec.BF16, norm: n("rms", false, false)},
		{shape: sh(128, 128, true), x: vec.F64, norm: n("gemma", false, true)},
		{shape: sh(512, 512, true), x: vec.F32, norm: n("rms", false, false)},
		{shape: sh(128, 128, true), x: vec.F32, cache: vec.F16},
		{shape: sh(128, 128, false), x: vec.F32, cache: vec.BF16},
		{shape: sh(128, 64, true), x: vec.F32, cache: vec.E4M3},
		{shape: sh(128, 128, true), x: vec.F32, cache: vec.Q8},
		{shape: sh(96, 64, true), x: vec.F32, cache: vec.Q8},
	}
}()

func TestParity(t *testing.T) {
	var table []string
	for _, p := range parityCases {
		olds, news := emitBoth(t, p)
		var names []string
		for name := range olds {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			o, n := olds[name], news[name]
			if n == nil {
				t.Errorf("%v: %s: not emitted", p, name)
				continue
			}
			row := fmt.Sprintf("| %s | %s |", p, name)
			for _, c := range classes {
				row += fmt.Sprintf(" %d → %d |", o.n[c], n.n[c])
				// A register move may replace a broadcast: those two together.
				on, nn := o.n[c], n.n[c]
				if c == "shuffle" || c == "move" {
					on, nn = o.n["shuffle"]+o.n["move"], n.n["shuffle"]+n.n["move"]
				}
				if nn > on && c != "scalar" {
					t.Errorf("%v: %s: %s %d → %d", p, name, c, o.n[c], n.n[c])
				}
			}
			row += fmt.Sprintf(" %d → %d | %d → %d |", o.loops, n.loops, o.once, n.once)
			table = append(table, row)
		}
	}
	if os.Getenv("ROPEGEN_PARITY") != "" {
		fmt.Println("| case | function | " + strings.Join(classes, " | ") + " | branches | once |")
		fmt.Println(strings.Join(table, "\n"))
	}
}
