package gen

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/templates"
)

var golden = flag.Bool("golden", false, "rewrite testdata/golden/*.s with the generator's output")

func neonSpec(dim, rotary int, layout string) Spec {
	s := DefaultSpec()
	s.HeadDim, s.RotaryDim, s.Layout = dim, rotary, layout
	return s
}

// neonGolden are the specs whose rope_arm64.s is kept in testdata/golden:
// tails of both widths (6/6), every tail with neox (64/46), and a row too
// big for the registers, so that part of the table is loaded every head
// (128/128).
var neonGolden = []struct {
	file string
	spec Spec
}{
	{"arm64_h6_r6_interleaved.s", neonSpec(6, 6, Interleaved)},
	{"arm64_h64_r46_neox.s", neonSpec(64, 46, NeoX)},
	{"arm64_h128_r128_interleaved.s", neonSpec(128, 0, Interleaved)},
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

// TestARM64Files checks the shape of the two files: header, constraint,
// include, both functions with the frame asmdecl expects, no fused
// multiply-add, and the Go side's declarations and dispatch.
func TestARM64Files(t *testing.T) {
	header := Header("-dim 64")
	for _, s := range []Spec{neonSpec(2, 0, Interleaved), neonSpec(64, 0, NeoX), neonSpec(4096, 4094, Interleaved)} {
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		asm, src, err := p.arm64Files(header)
		if err != nil {
			t.Fatal(err)
		}
		wantStart := header + "\n\n//go:build arm64 && !purego\n\n#include \"textflag.h\"\n"
		if !strings.HasPrefix(string(asm), wantStart) {
			t.Errorf("%d/%d: rope_arm64.s starts %q, want %q", s.HeadDim, s.RotaryDim, string(asm)[:min(len(asm), len(wantStart))], wantStart)
		}
		for _, fn := range []string{"applyNEON", "applyInverseNEON"} {
			if !strings.Contains(string(asm), "TEXT ·"+fn+"(SB), NOSPLIT, $0-32\n") {
				t.Errorf("%d/%d: no TEXT line for %s", s.HeadDim, s.RotaryDim, fn)
			}
			if !strings.Contains(string(src), "//go:noescape\nfunc "+fn+"(x []float32, r *[rowLen]float32)\n") {
				t.Errorf("%d/%d: rope_arm64.go: no noescape stub for %s", s.HeadDim, s.RotaryDim, fn)
			}
		}
		if l := strings.ToLower(string(asm)); strings.Contains(l, "fmla") || strings.Contains(l, "fmls") || strings.Contains(l, "fmadd") || strings.Contains(l, "fmsub") {
			t.Errorf("%d/%d: rope_arm64.s has a fused multiply-add", s.HeadDim, s.RotaryDim)
		}
		for _, want := range []string{"//go:build arm64 && !purego\n", `backend{name: "neon", fwd: applyNEON, inv: applyInverseNEON}`, "cpu.ARM64.HasASIMD"} {
			if !strings.Contains(string(src), want) {
				t.Errorf("%d/%d: rope_arm64.go lacks %q", s.HeadDim, s.RotaryDim, want)
			}
		}
	}
}

// Specs the NEON kernels do not cover get no rope_arm64.s and no assembly
// backend on arm64.
func TestARM64Unsupported(t *testing.T) {
	for _, s := range neonUnsupportedSpecs() {
		files, err := Generate(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Name == "rope_arm64.s" {
				t.Errorf("dtype %s out %q: rope_arm64.s generated", s.DType, s.OutDType)
			}
			if f.Name == "rope_arm64.go" && (!bytes.Contains(f.Data, []byte("func archBackends() []backend {\n\treturn nil\n}")) || bytes.Contains(f.Data, []byte("NEON("))) {
				t.Errorf("dtype %s out %q: rope_arm64.go offers assembly:\n%s", s.DType, s.OutDType, f.Data)
			}
		}
	}
}

// neonUnsupportedSpecs are specs with no NEON kernels.
func neonUnsupportedSpecs() []Spec {
	var specs []Spec
	for _, d := range [][2]string{{"f64", ""}, {"f16", ""}, {"bf16", ""}, {"f32", "f16"}} {
		s := neonSpec(64, 0, NeoX)
		s.DType, s.OutDType = d[0], d[1]
		specs = append(specs, s)
	}
	return specs
}

// TestNEONKernelPlan checks the Kernel of every geometry up to head dim 300
// and some big ones: the blocks cover every pair once, widest first; every
// load and store stays inside the head's rotary values and the row; the
// pointers walk exactly one head; and the registers obey the layout
// templates.Kernel documents (simulating the preload order).
func TestNEONKernelPlan(t *testing.T) {
	var specs []Spec
	for dim := 2; dim <= 300; dim += 2 {
		for r := 2; r <= dim; r += 2 {
			if dim > 64 && r%8 != 2 && r%8 != 4 && r != dim {
				continue // the tails repeat with period 8; keep the variety, drop the bulk
			}
			specs = append(specs, neonSpec(dim, r, Interleaved), neonSpec(dim, r, NeoX))
		}
	}
	for _, r := range []int{4096, 4094, 4092, 2, 80, 82} {
		specs = append(specs, neonSpec(4096, r, Interleaved), neonSpec(4096, r, NeoX))
	}
	for _, s := range specs {
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNEONKernel(p.neonKernel("")); err != nil {
			t.Fatalf("head %d rotary %d %s: %v", s.HeadDim, p.RotaryDim, s.Layout, err)
		}
	}
}

func checkNEONKernel(k *templates.Kernel) error {
	const elem = 4
	R, h := k.RotaryDim, k.Half
	pair, walked, tailSeen := 0, 0, 0
	loopC, loopS, loopStarted := k.LoopC, k.LoopS, false
	var blocks []templates.Block
	for _, g := range k.Groups {
		if len(g.Blocks) == 0 || len(g.Blocks) > 2 || g.First != g.Blocks[0].Pair || g.Last != g.Blocks[len(g.Blocks)-1].Last {
			return fmt.Errorf("bad group %+v", g)
		}
		blocks = append(blocks, g.Blocks...)
	}
	if len(blocks) != len(k.Blocks) {
		return fmt.Errorf("groups hold %d blocks, plan %d", len(blocks), len(k.Blocks))
	}
	want := min(len(k.Blocks), templates.MaxPreload)
	if k.Preloaded != want {
		return fmt.Errorf("Preloaded = %d, want %d", k.Preloaded, want)
	}
	for n, b := range k.Blocks {
		if blocks[n].Index != n || b.Index != n || b.Pair != pair || b.Last != pair+b.Pairs-1 {
			return fmt.Errorf("block %d = %+v: out of order (next pair %d)", n, b, pair)
		}
		switch b.Pairs {
		case 4:
			if tailSeen > 0 {
				return fmt.Errorf("block %d: 4 pairs after a tail", n)
			}
		case 2, 1:
			if tailSeen != 0 && tailSeen <= b.Pairs {
				return fmt.Errorf("block %d: tail of %d after a tail of %d", n, b.Pairs, tailSeen)
			}
			if h-pair >= 2*b.Pairs {
				return fmt.Errorf("block %d: %d pairs with %d left", n, b.Pairs, h-pair)
			}
			tailSeen = b.Pairs
		default:
			return fmt.Errorf("block %d: %d pairs", n, b.Pairs)
		}
		if b.Scalar != (b.Pairs == 1) || (!b.Scalar && (b.Arr != fmt.Sprintf("%dS", b.Pairs) || b.GoArr != fmt.Sprintf("S%d", b.Pairs))) {
			return fmt.Errorf("block %d: arrangement %q/%q for %d pairs", n, b.Arr, b.GoArr, b.Pairs)
		}
		// Memory: x in [0, 4R) of the head, the table in the row.
		xa, xb, cl, sl := 2*pair*elem, (2*pair+1)*elem, 2*pair*elem, (R+2*pair)*elem
		span := 2 * b.Pairs * elem
		if k.NeoX {
			xa, xb, cl, sl, span = pair*elem, (h+pair)*elem, pair*elem, (R+h+pair)*elem, b.Pairs*elem
		}
		if b.Scalar && !k.NeoX {
			sl += elem // one value, S[b]
		}
		if b.XA != xa || b.XB != xb || b.CLoad != cl || b.SLoad != sl || b.COff != cl || b.XBytes != span || b.TBytes != span {
			return fmt.Errorf("block %d: offsets %+v", n, b)
		}
		tbytes := span
		if b.Scalar {
			tbytes = elem
		}
		if b.XA+span > R*elem || (k.NeoX && (b.XA+span > h*elem || b.XB+span > R*elem)) ||
			b.CLoad+tbytes > R*elem || b.SLoad < R*elem || b.SLoad+tbytes > 2*R*elem || k.RowLen != 2*R {
			return fmt.Errorf("block %d: reads or writes outside the head or the row: %+v", n, b)
		}
		walked += b.XBytes
		// Registers.
		base := 10 + 6*(n%2)
		if b.A != base || b.B != base+1 || b.P0 != base+2 || b.P1 != base+3 || b.P2 != base+4 || b.P3 != base+5 {
			return fmt.Errorf("block %d: working registers %+v", n, b)
		}
		if b.Preloaded != (n < k.Preloaded) {
			return fmt.Errorf("block %d: Preloaded = %v", n, b.Preloaded)
		}
		if b.Preloaded {
			if b.C != 10-k.Preloaded+n || b.S != 22+n {
				return fmt.Errorf("block %d: table registers C=%d S=%d", n, b.C, b.S)
			}
		} else {
			if b.C != b.P0 || b.S != b.P3 {
				return fmt.Errorf("block %d: loaded in the loop into C=%d S=%d, want P0, P3", n, b.C, b.S)
			}
			if !b.Scalar {
				if !k.LoopTable || b.CLoad != loopC || b.SLoad != loopS {
					return fmt.Errorf("block %d: table pointers at %d/%d, block reads %d/%d", n, loopC, loopS, b.CLoad, b.SLoad)
				}
				loopC, loopS, loopStarted = loopC+b.TBytes, loopS+b.TBytes, true
			}
		}
		pair += b.Pairs
	}
	if pair != h {
		return fmt.Errorf("blocks cover %d pairs, want %d", pair, h)
	}
	if k.LoopTable != loopStarted {
		return fmt.Errorf("LoopTable = %v, but vector blocks loaded in the loop: %v", k.LoopTable, loopStarted)
	}
	perHead := R * elem
	if k.NeoX {
		perHead = h * elem
	}
	if walked != perHead || walked+k.Skip != k.HeadDim*elem || k.HalfBytes != h*elem {
		return fmt.Errorf("x pointers walk %d + skip %d bytes, want %d per head", walked, k.Skip, k.HeadDim*elem)
	}
	// Simulate the preloads: every kept value must survive to the loop, and
	// every other register written must be a working register or be
	// overwritten later by a kept value.
	held := map[int]string{}
	for _, l := range k.Preload {
		b := k.Blocks[l.Block]
		wantRegs := 1
		if !k.NeoX && !l.Scalar {
			wantRegs = 2
		}
		if len(l.Regs) != wantRegs || l.Scalar != b.Scalar || l.GoArr != b.GoArr {
			return fmt.Errorf("preload %+v for block %+v", l, b)
		}
		if wantRegs == 2 && l.Regs[1] != l.Regs[0]+1 {
			return fmt.Errorf("preload %+v: LD2 registers not consecutive", l)
		}
		keep, off := b.C, b.CLoad
		if l.What == "s" {
			keep, off = b.S, b.SLoad
		}
		if l.Keep != keep || l.Off != off {
			return fmt.Errorf("preload %+v: want %s of block %d in V%d from %d", l, l.What, l.Block, keep, off)
		}
		for _, r := range l.Regs {
			if r < 0 || r > 31 {
				return fmt.Errorf("preload %+v: register out of range", l)
			}
			held[r] = ""
		}
		held[l.Keep] = fmt.Sprintf("%s%d", l.What, l.Block)
	}
	for n, b := range k.Blocks[:k.Preloaded] {
		if held[b.C] != fmt.Sprintf("c%d", n) || held[b.S] != fmt.Sprintf("s%d", n) {
			return fmt.Errorf("block %d: after the preloads V%d holds %q, V%d holds %q", n, b.C, held[b.C], b.S, held[b.S])
		}
	}
	for r, v := range held {
		if v == "" && (r < 10 || r > 21) {
			return fmt.Errorf("preloads leave a stray value in V%d, outside the working registers", r)
		}
	}
	return nil
}

// neonKernelSpecs are the geometries run under qemu: every head dim the
// issue names, full and partial rotary, every tail (2 and 1 pairs), rows
// that fit in the registers and rows that do not (with 4-, 2- and 1-pair
// blocks loaded every head).
func neonKernelSpecs(short bool) []Spec {
	dims := [][2]int{
		{2, 0}, {6, 0}, {6, 4}, {6, 2},
		{64, 0}, {64, 14}, {64, 10},
		{96, 0}, {96, 36},
		{128, 0}, {128, 46}, {128, 94},
		{256, 0}, {256, 64}, {256, 82},
		{4096, 0}, {4096, 4094},
	}
	if short {
		dims = [][2]int{{2, 0}, {6, 0}, {64, 14}, {128, 0}, {128, 94}, {4096, 4094}}
	}
	var specs []Spec
	for _, d := range dims {
		specs = append(specs, neonSpec(d[0], d[1], Interleaved), neonSpec(d[0], d[1], NeoX))
	}
	return specs
}

// TestARM64Kernels generates packages for neonKernelSpecs inside this
// module (so they import golang.org/x/sys/cpu as they are), adds
// neonInternalTest to each, vets them for arm64 (asmdecl checks the frames)
// and runs them under qemu-aarch64-static (natively on linux/arm64): every
// backend bit for bit against the pure Go one.
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
	// write generates s as package name in dir, with extra files, and
	// returns its relative import path.
	write := func(s Spec, name string, extra ...File) string {
		t.Helper()
		s.Package = name
		files, err := Generate(s, Options{Command: "-test"})
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
		return "./" + filepath.ToSlash(filepath.Join("internal", filepath.Base(dir), name))
	}
	var pkgs []string
	for i, s := range neonKernelSpecs(testing.Short()) {
		name := fmt.Sprintf("p%d", i)
		pair := "2 * i, 2*i + 1"
		if s.Layout == NeoX {
			pair = "i, i + RotaryDim/2"
		}
		test := strings.NewReplacer("package PKG", "package "+name, "PAIR", pair).Replace(neonInternalTest)
		pkgs = append(pkgs, write(s, name, File{"neon_internal_test.go", []byte(test)}))
	}
	// Packages without NEON kernels must still build for arm64.
	vetOnly := append([]string(nil), pkgs...)
	for i, s := range neonUnsupportedSpecs() {
		vetOnly = append(vetOnly, write(s, fmt.Sprintf("q%d", i)))
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
	run(append([]string{"vet"}, vetOnly...)...)
	args := append([]string{"test", "-count=1"}, exe...)
	if testing.Short() {
		args = append(args, "-short")
	}
	out := run(append(args, pkgs...)...)
	if n := strings.Count(out, "ok  \t"); n != len(pkgs) {
		t.Fatalf("%d of %d packages passed:\n%s", n, len(pkgs), out)
	}
	t.Logf("%d generated packages bit-identical to the pure Go kernels under %s", len(pkgs), strings.Join(append([]string{"GOARCH=arm64"}, exe...), " "))
}

// neonInternalTest is the test file added to every package TestARM64Kernels
// generates, with PKG and PAIR (the indices of pair i) filled in.
const neonInternalTest = `package PKG

import (
	"math"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// specials are the values every kernel must treat exactly like the pure Go
// one: zeros of both signs, subnormals, the normal extremes, infinities,
// NaNs, and products that overflow or underflow.
var specials = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -3,
	math.Float32frombits(1), math.Float32frombits(0x80000001), // ±smallest subnormal
	math.Float32frombits(0x007fffff), math.Float32frombits(0x807fffff), // ±largest subnormal
	math.Float32frombits(0x00800000), -math.Float32frombits(0x00800000), // ±smallest normal
	math.MaxFloat32, -math.MaxFloat32, 3e38, -2e38, 1e-20, -1e-25,
	float32(math.Inf(1)), float32(math.Inf(-1)),
	float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
}

func draw(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0:
		return specials[r.IntN(len(specials))]
	case 1:
		return math.Float32frombits(r.Uint32()) // anything, NaNs and subnormals included
	default:
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
}

// setPair writes c and s for pair i into a table row in its format:
// C[a] = C[b] = c, S[a] = −s, S[b] = s.
func setPair(tab *row, i int, c, s float32) {
	a, b := PAIR
	tab[a], tab[b], tab[RotaryDim+a], tab[RotaryDim+b] = c, c, -s, s
}

// guarded returns n float32 values of fresh memory that a PROT_NONE page
// follows (end) or precedes (!end), so that reading or writing one value
// past them faults.
func guarded(t *testing.T, n int, end bool) []float32 {
	t.Helper()
	page := syscall.Getpagesize()
	size := (4*n + page - 1) / page * page
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
		off = page + size - 4*n
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[off])), n)
}

// same reports whether a and b are the same bits, or both NaN.
func same(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestBackendsBitIdentical runs every assembly backend against the pure Go
// one (the last backend) on random and special inputs and tables, 1…9
// heads, forward and inverse, with x and the table row placed against
// unmapped pages, and requires the same bits (NaN-ness only for NaNs).
func TestBackendsBitIdentical(t *testing.T) {
	ref := backends[len(backends)-1]
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
	trials := 24
	if HeadDim >= 1024 {
		trials = 6 // thousands of pairs a head already
	}
	if testing.Short() {
		trials /= 4
	}
	r := rand.New(rand.NewPCG(uint64(HeadDim), uint64(RotaryDim)))
	for _, b := range backends[:len(backends)-1] {
		for _, end := range []bool{true, false} {
			tab := (*row)(guarded(t, rowLen, end))
			for heads := 1; heads <= 9; heads++ {
				x := guarded(t, heads*HeadDim, end)
				want := make([]float32, len(x))
				for trial := range trials {
					switch trial % 3 {
					case 0:
						fillRow(tab, r.IntN(1<<20))
					case 1:
						for i := range RotaryDim / 2 {
							setPair(tab, i, draw(r), draw(r))
						}
					default:
						fillRow(tab, r.IntN(1<<14))
						for range 3 {
							setPair(tab, r.IntN(RotaryDim/2), specials[r.IntN(len(specials))], draw(r))
						}
					}
					for i := range x {
						x[i] = draw(r)
					}
					inverse := trial%2 == 1
					copy(want, x)
					if inverse {
						ref.inv(want, tab)
						b.inv(x, tab)
					} else {
						ref.fwd(want, tab)
						b.fwd(x, tab)
					}
					for i := range x {
						if !same(x[i], want[i]) {
							t.Fatalf("%s: heads %d trial %d inverse %v: x[%d] = %v (%#08x), generic %v (%#08x)",
								b.name, heads, trial, inverse, i, x[i], math.Float32bits(x[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
		// No heads, and a short tail the kernel must leave alone (only the
		// NEON kernels promise to stop, like the pure Go loop, at the last
		// whole head).
		b.fwd(nil, (*row)(guarded(t, rowLen, true)))
		if b.name == "neon" {
			for _, n := range []int{HeadDim - 1, 2*HeadDim + 1} {
				x := guarded(t, n, true)
				for i := range x {
					x[i] = draw(r)
				}
				want := append([]float32(nil), x...)
				tab := (*row)(guarded(t, rowLen, true))
				fillRow(tab, 7)
				ref.fwd(want, tab)
				b.fwd(x, tab)
				for i := range x {
					if !same(x[i], want[i]) {
						t.Fatalf("%s: len %d: x[%d] = %v, generic %v", b.name, n, i, x[i], want[i])
					}
				}
			}
		}
	}
}
`
