package gen

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

var golden = flag.Bool("golden", false, "rewrite testdata/golden/*.s with the generator's output")

func neonSpec(dim, rotary int, layout string) spec.Spec {
	s := spec.DefaultSpec()
	s.HeadDim, s.RotaryDim, s.Layout = dim, rotary, layout
	return s
}

// neonGolden are the specs whose rope_arm64.s is kept in testdata/golden:
// float32 tails of both widths (6/6), every tail with neox (64/46), and a
// row too big for the registers, so that part of the table is loaded every
// head (128/128); f64's 2D blocks and scalar tail (10/10 neox); f16's
// interleaved blocks with swap tails (14/14); bf16's narrowing and the
// 16-bit neox tails (14/14 neox); and ApplyTo to bf16 with copies of 8
// without a loop (40/14) and to f16 with a copy loop (64/10 neox).
var neonGolden = []struct {
	file string
	spec spec.Spec
}{
	{"arm64_h6_r6_interleaved.s", neonSpec(6, 6, spec.Interleaved)},
	{"arm64_h64_r46_neox.s", neonSpec(64, 46, spec.NeoX)},
	{"arm64_h128_r128_interleaved.s", neonSpec(128, 0, spec.Interleaved)},
	{"arm64_h10_r10_neox_f64.s", neonSpecD(10, 10, spec.NeoX, "f64", "")},
	{"arm64_h14_r14_interleaved_f16.s", neonSpecD(14, 14, spec.Interleaved, "f16", "")},
	{"arm64_h14_r14_neox_bf16.s", neonSpecD(14, 14, spec.NeoX, "bf16", "")},
	{"arm64_h40_r14_interleaved_to_bf16.s", neonSpecD(40, 14, spec.Interleaved, "f32", "bf16")},
	{"arm64_h64_r10_neox_to_f16.s", neonSpecD(64, 10, spec.NeoX, "f32", "f16")},
}

// neonSpecD is neonSpec with a dtype and an out-dtype.
func neonSpecD(dim, rotary int, layout, dtype, out string) spec.Spec {
	s := neonSpec(dim, rotary, layout)
	s.DType, s.OutDType = dtype, out
	return s
}

// TestARM64Golden compares the generated rope_arm64.s with the golden files;
// go test ./gen -run TestARM64Golden -golden rewrites them.
func TestARM64Golden(t *testing.T) {
	for _, g := range neonGolden {
		t.Run(g.file, func(t *testing.T) {
			files, err := Generate(g.spec, Options{Command: "-golden"})
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, f := range files {
				if f.Name == "rope_arm64.s" {
					got = f.Data
				}
			}
			if got == nil {
				t.Fatal("no rope_arm64.s generated")
			}
			name := filepath.Join("testdata", "golden", g.file)
			if *golden {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("%v (run with -golden to create it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s differs from the generator's output at line %d:\n got: %s\nwant: %s\n(run with -golden to accept)", name, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, generator %d (run with -golden to accept)", name, len(wl), len(gl))
			}
		})
	}
}

// testShape is the shape of the package generated for s, with s's QK-norm
// and cache type.
func testShape(t testing.TB, s spec.Spec) *shape {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	var norms []NormPlan
	if p.Norm != nil {
		norms = append(norms, *p.Norm)
	}
	var caches []string
	if s.OutDType != "" {
		caches = []string{s.OutDType}
	}
	sh, err := newShape(s.Package, s.DType, p.HeadDim, p.RotaryDim, s.Layout, norms, caches)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// TestARM64Files checks the shape of the NEON files for every element type:
// header, constraint, include, every function with the frame asmdecl
// expects, no fused multiply-add, and the Go side's declarations and
// kernels, named for the shape.
func TestARM64Files(t *testing.T) {
	for _, v := range neonVariants {
		for _, s := range []spec.Spec{neonSpec(2, 0, spec.Interleaved), neonSpec(64, 0, spec.NeoX), neonSpec(4096, 4094, spec.Interleaved), neonSpec(40, 14, spec.NeoX)} {
			s.DType, s.OutDType = v.dtype, v.out
			name := fmt.Sprintf("%s→%q %d/%d %s", v.dtype, v.out, s.HeadDim, s.RotaryDim, s.Layout)
			files, err := Generate(s, Options{Command: "-dim 64"})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var asm, src []byte
			for _, f := range files {
				switch f.Name {
				case "rope_arm64.s":
					asm = f.Data
				case "rope_arm64.go":
					src = f.Data
				}
			}
			header := Header("-dim 64") + "\n" + License
			wantStart := header + "\n\n//go:build arm64 && !purego\n\n#include \"textflag.h\"\n"
			if !strings.HasPrefix(string(asm), wantStart) {
				t.Errorf("%s: rope_arm64.s starts %q, want %q", name, string(asm)[:min(len(asm), len(wantStart))], wantStart)
			}
			p := testShape(t, s)
			d := p.p.dtype()
			sfx := "NEON" + p.sfx
			row := "r *" + d.compute
			rows := "rows []" + d.compute
			decls := [][3]string{
				{"apply" + sfx, "x []" + d.goType + ", stride, n int, " + row, "48"},
				{"applyInverse" + sfx, "x []" + d.goType + ", stride, n int, " + row, "48"},
				{"applyRows" + sfx, "x []" + d.goType + ", stride, n int, " + rows, "64"},
				{"applyInverseRows" + sfx, "x []" + d.goType + ", stride, n int, " + rows, "64"},
			}
			fields := [][2]string{{"fwd", "apply" + sfx}, {"fwdRows", "applyRows" + sfx}, {"inv", "applyInverse" + sfx}, {"invRows", "applyInverseRows" + sfx}}
			if v.out != "" {
				to := "applyTo" + strings.ToUpper(v.out) + sfx
				decls = append(decls, [3]string{to, "dst []uint16, dstStride int, src []float32, srcStride int, n int, " + row, "80"})
				fields = append(fields, [2]string{"to", to})
				if !strings.Contains(string(src), fmt.Sprintf("k.half[%d] = halfKernels{", map[string]int{"f16": 0, "bf16": 1}[v.out])) {
					t.Errorf("%s: rope_arm64.go sets no half[…] for %s", name, v.out)
				}
			}
			for _, f := range fields {
				if !regexp.MustCompile(`\b` + f[0] + `:\s+` + f[1] + `,`).Match(src) {
					t.Errorf("%s: rope_arm64.go: no kernels field %s: %s", name, f[0], f[1])
				}
			}
			for _, fn := range decls {
				if !strings.Contains(string(asm), "TEXT ·"+fn[0]+"(SB), NOSPLIT, $0-"+fn[2]+"\n") {
					t.Errorf("%s: no TEXT line for %s with a %s-byte frame", name, fn[0], fn[2])
				}
				if !strings.Contains(string(src), "//go:noescape\nfunc "+fn[0]+"("+fn[1]+")\n") {
					t.Errorf("%s: rope_arm64.go: no noescape stub func %s(%s)", name, fn[0], fn[1])
				}
			}
			if l := strings.ToLower(string(asm)); strings.Contains(l, "fmla") || strings.Contains(l, "fmls") || strings.Contains(l, "fmadd") || strings.Contains(l, "fmsub") {
				t.Errorf("%s: rope_arm64.s has a fused multiply-add", name)
			}
			for _, want := range []string{"//go:build arm64 && !purego\n", "cpu.ARM64.HasASIMD", "func neon" + p.sfx + "() kernels {"} {
				if !strings.Contains(string(src), want) {
					t.Errorf("%s: rope_arm64.go lacks %q", name, want)
				}
			}
		}
	}
}

// neonVariant is an element type with NEON kernels: dtype, and the
// -out-dtype of ApplyTo ("" for none).
type neonVariant struct{ dtype, out string }

// neonVariants are every element type and out-dtype combination.
var neonVariants = []neonVariant{{"f32", ""}, {"f64", ""}, {"f16", ""}, {"bf16", ""}, {"f32", "f16"}, {"f32", "bf16"}}

// TestNEONKernelPlan checks the Kernel of every geometry up to head dim 300
// and some big ones, for every element type: the blocks cover every pair
// once, widest first; every load and store stays inside the head and the
// row and touches exactly its pairs' values (and, for ApplyTo, the copy the
// rest of the head); the pointers walk exactly one head; and the registers
// obey the layout templates.Kernel documents (simulating the preload order).
func TestNEONKernelPlan(t *testing.T) {
	type geom struct{ dim, rotary int }
	var all, some []geom
	for dim := 2; dim <= 300; dim += 2 {
		for r := 2; r <= dim; r += 2 {
			if dim > 64 && r%8 != 2 && r%8 != 4 && r != dim {
				continue // the tails repeat with period 8; keep the variety, drop the bulk
			}
			all = append(all, geom{dim, r})
			if dim <= 48 || r%32 == 2 || r == dim || r == dim-2 {
				some = append(some, geom{dim, r})
			}
		}
	}
	for _, r := range []int{4096, 4094, 4092, 2, 80, 82} {
		all = append(all, geom{4096, r})
		some = append(some, geom{4096, r})
	}
	for _, v := range neonVariants {
		gs := some // the other element types reuse f32's block plan: a sample suffices
		if v.dtype == "f32" && v.out == "" && !testing.Short() {
			gs = all
		}
		for _, g := range gs {
			for _, layout := range []string{spec.Interleaved, spec.NeoX} {
				s := neonSpec(g.dim, g.rotary, layout)
				s.DType, s.OutDType = v.dtype, v.out
				sh := testShape(t, s)
				if err := checkNEONKernel(sh.neonKernel("")); err != nil {
					t.Fatalf("%s→%q head %d rotary %d %s: %v", v.dtype, v.out, s.HeadDim, sh.p.RotaryDim, s.Layout, err)
				}
			}
		}
	}
}

// checkNEONKernel checks the functions of k and their bodies.
func checkNEONKernel(k *templates.Kernel) error {
	want := []string{"fwd", "inv", "fwdRows", "invRows"}
	if k.OutDType != "" {
		want = append(want, "to")
	}
	if len(k.Funcs) != len(want) {
		return fmt.Errorf("%d functions, want %v", len(k.Funcs), want)
	}
	for i, f := range k.Funcs {
		if f.Kind != want[i] || f.Inverse != (f.Kind == "inv" || f.Kind == "invRows") || f.Body == nil {
			return fmt.Errorf("function %d: %+v, want kind %s", i, f, want[i])
		}
		rows := strings.HasSuffix(f.Kind, "Rows")
		if rows != (f.RowBytes == k.RowLen*f.Body.TableSize) || !rows && f.RowBytes != 0 {
			return fmt.Errorf("function %d (%s): RowBytes %d with rows of %d values of %d bytes", i, f.Kind, f.RowBytes, k.RowLen, f.Body.TableSize)
		}
		if rows && (f.Body.Preloaded != 0 || f.ArgSize != 64) {
			return fmt.Errorf("function %d (%s): %d blocks preloaded, ArgSize %d: want none (the row changes every head) and 64", i, f.Kind, f.Body.Preloaded, f.ArgSize)
		}
		if err := checkNEONBody(k, f); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	if k.Funcs[0].Body != k.Funcs[1].Body || k.Funcs[2].Body != k.Funcs[3].Body {
		return fmt.Errorf("forward and inverse have different bodies")
	}
	return nil
}

// neonAccessBytes is how many bytes an access's instruction moves, or −1
// for an access no instruction makes.
func neonAccessBytes(a templates.Access) int {
	switch a.Kind {
	case "ld1", "ld2":
		// ld1: one register, or two for the copy's 8 values; ld2: two.
		if len(a.Regs) < 1 || len(a.Regs) > 2 || (a.Kind == "ld2" && len(a.Regs) != 2) {
			return -1
		}
		if len(a.Regs) == 2 && a.Regs[1] != a.Regs[0]+1 {
			return -1
		}
		list := 0
		switch a.Arr {
		case "S4", "D2", "H8":
			list = 16
		case "S2", "H4":
			list = 8
		default:
			return -1
		}
		return len(a.Regs) * list
	case "fp", "fp2":
		n := 0
		switch a.Arr {
		case "S":
			n = 4
		case "D":
			n = 8
		case "Q":
			if a.Kind == "fp2" {
				return -1
			}
			n = 16
		default:
			return -1
		}
		if a.Kind == "fp2" {
			if len(a.Regs) != 2 {
				return -1
			}
			return 2 * n
		}
		if len(a.Regs) != 1 {
			return -1
		}
		return n
	case "lane":
		if len(a.Regs) != 1 || a.Arr != "H" {
			return -1
		}
		return 2
	}
	return -1
}

// checkNEONBody simulates one function's pointers, memory accesses and
// registers over one head.
func checkNEONBody(k *templates.Kernel, f templates.Func) error {
	b := f.Body
	to := f.Kind == "to"
	H, R, h := k.HeadDim, k.RotaryDim, k.Half
	wantIn, wantOut := neonFormats[k.DType], neonFormats[k.DType]
	if to {
		wantIn, wantOut = neonFormats["f32"], neonFormats[k.OutDType]
	}
	if b.In != wantIn || b.Out != wantOut {
		return fmt.Errorf("formats %+v → %+v, want %+v → %+v", b.In, b.Out, wantIn, wantOut)
	}
	in, out, ts := b.In.Size, b.Out.Size, b.TableSize
	lanes, wantTS := 4, 4
	if b.In.Name == "f64" {
		lanes, wantTS = 2, 8
	}
	if ts != wantTS || b.Lanes != lanes || k.RowLen != 2*R {
		return fmt.Errorf("table size %d, lanes %d, row %d", ts, b.Lanes, k.RowLen)
	}
	half16 := in == 2 || out == 2
	wantWiden := map[string]string{"f16": "fcvtl", "bf16": "shll"}[b.In.Name]
	wantNarrow := map[string]string{"f16": "fcvtn", "bf16": "bf16"}[b.Out.Name]
	if b.Widen != wantWiden || b.Narrow != wantNarrow {
		return fmt.Errorf("widen %q narrow %q, want %q %q", b.Widen, b.Narrow, wantWiden, wantNarrow)
	}

	// Constants: from V0 up and V31 down, outside the working sets.
	consts := map[int]bool{}
	lo, hi := 0, 0
	for _, c := range b.Consts {
		switch {
		case c.Reg == lo:
			lo++
		case c.Reg == 31-hi:
			hi++
		default:
			return fmt.Errorf("constant %+v not at either end of the register file", c)
		}
		consts[c.Reg] = true
	}
	maxPreload := templates.MaxPreload - max(lo, hi)
	if strings.HasSuffix(f.Kind, "Rows") {
		maxPreload = 0
	}
	if b.MaxPreload != maxPreload || lo+hi != len(consts) || (lo > 0 && lo >= 10) || hi >= 10 {
		return fmt.Errorf("MaxPreload %d with %d constants below and %d above", b.MaxPreload, lo, hi)
	}
	if b.Narrow == "bf16" {
		val := map[int]uint32{}
		for _, c := range b.Consts {
			val[c.Reg] = c.Value
		}
		needQuiet := to && H > R
		if val[b.Lsb] != 0x10000 || !consts[b.Lsb] || val[b.Bias] != 0x7fff || !consts[b.Bias] ||
			needQuiet != (len(b.Consts) == 3) || (needQuiet && (val[b.Quiet] != 0x400000 || !consts[b.Quiet])) {
			return fmt.Errorf("bf16 constants %+v (lsb V%d, bias V%d, quiet V%d)", b.Consts, b.Lsb, b.Bias, b.Quiet)
		}
	} else if len(b.Consts) != 0 {
		return fmt.Errorf("constants %+v without a bf16 narrowing", b.Consts)
	}

	// Pointers.
	type ptr struct {
		region     string
		pos, start int
	}
	ptrs := map[string]*ptr{}
	for _, p := range b.Ptrs {
		var q ptr
		switch p.From {
		case "R0":
			q.region = "src"
		case "R9":
			if !to {
				return fmt.Errorf("pointer %+v: R9 outside ApplyTo", p)
			}
			q.region = "dst"
		default:
			if ptrs[p.From] == nil {
				return fmt.Errorf("pointer %+v from an unset register", p)
			}
			q = *ptrs[p.From]
		}
		if !to && q.region == "src" {
			q.region = "x"
		}
		q.pos += p.Off
		q.start = q.pos
		if ptrs[p.Reg] != nil {
			return fmt.Errorf("pointer %s set twice", p.Reg)
		}
		ptrs[p.Reg] = &q
	}
	wantPtrs := []string{"R3", "R4"}
	if k.NeoX {
		wantPtrs = append(wantPtrs, "R5", "R6")
	}
	if len(b.Ptrs) != len(wantPtrs) {
		return fmt.Errorf("pointers %+v", b.Ptrs)
	}
	for i, p := range b.Ptrs {
		if p.Reg != wantPtrs[i] {
			return fmt.Errorf("pointers %+v", b.Ptrs)
		}
	}
	size := map[string]int{"x": in, "src": in, "dst": out}
	loaded, stored := make([]int, H), make([]int, H)
	// touch applies a post-incremented x access and returns the element
	// indices it covers.
	touch := func(a templates.Access, load bool) ([]int, error) {
		n := neonAccessBytes(a)
		if n <= 0 || n != a.Bytes || !a.Post {
			return nil, fmt.Errorf("access %+v moves %d bytes", a, n)
		}
		p := ptrs[a.Ptr]
		if p == nil {
			return nil, fmt.Errorf("access %+v through an unset pointer", a)
		}
		okRegion := p.region == "x" || (p.region == "src") == load
		okPtr := (load && (a.Ptr == "R3" || a.Ptr == "R5")) || (!load && (a.Ptr == "R4" || a.Ptr == "R6"))
		if !okRegion || !okPtr {
			return nil, fmt.Errorf("access %+v: load %v through a pointer to %s", a, load, p.region)
		}
		sz := size[p.region]
		if p.pos < 0 || p.pos%sz != 0 || n%sz != 0 || p.pos+n > H*sz {
			return nil, fmt.Errorf("access %+v at byte %d: outside the head (%d bytes)", a, p.pos, H*sz)
		}
		var idx []int
		for e := p.pos / sz; e < (p.pos+n)/sz; e++ {
			idx = append(idx, e)
			if load {
				loaded[e]++
			} else {
				stored[e]++
			}
		}
		p.pos += n
		for _, r := range a.Regs {
			if r < 0 || r > 31 {
				return nil, fmt.Errorf("access %+v: register out of range", a)
			}
		}
		return idx, nil
	}
	// Table pointers.
	r7, r8 := b.LoopC, b.LoopS
	rowBytes := 2 * R * ts
	table := func(a templates.Access, what string, want int) error {
		n := neonAccessBytes(a)
		if n <= 0 || n != a.Bytes {
			return fmt.Errorf("table access %+v moves %d bytes", a, n)
		}
		at := a.Off
		switch {
		case a.Post && a.Ptr == "R7" && what == "c" && b.LoopTable:
			at, r7 = r7, r7+n
		case a.Post && a.Ptr == "R8" && what == "s" && b.LoopTable:
			at, r8 = r8, r8+n
		case !a.Post && a.Ptr == "R2" && a.Kind == "fp":
		default:
			return fmt.Errorf("table access %+v for %s", a, what)
		}
		if at != want {
			return fmt.Errorf("table access %+v for %s reads row byte %d, want %d", a, what, at, want)
		}
		lo, hi := 0, R*ts
		if what == "s" {
			lo, hi = R*ts, rowBytes
		}
		if at < lo || at+n > hi {
			return fmt.Errorf("table access %+v for %s reads [%d, %d), outside [%d, %d)", a, what, at, at+n, lo, hi)
		}
		return nil
	}

	// The blocks.
	blocks := make([]templates.Block, 0, len(b.Blocks))
	for _, g := range b.Groups {
		if len(g.Blocks) == 0 || len(g.Blocks) > 2 || g.First != g.Blocks[0].Pair || g.Last != g.Blocks[len(g.Blocks)-1].Last {
			return fmt.Errorf("bad group %+v", g)
		}
		var ns []templates.Narrow
		for _, blk := range g.Blocks {
			ns = append(ns, blk.Narrows...)
		}
		if !slices.Equal(ns, g.Narrows) {
			return fmt.Errorf("group %d…%d narrows %+v, its blocks' %+v", g.First, g.Last, g.Narrows, ns)
		}
		if err := checkNarrowRegs(g.Narrows); err != nil {
			return fmt.Errorf("group %d…%d: %w", g.First, g.Last, err)
		}
		blocks = append(blocks, g.Blocks...)
	}
	if len(blocks) != len(b.Blocks) {
		return fmt.Errorf("groups hold %d blocks, plan %d", len(blocks), len(b.Blocks))
	}
	if b.Preloaded != min(len(b.Blocks), b.MaxPreload) {
		return fmt.Errorf("Preloaded = %d, want %d", b.Preloaded, min(len(b.Blocks), b.MaxPreload))
	}
	pair, tailSeen, loopStarted := 0, 0, false
	for n, blk := range b.Blocks {
		if blocks[n].Index != n || blk.Index != n || blk.Pair != pair || blk.Last != pair+blk.Pairs-1 {
			return fmt.Errorf("block %d = %+v: out of order (next pair %d)", n, blk, pair)
		}
		w := blk.Pairs
		switch {
		case w == lanes:
			if tailSeen > 0 {
				return fmt.Errorf("block %d: %d pairs after a tail", n, w)
			}
		case w == 2 || w == 1:
			if tailSeen != 0 && tailSeen <= w {
				return fmt.Errorf("block %d: tail of %d after a tail of %d", n, w, tailSeen)
			}
			if h-pair >= 2*w {
				return fmt.Errorf("block %d: %d pairs with %d left", n, w, h-pair)
			}
			tailSeen = w
		default:
			return fmt.Errorf("block %d: %d pairs", n, w)
		}
		// Form and arrangement.
		var form, arr string
		fp := fpWidth(ts)
		switch {
		case !k.NeoX && w >= 2 && (w == lanes || !half16):
			form, arr = "ld2", fmt.Sprintf("%d%s", w, fp)
		case !k.NeoX && half16:
			form, arr = "swap", fmt.Sprintf("%dS", 2*w)
		case w == 1 && !half16:
			form = "scalar"
		default:
			form, arr = "ld1", fmt.Sprintf("%d%s", max(w, 2), fp)
		}
		goArr := ""
		if arr != "" {
			goArr = arr[len(arr)-1:] + arr[:len(arr)-1]
		}
		if blk.Form != form || blk.Arr != arr || blk.GoArr != goArr || blk.Scalar != (form == "scalar") || (blk.Scalar && blk.FP != fp) {
			return fmt.Errorf("block %d: form %q %q/%q/%q, want %q %q", n, blk.Form, blk.Arr, blk.GoArr, blk.FP, form, arr)
		}
		// Registers.
		base := 10 + 6*(n%2)
		if blk.A != base || blk.B != base+1 || blk.P0 != base+2 || blk.P1 != base+3 || blk.P2 != base+4 || blk.P3 != base+5 {
			return fmt.Errorf("block %d: working registers %+v", n, blk)
		}
		if blk.Preloaded != (n < b.Preloaded) {
			return fmt.Errorf("block %d: Preloaded = %v", n, blk.Preloaded)
		}
		if blk.Preloaded {
			if blk.C != 10-b.Preloaded+n || blk.S != 22+n || consts[blk.C] || consts[blk.S] {
				return fmt.Errorf("block %d: table registers C=%d S=%d", n, blk.C, blk.S)
			}
		} else if blk.C != blk.P0 || blk.S != blk.P3 {
			return fmt.Errorf("block %d: loaded in the loop into C=%d S=%d, want P0, P3", n, blk.C, blk.S)
		}
		// The values the block must load and store: its pairs'.
		var want []int
		for i := pair; i < pair+w; i++ {
			a, bb := 2*i, 2*i+1
			if k.NeoX {
				a, bb = i, i+h
			}
			want = append(want, a, bb)
		}
		a0, b0 := 2*pair, 2*pair+1
		if k.NeoX {
			a0, b0 = pair, pair+h
		}
		xb, yb := b0, b0
		if form == "swap" {
			xb, yb = a0+1, a0+1
		}
		if blk.XA != a0*in || blk.XB != xb*in || blk.YA != a0*out || blk.YB != yb*out {
			return fmt.Errorf("block %d: offsets %+v", n, blk)
		}
		var got []int
		var loadRegs, storeRegs []int
		for _, a := range blk.Loads {
			p := ptrs[a.Ptr]
			if p != nil && ((a.Ptr == "R3" && p.pos != blk.XA) || (a.Ptr == "R5" && p.pos != blk.XB)) {
				return fmt.Errorf("block %d: load %+v at byte %d, block at %d/%d", n, a, p.pos, blk.XA, blk.XB)
			}
			idx, err := touch(a, true)
			if err != nil {
				return fmt.Errorf("block %d: %w", n, err)
			}
			got = append(got, idx...)
			loadRegs = append(loadRegs, a.Regs...)
		}
		if !slices.Equal(sorted(got), sorted(want)) {
			return fmt.Errorf("block %d loads values %v, its pairs are %v", n, got, want)
		}
		got = nil
		for _, a := range blk.Stores {
			p := ptrs[a.Ptr]
			if p != nil && ((a.Ptr == "R4" && p.pos != blk.YA) || (a.Ptr == "R6" && p.pos != blk.YB)) {
				return fmt.Errorf("block %d: store %+v at byte %d, block at %d/%d", n, a, p.pos, blk.YA, blk.YB)
			}
			idx, err := touch(a, false)
			if err != nil {
				return fmt.Errorf("block %d: %w", n, err)
			}
			got = append(got, idx...)
			storeRegs = append(storeRegs, a.Regs...)
		}
		if !slices.Equal(sorted(got), sorted(want)) {
			return fmt.Errorf("block %d stores values %v, its pairs are %v", n, got, want)
		}
		wantLoad, wantStore := []int{blk.A, blk.B}, []int{blk.P0, blk.P1}
		if form == "swap" {
			wantLoad, wantStore = wantLoad[:1], wantStore[:1]
		}
		if !slices.Equal(loadRegs, wantLoad) || !slices.Equal(storeRegs, wantStore) {
			return fmt.Errorf("block %d loads %v, stores %v", n, loadRegs, storeRegs)
		}
		// Table.
		tn := w
		cl, sl := a0*ts, (R+b0)*ts
		switch form {
		case "ld2":
			tn, sl = 2*w, (R+a0)*ts // S[a…]: the odd lanes are S[b]
		case "swap":
			tn, sl = 2*w, (R+a0)*ts // S[a], S[b], …
		}
		if blk.COff != a0*ts || blk.SOff != (R+b0)*ts || blk.CLoad != cl || blk.SLoad != sl || blk.TBytes != tn*ts {
			return fmt.Errorf("block %d: table offsets %+v, want c at %d, s at %d, %d bytes", n, blk, cl, sl, tn*ts)
		}
		var tl []templates.Access
		if blk.Preloaded {
			if len(blk.TLoads) != 0 {
				return fmt.Errorf("block %d: preloaded and loaded every head", n)
			}
			for _, l := range b.Preload {
				if l.Block == n {
					tl = append(tl, templates.Access{Kind: l.Kind, Arr: l.Arr, Regs: []int{l.Keep}, Bytes: blk.TBytes})
				}
			}
		} else {
			if len(blk.TLoads) != 2 {
				return fmt.Errorf("block %d: table loads %+v", n, blk.TLoads)
			}
			if blk.TLoads[0].Post && !loopStarted {
				loopStarted = true
				if !b.LoopTable || b.LoopC != cl || b.LoopS != sl {
					return fmt.Errorf("block %d: table pointers start at %d/%d, block reads %d/%d", n, b.LoopC, b.LoopS, cl, sl)
				}
			}
			for i, a := range blk.TLoads {
				if err := table(a, []string{"c", "s"}[i], []int{cl, sl}[i]); err != nil {
					return fmt.Errorf("block %d: %w", n, err)
				}
			}
			tl = blk.TLoads
			if form == "ld2" {
				if !slices.Equal(tl[0].Regs, []int{blk.P0, blk.P1}) || !slices.Equal(tl[1].Regs, []int{blk.P2, blk.P3}) {
					return fmt.Errorf("block %d: table LD2s into %v %v", n, tl[0].Regs, tl[1].Regs)
				}
			} else if tl[0].Regs[0] != blk.C || tl[1].Regs[0] != blk.S {
				return fmt.Errorf("block %d: table loads into %v %v, want C, S", n, tl[0].Regs, tl[1].Regs)
			}
		}
		if len(tl) != 2 {
			return fmt.Errorf("block %d: %d table loads", n, len(tl))
		}
		for i, a := range tl {
			kind := "ld1"
			switch {
			case form == "ld2":
				kind = "ld2"
			case form == "scalar" || tn == 1:
				kind = "fp"
			}
			if tn == 1 {
				kind = "fp"
			}
			if a.Kind != kind {
				return fmt.Errorf("block %d: table load %d is %+v, want %s", n, i, a, kind)
			}
			m := a
			if kind == "ld2" {
				m.Regs = []int{0, 1}
			}
			if neonAccessBytes(m) != tn*ts {
				return fmt.Errorf("block %d: table load %+v reads %d bytes, want %d", n, a, neonAccessBytes(m), tn*ts)
			}
		}
		// Widening and narrowing.
		wantWiden := []int{}
		if b.Widen != "" {
			wantWiden = wantLoad
		}
		if !slices.Equal(blk.Widen, wantWiden) {
			return fmt.Errorf("block %d widens %v, want %v", n, blk.Widen, wantWiden)
		}
		if b.Narrow == "" {
			if len(blk.Narrows) != 0 {
				return fmt.Errorf("block %d narrows %+v", n, blk.Narrows)
			}
		} else {
			if len(blk.Narrows) != len(wantStore) {
				return fmt.Errorf("block %d narrows %+v, stores %v", n, blk.Narrows, wantStore)
			}
			for i, nw := range blk.Narrows {
				if nw.Op != b.Narrow || nw.Y != wantStore[i] || nw.Out != nw.Y || nw.Upper || nw.Quiet || (b.Narrow == "bf16" && (nw.Lsb != b.Lsb || nw.Bias != b.Bias)) {
					return fmt.Errorf("block %d: narrow %+v", n, nw)
				}
				for _, r := range []int{nw.T, nw.M} {
					if b.Narrow == "bf16" && (r < base || r > base+5) {
						return fmt.Errorf("block %d: narrow %+v uses V%d outside its working set", n, nw, r)
					}
				}
			}
		}
		pair += w
	}
	if pair != h {
		return fmt.Errorf("blocks cover %d pairs, want %d", pair, h)
	}
	if b.LoopTable != loopStarted {
		return fmt.Errorf("LoopTable = %v, but blocks loaded through R7/R8: %v", b.LoopTable, loopStarted)
	}

	// The copy.
	if to && H > R {
		c := b.Copy
		src, dst := "R3", "R4"
		if k.NeoX {
			src, dst = "R5", "R6"
		}
		if c == nil || c.Src != src || c.Dst != dst || c.First != R || c.Last != H-1 || (c.Loop > 0) != (c.Body != nil) || c.Loop == 1 {
			return fmt.Errorf("copy %+v", c)
		}
		if ptrs[src].pos != R*in || ptrs[dst].pos != R*out {
			return fmt.Errorf("copy starts at src byte %d, dst byte %d, want %d, %d", ptrs[src].pos, ptrs[dst].pos, R*in, R*out)
		}
		var steps []templates.Chunks
		for range c.Loop {
			steps = append(steps, *c.Body)
		}
		steps = append(steps, c.Rest...)
		for _, ch := range steps {
			if err := checkNarrowRegs(ch.Narrows); err != nil {
				return fmt.Errorf("copy: %w", err)
			}
			var ys, outs []int
			for _, nw := range ch.Narrows {
				if nw.Op != b.Narrow || !(nw.Quiet == (b.Narrow == "bf16")) || (nw.Quiet && nw.QuietReg != b.Quiet) {
					return fmt.Errorf("copy: narrow %+v", nw)
				}
				ys = append(ys, nw.Y)
				if !nw.Upper {
					outs = append(outs, nw.Out)
				}
			}
			var lr, sr []int
			vals := 0
			for _, a := range ch.Loads {
				idx, err := touch(a, true)
				if err != nil {
					return fmt.Errorf("copy: %w", err)
				}
				vals += len(idx)
				lr = append(lr, a.Regs...)
			}
			for _, a := range ch.Stores {
				idx, err := touch(a, false)
				if err != nil {
					return fmt.Errorf("copy: %w", err)
				}
				vals -= len(idx)
				sr = append(sr, a.Regs...)
			}
			if vals != 0 || !slices.Equal(lr, ys) || !slices.Equal(sr, outs) {
				return fmt.Errorf("copy chunks %+v: loads %v, narrows %v, stores %v", ch, lr, ys, sr)
			}
		}
	} else if b.Copy != nil {
		return fmt.Errorf("copy %+v where nothing passes through", b.Copy)
	}

	// Every value loaded and stored once: the rotary ones, and for ApplyTo
	// the rest too.
	for e := range H {
		want := 1
		if e >= R && !to {
			want = 0
		}
		if loaded[e] != want || stored[e] != want {
			return fmt.Errorf("value %d loaded %d times, stored %d times, want %d", e, loaded[e], stored[e], want)
		}
	}
	// Each pointer walks Walk bytes over the head, and its advance register
	// holds its region's stride argument in bytes less that walk: after the
	// ADD it is at its start plus one stride, in the next head.
	type arg struct {
		name string
		off  int
	}
	stride := map[string]arg{"x": {"stride", 24}, "src": {"srcStride", 56}, "dst": {"dstStride", 24}}
	advs := map[string]templates.Advance{}
	for i, a := range b.Advances {
		if a.Reg != fmt.Sprintf("R%d", 12+i) || a.Walk <= 0 {
			return fmt.Errorf("advance %d: %+v, want register R%d and a positive walk", i, a, 12+i)
		}
		advs[a.Reg] = a
	}
	used := map[string]bool{}
	for _, p := range b.Ptrs {
		q := ptrs[p.Reg]
		if q.pos-q.start != p.Walk {
			return fmt.Errorf("pointer %s walks %d bytes over a head, Walk says %d", p.Reg, q.pos-q.start, p.Walk)
		}
		a, ok := advs[p.Adv]
		want := stride[q.region]
		if !ok || a.Arg != want.name || a.ArgOff != want.off || 1<<a.Shift != size[q.region] || a.Walk != p.Walk {
			return fmt.Errorf("pointer %s (%s, walk %d) advances by %s = %+v, want %s+%d(FP)·%d − %d", p.Reg, q.region, p.Walk, p.Adv, a, want.name, want.off, size[q.region], p.Walk)
		}
		used[p.Adv] = true
	}
	if len(used) != len(b.Advances) {
		return fmt.Errorf("advances %+v, pointers use %d of them", b.Advances, len(used))
	}
	for i, a := range b.Advances {
		for _, c := range b.Advances[:i] {
			if a.Arg == c.Arg && a.Shift == c.Shift && a.Walk == c.Walk {
				return fmt.Errorf("advances %+v and %+v hold the same value", c, a)
			}
		}
	}

	// Simulate the preloads: every kept value must survive to the loop, and
	// every other register written must be a working register or be
	// overwritten later by a kept value; no constant is touched.
	held := map[int]string{}
	for _, l := range b.Preload {
		blk := b.Blocks[l.Block]
		wantRegs := 1
		if l.Kind == "ld2" {
			wantRegs = 2
		}
		if len(l.Regs) != wantRegs || l.Scalar != (l.Kind == "fp") || l.Pairs != blk.Pairs {
			return fmt.Errorf("preload %+v for block %+v", l, blk)
		}
		if wantRegs == 2 && l.Regs[1] != l.Regs[0]+1 {
			return fmt.Errorf("preload %+v: LD2 registers not consecutive", l)
		}
		keep, off := blk.C, blk.CLoad
		if l.What == "s" {
			keep, off = blk.S, blk.SLoad
		}
		if l.Keep != keep || l.Off != off {
			return fmt.Errorf("preload %+v: want %s of block %d in V%d from %d", l, l.What, l.Block, keep, off)
		}
		for _, r := range l.Regs {
			if r < 0 || r > 31 || consts[r] {
				return fmt.Errorf("preload %+v: register out of range or a constant's", l)
			}
			held[r] = ""
		}
		held[l.Keep] = l.What + strconv.Itoa(l.Block)
	}
	if len(b.Preload) != 2*b.Preloaded {
		return fmt.Errorf("%d preloads for %d blocks", len(b.Preload), b.Preloaded)
	}
	for n, blk := range b.Blocks[:b.Preloaded] {
		if held[blk.C] != "c"+strconv.Itoa(n) || held[blk.S] != "s"+strconv.Itoa(n) {
			return fmt.Errorf("block %d: after the preloads V%d holds %q, V%d holds %q", n, blk.C, held[blk.C], blk.S, held[blk.S])
		}
	}
	for r, v := range held {
		if v == "" && (r < 10 || r > 21) {
			return fmt.Errorf("preloads leave a stray value in V%d, outside the working registers", r)
		}
	}
	return nil
}

// checkNarrowRegs checks that narrowings interleaved step by step do not
// step on each other: their inputs and temporaries are distinct registers
// in the working sets, and each result (written in the last step) goes
// where no other narrowing reads, except into the upper half of the
// previous one's result, after its last read.
func checkNarrowRegs(ns []templates.Narrow) error {
	reads := func(n templates.Narrow) []int {
		if n.Op == "bf16" {
			return []int{n.Y, n.T, n.M}
		}
		return []int{n.Y}
	}
	seen := map[int]bool{}
	for _, n := range ns {
		for _, r := range reads(n) {
			if r < 10 || r > 21 || seen[r] {
				return fmt.Errorf("narrows %+v: V%d reused or outside the working sets", ns, r)
			}
			seen[r] = true
		}
	}
	for i, n := range ns {
		res := n.Y // what the last step reads: Y for fcvtn, T for bf16
		if n.Op == "bf16" {
			res = n.T
		}
		if n.Upper {
			if i == 0 || ns[i-1].Upper || ns[i-1].Out != n.Out {
				return fmt.Errorf("narrow %+v into an upper half without its lower half just before", n)
			}
		} else if n.Out != n.Y && n.Out != res {
			return fmt.Errorf("narrow %+v: result into V%d", n, n.Out)
		}
		for j, m := range ns {
			if j == i {
				continue
			}
			for _, r := range reads(m) {
				if r == n.Out && !(j < i && n.Upper && m.Out == n.Out) {
					return fmt.Errorf("narrow %+v writes V%d, which %+v reads", n, n.Out, m)
				}
			}
		}
	}
	return nil
}

func sorted(v []int) []int {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// neonKernelSpecs are the geometries run under qemu. float32: every head
// dim the issue names, full and partial rotary, every tail (2 and 1 pairs),
// rows that fit in the registers and rows that do not (with 4-, 2- and
// 1-pair blocks loaded every head). The other element types and ApplyTo:
// head dims 2, 6, 64, 128 and 4096 with rotary dims that give every tail,
// preloaded or not, and pass-through copies of every shape (2, 4, 8, a
// loop, a loop and leftovers). TestNEONKernelPlan checks the plans of every
// other geometry.
func neonKernelSpecs(short bool) []spec.Spec {
	f32 := [][2]int{
		{2, 0}, {6, 0}, {6, 4}, {6, 2},
		{64, 0}, {64, 14}, {64, 10},
		{96, 0}, {96, 36},
		{128, 0}, {128, 46}, {128, 94},
		{256, 0}, {256, 64}, {256, 82},
		{4096, 0}, {4096, 4094},
	}
	// Pairs (blocks): 1 (head dim 2); 1 and a copy of 4; 4+2+1, preloaded
	// (a copy loop and a leftover 2); 11·4+2+1 (tails loaded every head;
	// f64: 23+1 blocks, too many to preload); and head dim 4096 with a
	// short rotary part (the pure Go kernels, fully unrolled, take minutes
	// to generate and compile for 4094 rotary values of f16): 64 blocks, or
	// 1 with a copy loop of 255 and leftovers of 8, 4 and 2.
	others := [][2]int{{2, 0}, {6, 2}, {64, 14}, {128, 94}, {4096, 512}, {4096, 2}}
	if short {
		f32 = [][2]int{{2, 0}, {6, 0}, {64, 14}, {128, 0}, {128, 94}, {4096, 4094}}
		others = [][2]int{{6, 2}, {64, 14}, {128, 94}, {4096, 2}}
	}
	var specs []spec.Spec
	for _, v := range neonVariants {
		dims := others
		if v.dtype == "f32" && v.out == "" {
			dims = f32
		}
		for _, d := range dims {
			for _, layout := range []string{spec.Interleaved, spec.NeoX} {
				s := neonSpec(d[0], d[1], layout)
				s.DType, s.OutDType = v.dtype, v.out
				specs = append(specs, s)
			}
		}
	}
	return specs
}

// neonExhaustiveSpecs are the packages whose generated rope_test.go
// TestNarrowExhaustive (on a strided sample) runs under qemu: ApplyTo to
// each out dtype.
func neonExhaustiveSpecs() []spec.Spec {
	a, b := neonSpec(128, 0, spec.Interleaved), neonSpec(64, 46, spec.NeoX)
	a.OutDType, b.OutDType = "f16", "bf16"
	return []spec.Spec{a, b}
}

// TestARM64Kernels generates packages for neonKernelSpecs inside this
// module (so they import golang.org/x/sys/cpu as they are), adds
// neonInternalTest's Check to each, vets them for arm64 (asmdecl checks the
// frames) and runs them under qemu-aarch64-static (natively on linux/arm64):
// every backend bit for bit against the pure Go one, in place and (ApplyTo)
// into dst. One driver package's test calls every Check, so that there is
// one test binary to link, not one per package. It also runs the generated
// TestNarrowExhaustive of neonExhaustiveSpecs' packages, with -short.
func TestARM64Kernels(t *testing.T) {
	var exe []string
	if runtime.GOOS != "linux" || runtime.GOARCH != "arm64" {
		qemu, err := exec.LookPath("qemu-aarch64-static")
		if err != nil {
			if os.Getenv("ROPEGEN_REQUIRE_ARM64") == "1" {
				t.Fatalf("arm64 kernels cannot be tested: %v, and ROPEGEN_REQUIRE_ARM64=1", err)
			}
			msg := "SKIPPED: arm64 NEON kernels NOT TESTED: qemu-aarch64-static not found (install qemu-user-static; ROPEGEN_REQUIRE_ARM64=1 makes this a failure)"
			// go test shows a skip only with -v; stderr shows in more modes.
			fmt.Fprintf(os.Stderr, "%s\n## %s\n%s\n", strings.Repeat("#", 72), msg, strings.Repeat("#", 72))
			t.Skip(msg)
		}
		exe = []string{"-exec", qemu}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	// A leading underscore keeps the packages out of ./... patterns that run
	// meanwhile; they are named one by one below.
	dir, err := os.MkdirTemp(filepath.Join(root, "internal"), "_arm64test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rel := "internal/" + filepath.Base(dir)
	// write generates s as package name in dir, with extra files, and
	// returns its relative import path.
	write := func(s spec.Spec, name string, tests bool, extra ...File) string {
		t.Helper()
		s.Package = name
		files, err := Generate(s, Options{Command: "-test", Tests: tests})
		if err != nil {
			t.Fatal(err)
		}
		pd := filepath.Join(dir, name)
		if err := os.Mkdir(pd, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range append(files, extra...) {
			if err := os.WriteFile(filepath.Join(pd, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return "./" + rel + "/" + name
	}
	var pkgs []string
	var driver strings.Builder
	driver.WriteString("package all\n\nimport (\n\t\"testing\"\n\n")
	var calls strings.Builder
	specs := neonKernelSpecs(testing.Short())
	checks := 0
	for i, s := range specs {
		name := fmt.Sprintf("p%d", i)
		pkgs = append(pkgs, write(s, name, false, File{"neon_check.go", []byte(neonInternalTestFor(s, name))}))
		fmt.Fprintf(&driver, "\t%q\n", "github.com/ropegen/ropegen/"+rel+"/"+name)
		fmt.Fprintf(&calls, "\t\t{%q, %s.Check},\n", fmt.Sprintf("%s_%s_%s_%d_%d_%s", name, s.DType, cmp.Or(s.OutDType, "-"), s.HeadDim, s.RotaryDim, s.Layout), name)
		checks++
		if s.OutDType != "" {
			checks++
		}
	}
	driver.WriteString(")\n\n// TestAll runs every generated package's Check.\nfunc TestAll(t *testing.T) {\n\tfor _, c := range []struct {\n\t\tname  string\n\t\tcheck func(*testing.T)\n\t}{\n")
	driver.WriteString(calls.String())
	driver.WriteString("\t} {\n\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tt.Parallel()\n\t\t\tc.check(t)\n\t\t})\n\t}\n}\n")
	if err := os.Mkdir(filepath.Join(dir, "all"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "all", "all_test.go"), []byte(driver.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var exhaustive []string
	for i, s := range neonExhaustiveSpecs() {
		exhaustive = append(exhaustive, write(s, fmt.Sprintf("x%d", i), true))
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOARCH=arm64", "ROPEGEN_WANT_BACKENDS=neon generic")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOARCH=arm64 go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(append(append([]string{"vet"}, pkgs...), exhaustive...)...)
	args := append([]string{"test", "-count=1", "-short", "-v", "-run", "^(TestAll|TestNarrowExhaustive)$"}, exe...)
	out := run(append(append(args, "./"+rel+"/all"), exhaustive...)...)
	// Every check must have run and passed, none skipped.
	if n, x := strings.Count(out, "--- PASS: TestAll/"), strings.Count(out, "--- PASS: TestNarrowExhaustive ("); n != checks+len(specs) || x != len(exhaustive) ||
		strings.Count(out, "ok  \t") != 1+len(exhaustive) || strings.Contains(out, "--- SKIP") {
		t.Fatalf("%d of %d checks and %d of %d TestNarrowExhaustive passed:\n%s", n, checks+len(specs), x, len(exhaustive), out)
	}
	t.Logf("%d generated packages bit-identical to the pure Go kernels, and %d narrowing as the pure Go conversions, under %s", len(pkgs), len(exhaustive), strings.Join(append([]string{"GOARCH=arm64"}, exe...), " "))
}

// neonInternalTestFor is neonInternalTest for package name of spec s.
func neonInternalTestFor(s spec.Spec, name string) string {
	pair := "2 * i, 2*i + 1"
	if s.Layout == spec.NeoX {
		pair = "i, i + RotaryDim/2"
	}
	halfTo := "halfToKernel(nil)"
	switch s.OutDType {
	case "f16":
		halfTo = "b.shapes[0].half[0].to"
	case "bf16":
		halfTo = "b.shapes[0].half[1].to"
	}
	to := neonNoTo
	if s.OutDType != "" {
		nan := "h&0x7fff > 0x7c00"
		if s.OutDType == "bf16" {
			nan = "h&0x7fff > 0x7f80"
		}
		to = strings.ReplaceAll(neonToTest, "OUTNAN", nan)
	}
	return strings.NewReplacer(
		"package PKG", "package "+name,
		"PAIR", pair,
		"HALFTO", halfTo,
		"// DRAW\n", neonDraw[s.DType],
		"// TOTEST\n", to,
	).Replace(neonInternalTest)
}

// neonDraw holds, per dtype, drawElem (x values), drawComp (table values)
// and same (equal bits, or both NaN) for the test.
var neonDraw = map[string]string{
	"f32": neonDraw32 + `
func drawElem(r *rand.Rand) elem { return draw32(r) }

func drawComp(r *rand.Rand) comp { return draw32(r) }

func specialComp(r *rand.Rand) comp { return specials32[r.IntN(len(specials32))] }

// same reports whether a and b are the same bits, or both NaN.
func same(a, b elem) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
`,
	"f64": `
var specials64 = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -3,
	math.Float64frombits(1), math.Float64frombits(1<<63 | 1), // ±smallest subnormal
	math.Float64frombits(1<<52 - 1), math.Float64frombits(1<<63 | (1<<52 - 1)),
	math.SmallestNonzeroFloat64 * (1 << 52), math.MaxFloat64, -math.MaxFloat64, 1e308, -1e300, 1e-200, -1e-250,
	math.Inf(1), math.Inf(-1),
	math.NaN(), math.Float64frombits(0xfff8000000000001), math.Float64frombits(0x7ff0000000000001),
}

func draw64(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return specials64[r.IntN(len(specials64))]
	case 1:
		return math.Float64frombits(r.Uint64())
	default:
		return r.NormFloat64() * math.Exp2(float64(r.IntN(80)-40))
	}
}

func drawElem(r *rand.Rand) elem { return draw64(r) }

func drawComp(r *rand.Rand) comp { return draw64(r) }

func specialComp(r *rand.Rand) comp { return specials64[r.IntN(len(specials64))] }

func same(a, b elem) bool { return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b) }
`,
	"f16": neonDraw32 + `
// specials16: zeros, ±1, subnormals, the normal extremes, infinities,
// quiet and signaling NaNs.
var specials16 = []uint16{0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400,
	0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7c01, 0xfc01, 0x7e00, 0xfe00, 0x7fff, 0x3555}

func drawElem(r *rand.Rand) elem {
	switch r.IntN(4) {
	case 0:
		return specials16[r.IntN(len(specials16))]
	case 1:
		return uint16(r.Uint32())
	default:
		return uint16(r.IntN(2))<<15 | uint16(6+r.IntN(20))<<10 | uint16(r.IntN(1024))
	}
}

func drawComp(r *rand.Rand) comp { return draw32(r) }

func specialComp(r *rand.Rand) comp { return specials32[r.IntN(len(specials32))] }

func same(a, b elem) bool { return a == b || (a&0x7fff > 0x7c00 && b&0x7fff > 0x7c00) }
`,
	"bf16": neonDraw32 + `
var specials16 = []uint16{0, 0x8000, 0x3f80, 0xbf80, 0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080,
	0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7f81, 0xff81, 0x7fc0, 0xffc0, 0x7fff, 0xffff}

func drawElem(r *rand.Rand) elem {
	switch r.IntN(4) {
	case 0:
		return specials16[r.IntN(len(specials16))]
	case 1:
		return uint16(r.Uint32())
	default:
		return uint16(r.IntN(2))<<15 | uint16(100+r.IntN(56))<<7 | uint16(r.IntN(128))
	}
}

func drawComp(r *rand.Rand) comp { return draw32(r) }

func specialComp(r *rand.Rand) comp { return specials32[r.IntN(len(specials32))] }

func same(a, b elem) bool { return a == b || (a&0x7fff > 0x7f80 && b&0x7fff > 0x7f80) }
`,
}

// neonDraw32 draws float32 values.
const neonDraw32 = `
// specials32 are the values every kernel must treat exactly like the pure
// Go one: zeros of both signs, subnormals, the normal extremes, infinities,
// NaNs, products that overflow or underflow, and values that round to a
// tie or overflow when narrowed.
var specials32 = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -3,
	math.Float32frombits(1), math.Float32frombits(0x80000001), // ±smallest subnormal
	math.Float32frombits(0x007fffff), math.Float32frombits(0x807fffff), // ±largest subnormal
	math.Float32frombits(0x00800000), -math.Float32frombits(0x00800000), // ±smallest normal
	math.MaxFloat32, -math.MaxFloat32, 3e38, -2e38, 1e-20, -1e-25,
	float32(math.Inf(1)), float32(math.Inf(-1)),
	float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
	math.Float32frombits(0x7fff8001), math.Float32frombits(0xffffffff), math.Float32frombits(0x7f808000),
	math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000), math.Float32frombits(0x7f7f8000), // bf16 ties, overflow
	65504, 65520, -65519.996, 0x1p-24, 0x1p-25, 0x1.8p-24, 0x1p-14, 0x1.ffcp-15, // f16 extremes and ties
}

func draw32(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0:
		return specials32[r.IntN(len(specials32))]
	case 1:
		return math.Float32frombits(r.Uint32()) // anything, NaNs and subnormals included
	default:
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
}
`

// neonInternalTest is the file (neon_check.go, not a test file, so that one
// driver test can call every package's Check) added to every package
// TestARM64Kernels generates, with PKG, PAIR (the indices of pair i), ELEM
// and COMP (the types of x and of the table) filled in, DRAW replaced by the
// dtype's neonDraw and TOTEST by neonToTest for ApplyTo packages.
const neonInternalTest = `package PKG

import (
	"math"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// rowLen is the values of a table row, row one row.
const rowLen = 2 * RotaryDim

type row = [rowLen]comp

// kset is a backend's kernels of the package's shape, with the test's rows.
type kset struct {
	name     string
	fwd, inv func(x []elem, stride, n int, r *row)
	to       func(dst []uint16, ds int, src []float32, ss, n int, r *row)
}

// adapt returns b's kernels of the package's one shape. (&r[0] would read
// the row to check it is not nil: a kernel told to turn no heads gets a row
// on an unmapped page, which it must not touch.)
func adapt(b backend) kset {
	k := b.shapes[0]
	p := func(r *row) *comp { return (*comp)(unsafe.Pointer(r)) }
	s := kset{name: b.name,
		fwd: func(x []elem, stride, n int, r *row) { k.fwd(x, stride, n, p(r)) },
		inv: func(x []elem, stride, n int, r *row) { k.inv(x, stride, n, p(r)) },
	}
	if to := HALFTO; to != nil {
		s.to = func(dst []uint16, ds int, src []float32, ss, n int, r *row) { to(dst, ds, src, ss, n, p(r)) }
	}
	return s
}

// DRAW

// setPair writes c and s for pair i into a table row in its format:
// C[a] = C[b] = c, S[a] = −s, S[b] = s.
func setPair(tab *row, i int, c, s comp) {
	a, b := PAIR
	tab[a], tab[b], tab[RotaryDim+a], tab[RotaryDim+b] = c, c, -s, s
}

// realRows is a table of real rows to copy from (built once: a table of
// many positions would take long for a big head).
var realRows = NewTable(257)

// realRow copies the table row of a position in [0, 257) into tab.
func realRow(r *rand.Rand, tab *row) {
	copy(tab[:], unsafe.Slice(realRows.row(r.IntN(realRows.Len())), rowLen))
}

// fillTable fills tab for trial number trial: a real row, a row of drawn
// values, or a real row with some special values.
func fillTable(r *rand.Rand, tab *row, trial int) {
	switch trial % 3 {
	case 0:
		realRow(r, tab)
	case 1:
		for i := range RotaryDim / 2 {
			setPair(tab, i, drawComp(r), drawComp(r))
		}
	default:
		realRow(r, tab)
		for range 3 {
			setPair(tab, r.IntN(RotaryDim/2), specialComp(r), drawComp(r))
		}
	}
}

// guarded returns n values of fresh memory that a PROT_NONE page follows
// (end) or precedes (!end), so that reading or writing one value past them
// faults.
func guarded[T any](t *testing.T, n int, end bool) []T {
	t.Helper()
	sz := int(unsafe.Sizeof(*new(T)))
	page := syscall.Getpagesize()
	size := (sz*n + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, size+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[page+size:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	off := page
	if end {
		off = page + size - sz*n
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off])), n)
}

// reference returns the pure Go backend, checking the backend list.
func reference(t *testing.T) kset {
	ref := adapt(backends[len(backends)-1])
	if ref.name != "generic" {
		t.Fatalf("last backend is %q, want generic", ref.name)
	}
	if want := os.Getenv("ROPEGEN_WANT_BACKENDS"); want != "" {
		var names string
		for _, b := range backends {
			names += b.name + " "
		}
		if names != want+" " {
			t.Fatalf("backends %q, want %q", names, want)
		}
	}
	return ref
}

// trials is how many random tables and inputs each head count and stride
// gets.
func trials() int {
	n := 8
	if HeadDim >= 1024 {
		n = 2 // thousands of pairs a head already
	}
	if testing.Short() {
		n = 2
	}
	return n
}

// counts are the head counts checked: none, a few, and more than one pass
// of any unrolling.
var counts = []int{0, 1, 2, 3, 4, 5, 9}

// strides are the head strides checked with n heads: contiguous, a gap of
// one value, of three, and a large odd one; and for n ≤ 1, where any
// stride is valid, 0.
func strides(n int) []int {
	s := []int{HeadDim, HeadDim + 1, HeadDim + 3, 3*HeadDim + 5}
	if n <= 1 {
		s = append(s, 0)
	}
	return s
}

// viewLen is the length of a view of n heads at stride: exactly up to the
// end of the last head; HeadDim, a head the kernel must leave alone, for
// n = 0.
func viewLen(n, stride int) int {
	if n == 0 {
		return HeadDim
	}
	return (n-1)*stride + HeadDim
}

// inHead reports whether element i of a view of n heads at stride is one
// of the values [0, hi) of a head.
func inHead(i, n, stride, hi int) bool {
	if n == 0 {
		return false
	}
	if stride == 0 || n == 1 {
		return i < hi
	}
	return i/stride < n && i%stride < hi
}

// identical reports whether a and b are the same bits.
func identical[T any](a, b T) bool {
	sz := unsafe.Sizeof(a)
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&a)), sz)) == string(unsafe.Slice((*byte)(unsafe.Pointer(&b)), sz))
}

// pagedHeads maps n heads at a stride of whole pages (returned, in
// elements) of which only the values [0, hi) are readable and writable,
// each against a PROT_NONE page: the one after value hi−1 (atEnd) or the
// one before value 0 (!atEnd); every other byte of the view is PROT_NONE,
// so that touching anything but those values faults. For n = 0 the view is
// HeadDim values, none accessible.
func pagedHeads[T any](t *testing.T, n, hi int, atEnd bool) (x []T, stride int) {
	t.Helper()
	sz := int(unsafe.Sizeof(*new(T)))
	page := syscall.Getpagesize()
	p := (hi*sz + page - 1) / page // pages of one head's values
	m := p + 1                     // pages per head: its values and a guard
	total := 1 + n*m + (HeadDim*sz+page-1)/page + 1
	mem, err := syscall.Mmap(-1, 0, total*page, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	for h := range n {
		if err := syscall.Mprotect(mem[(1+h*m)*page:(1+h*m+p)*page], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			t.Fatal(err)
		}
	}
	stride = m * page / sz
	first := page
	if atEnd {
		first = (1+p)*page - hi*sz
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[first])), viewLen(n, stride)), stride
}

// noneRow returns a table row pointer into a PROT_NONE page: a kernel told
// to rotate no heads must not read the row either.
func noneRow(t *testing.T) *row {
	return (*row)(unsafe.Pointer(unsafe.SliceData(guarded[comp](t, 0, true))))
}

// Check runs checkBackends and, with ApplyTo, checkTo as subtests.
func Check(t *testing.T) {
	t.Run("backends", checkBackends)
	if toCheck != nil {
		t.Run("to", toCheck)
	}
}

// checkBackends runs every assembly backend against the pure Go one (the
// last backend) on random and special inputs and tables, forward and
// inverse, for every head count and stride of counts and strides with x
// and the table row placed against unmapped pages, and requires the same
// bits (NaN-ness only for NaNs) and every value outside the heads' rotary
// values exactly as it was; then with every head's rotary values alone
// mapped (checkPaged).
func checkBackends(t *testing.T) {
	ref := reference(t)
	r := rand.New(rand.NewPCG(uint64(HeadDim), uint64(RotaryDim)))
	for _, bb := range backends[:len(backends)-1] {
		b := adapt(bb)
		trial := 0
		for _, end := range []bool{true, false} {
			tab := (*row)(guarded[comp](t, rowLen, end))
			for _, n := range counts {
				for _, stride := range strides(n) {
					x := guarded[elem](t, viewLen(n, stride), end)
					want := make([]elem, len(x))
					orig := make([]elem, len(x))
					for range trials() {
						fillTable(r, tab, trial)
						for i := range x {
							x[i] = drawElem(r)
						}
						inverse := trial%2 == 1
						copy(want, x)
						copy(orig, x)
						if inverse {
							ref.inv(want, stride, n, tab)
							b.inv(x, stride, n, tab)
						} else {
							ref.fwd(want, stride, n, tab)
							b.fwd(x, stride, n, tab)
						}
						for i := range x {
							if !inHead(i, n, stride, RotaryDim) && !identical(x[i], orig[i]) {
								t.Fatalf("%s: %d heads at stride %d, trial %d inverse %v: x[%d] = %v changed to %v: not a rotary value",
									b.name, n, stride, trial, inverse, i, orig[i], x[i])
							}
							if !same(x[i], want[i]) {
								t.Fatalf("%s: %d heads at stride %d, trial %d inverse %v: x[%d] = %v, generic %v",
									b.name, n, stride, trial, inverse, i, x[i], want[i])
							}
						}
						trial++
					}
				}
			}
		}
		checkPaged(t, ref, b, r)
	}
}

// checkPaged runs b's forward and inverse kernels on heads of which only
// the rotary values are mapped, against unmapped pages on either side
// (pagedHeads), and requires the pure Go kernels' bits: a kernel that reads
// or writes a pass-through value, a gap or past a head faults.
func checkPaged(t *testing.T, ref, b kset, r *rand.Rand) {
	for _, atEnd := range []bool{true, false} {
		for _, n := range []int{0, 1, 2, 3, 5} {
			x, stride := pagedHeads[elem](t, n, RotaryDim, atEnd)
			tab := (*row)(guarded[comp](t, rowLen, atEnd))
			if n == 0 {
				tab = noneRow(t)
			}
			want := make([]elem, len(x))
			for trial := range 2 {
				if n > 0 {
					fillTable(r, tab, trial)
				}
				for h := range n {
					for i := range RotaryDim {
						x[h*stride+i] = drawElem(r)
						want[h*stride+i] = x[h*stride+i]
					}
				}
				if trial == 1 {
					ref.inv(want, stride, n, tab)
					b.inv(x, stride, n, tab)
				} else {
					ref.fwd(want, stride, n, tab)
					b.fwd(x, stride, n, tab)
				}
				for h := range n {
					for i := range RotaryDim {
						if j := h*stride + i; !same(x[j], want[j]) {
							t.Fatalf("%s: %d paged heads (values at the end of pages: %v) at stride %d, inverse %v: head %d value %d = %v, generic %v",
								b.name, n, atEnd, stride, trial == 1, h, i, x[j], want[j])
						}
					}
				}
			}
		}
	}
}

// TOTEST
`

// neonNoTo is the TOTEST of packages without ApplyTo.
const neonNoTo = `
var toCheck func(*testing.T)
`

// neonToTest is the ApplyTo part of neonInternalTest, with OUTNAN the NaN
// test of the out dtype's bits h.
const neonToTest = `
func isNaNOut(h uint16) bool { return OUTNAN }

var toCheck = checkTo

// checkTo runs every assembly backend's rotate-and-narrow kernel against
// the pure Go one on random and special inputs and tables, for every head
// count of counts, each stride of strides for src with dst at the same
// stride and at the next one, src, dst and the table row against unmapped
// pages, and requires the same bits in dst (NaN-ness only for NaNs), dst
// outside the heads exactly as it was and src unchanged; then with the
// heads of src and dst alone mapped (checkToPaged).
func checkTo(t *testing.T) {
	ref := reference(t)
	r := rand.New(rand.NewPCG(uint64(HeadDim), uint64(RotaryDim)+1))
	for _, bb := range backends[:len(backends)-1] {
		b := adapt(bb)
		trial := 0
		for _, end := range []bool{true, false} {
			tab := (*row)(guarded[comp](t, rowLen, end))
			for _, n := range counts {
				ss := strides(n)
				for k, srcStride := range ss {
					for _, dstStride := range []int{srcStride, ss[(k+1)%len(ss)]} {
						src := guarded[float32](t, viewLen(n, srcStride), end)
						dst := guarded[uint16](t, viewLen(n, dstStride), !end)
						for range max(1, trials()/2) {
							fillTable(r, tab, trial)
							for i := range src {
								src[i] = draw32(r)
							}
							for i := range dst {
								dst[i] = uint16(r.Uint32())
							}
							orig := append([]float32(nil), src...)
							before := append([]uint16(nil), dst...)
							want := append([]uint16(nil), dst...)
							ref.to(want, dstStride, src, srcStride, n, tab)
							b.to(dst, dstStride, src, srcStride, n, tab)
							for i := range dst {
								if !inHead(i, n, dstStride, HeadDim) && dst[i] != before[i] {
									t.Fatalf("%s: %d heads, dst stride %d, src stride %d, trial %d: dst[%d] = %#04x changed to %#04x: in no head",
										b.name, n, dstStride, srcStride, trial, i, before[i], dst[i])
								}
								if dst[i] != want[i] && !(isNaNOut(dst[i]) && isNaNOut(want[i])) {
									t.Fatalf("%s: %d heads, dst stride %d, src stride %d, trial %d: dst[%d] = %#04x, generic %#04x",
										b.name, n, dstStride, srcStride, trial, i, dst[i], want[i])
								}
							}
							for i := range src {
								if math.Float32bits(src[i]) != math.Float32bits(orig[i]) {
									t.Fatalf("%s: %d heads, dst stride %d, src stride %d, trial %d: src[%d] changed",
										b.name, n, dstStride, srcStride, trial, i)
								}
							}
							trial++
						}
					}
				}
			}
		}
		checkToPaged(t, ref, b, r)
	}
}

// checkToPaged runs b's rotate-and-narrow kernel on heads of src and dst
// of which nothing but the HeadDim values is mapped, against unmapped
// pages after their ends or before their starts (pagedHeads; src and dst
// each way), and requires the pure Go kernel's bits in dst and src
// unchanged.
func checkToPaged(t *testing.T, ref, b kset, r *rand.Rand) {
	for k, atEnd := range [][2]bool{{true, true}, {false, false}, {true, false}, {false, true}} {
		for _, n := range []int{0, 1, 2, 3, 5} {
			src, srcStride := pagedHeads[float32](t, n, HeadDim, atEnd[0])
			dst, dstStride := pagedHeads[uint16](t, n, HeadDim, atEnd[1])
			tab := (*row)(guarded[comp](t, rowLen, atEnd[0]))
			if n == 0 {
				tab = noneRow(t)
			} else {
				fillTable(r, tab, k)
			}
			want := make([]uint16, len(dst))
			refSrc := make([]float32, len(src))
			for h := range n {
				for i := range HeadDim {
					src[h*srcStride+i] = draw32(r)
					refSrc[h*srcStride+i] = src[h*srcStride+i]
					dst[h*dstStride+i] = uint16(r.Uint32())
					want[h*dstStride+i] = dst[h*dstStride+i]
				}
			}
			ref.to(want, dstStride, refSrc, srcStride, n, tab)
			b.to(dst, dstStride, src, srcStride, n, tab)
			for h := range n {
				for i := range HeadDim {
					if j := h*dstStride + i; dst[j] != want[j] && !(isNaNOut(dst[j]) && isNaNOut(want[j])) {
						t.Fatalf("%s: %d paged heads (at the end of pages: %v) at strides %d, %d: head %d value %d = %#04x, generic %#04x",
							b.name, n, atEnd, dstStride, srcStride, h, i, dst[j], want[j])
					}
					if j := h*srcStride + i; math.Float32bits(src[j]) != math.Float32bits(refSrc[j]) {
						t.Fatalf("%s: %d paged heads: src head %d value %d changed", b.name, n, h, i)
					}
				}
			}
		}
	}
}
`
