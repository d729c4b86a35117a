package verify

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/x448/float16"
	"pgregory.net/rapid"
)

// ---- a small, plainly correct kernel ---------------------------------------
//
// refKernel follows docs/contract.md and gen/plan.go's row format: per position a row
// of 2·RotaryDim compute-type values, C then S, C[a] = C[b] = A·cos φ,
// S[a] = −A·sin φ, S[b] = A·sin φ, and y_j = fl(fl(x_j·C[j]) ± fl(x_q·S[j])).
// It narrows f16 with x448/float16 and bf16 with its own nearest-even search,
// independently of verify's codec. A mutation breaks it on purpose.

type mutation struct {
	flipSin      bool    // table holds −sin: forward rotates by −φ
	fma          bool    // backend "fma" fuses the second product into the sum
	ulp          int     // backend "ulp" is one ulp up on y_a: 1 always, 2 only for subnormal x_a
	posOffset    int     // the Table entry points read row pos+posOffset (Rotate is right)
	ftz          bool    // compute-type subnormal inputs flushed to zero
	inverseNoNeg bool    // the inverse entry points rotate forward
	nonlinear    bool    // φ = (p + p²/10⁴)·θ
	scale        float64 // outputs multiplied by scale (0: none)
	noChecks     bool    // no argument checks
	panicEmpty   bool    // panics on empty x
	freqsF32     bool    // Freqs computed in float32
	racy         bool    // Table.Apply corrupts its output when another call overlaps it
	rangeNoStart bool    // a range table reads row pos instead of pos−start (past its end: the last)
	paramsAttn   bool    // NewTableParams and NewTableRange ignore attn (use the kernel's)
	batchPos0    bool    // Batch.Set fills the row of the first position for every token
}

type refKernel[T Elem] struct {
	dt           kind // dtype, as verify's kind constants
	hd, rd, half int
	neox, f64    bool
	freqs        []float64
	attn         float64
	m            mutation
	fused, ulp   bool // the active backend is "fma" with m.fma, or "ulp"
}

func newRef[T Elem](dt string, hd, rd int, layout string, attn float64, m mutation, backends ...string) Kernel[T] {
	kinds := map[string]kind{"f32": kF32, "f64": kF64, "f16": kF16, "bf16": kBF16}
	k := &refKernel[T]{dt: kinds[dt], hd: hd, rd: rd, half: rd / 2, neox: layout == "neox", f64: dt == "f64", attn: attn, m: m}
	scaling := "none"
	for i := range k.half {
		f := math.Pow(10000, -float64(2*i)/float64(rd))
		if m.freqsF32 {
			f = float64(float32(math.Pow(10000, float64(float32(-float64(2*i)/float64(rd))))))
		}
		if attn != 1 {
			f /= 4
			scaling = "yarn"
		}
		k.freqs = append(k.freqs, f)
	}
	if len(backends) == 0 {
		backends = []string{"unrolled", "generic"}
	}
	kern := Kernel[T]{
		DType: dt, HeadDim: hd, RotaryDim: rd, Layout: layout, Base: 10000, Scaling: scaling,
		Freqs: k.freqs, AttentionFactor: attn,
		NewTable:      func(n int) Table[T] { return k.newTable(n) },
		Rotate:        func(x []T, pos int) { k.rotate("Rotate", x, pos, false) },
		RotateInverse: func(x []T, pos int) { k.rotate("RotateInverse", x, pos, true) },
		Runtime: &Runtime[T]{
			NewTableParams: func(freqs []float64, attn float64, _ []uint8, n int) Table[T] {
				return k.newTableRange("NewTableParams", freqs, attn, 0, n)
			},
			NewTableRange: func(freqs []float64, attn float64, _ []uint8, start, n int) Table[T] {
				return k.newTableRange("NewTableRange", freqs, attn, start, n)
			},
			TableParams: func(int) ([]float64, float64) { return k.freqs, k.attn },
			NilTable:    (*refTable[T])(nil),
			NewBatch: func(freqs []float64, attn float64, _ []uint8, capacity int) Batch[T] {
				return &refBatch[T]{t: k.newTableRange("NewBatch", freqs, attn, 0, 0), capacity: capacity}
			},
		},
	}
	for _, name := range backends {
		use := func() { k.fused, k.ulp = name == "fma" && m.fma, name == "ulp" }
		kern.Backends = append(kern.Backends, Backend{Name: name, Use: use})
	}
	kern.Backends[0].Use()
	return kern
}

func (k *refKernel[T]) pair(i int) (a, b int) {
	if k.neox {
		return i, i + k.half
	}
	return 2 * i, 2*i + 1
}

func (k *refKernel[T]) round(v float64) float64 {
	if k.f64 {
		return v
	}
	return float64(float32(v))
}

func (k *refKernel[T]) fillRow(r []float64, pos int) { k.fillRowWith(r, pos, k.freqs, k.attn) }

// fillRowWith is fillRow with the frequencies and the factor given.
func (k *refKernel[T]) fillRowWith(r []float64, pos int, freqs []float64, attn float64) {
	for i, th := range freqs {
		p := float64(pos)
		if k.m.nonlinear {
			p += p * p / 1e4
		}
		sin, cos := math.Sincos(p * th)
		c, s := k.round(attn*cos), k.round(attn*sin)
		if k.m.flipSin {
			s = -s
		}
		a, b := k.pair(i)
		r[a], r[b] = c, c
		r[k.rd+a], r[k.rd+b] = -s, s
	}
}

type refTable[T Elem] struct {
	k        *refKernel[T]
	rows     []float64
	n        int
	start    int          // the first position (NewTableRange)
	inflight atomic.Int32 // calls in progress, for mutation.racy
}

// overlapped reports whether another call enters the table within 2 ms of
// this one: the racy mutant's stand-in for shared scratch state.
func (t *refTable[T]) overlapped() bool {
	t.inflight.Add(1)
	defer t.inflight.Add(-1)
	for start := time.Now(); time.Since(start) < 2*time.Millisecond; runtime.Gosched() {
		if t.inflight.Load() > 1 {
			return true
		}
	}
	return false
}

func (k *refKernel[T]) newTable(n int) *refTable[T] {
	if n < 0 && !k.m.noChecks {
		panic(fmt.Sprintf("refrope: NewTable: maxPos = %d: want maxPos >= 0", n))
	}
	rows := n + k.m.posOffset
	t := &refTable[T]{k: k, rows: make([]float64, rows*2*k.rd), n: n}
	for p := range rows {
		k.fillRow(t.rows[p*2*k.rd:(p+1)*2*k.rd], p)
	}
	return t
}

func (t *refTable[T]) Len() int {
	if t == nil {
		panic("refrope: Len: nil table")
	}
	return t.n
}

func (t *refTable[T]) Start() int { return t.start }

func (t *refTable[T]) row(pos int) []float64 {
	pos += t.k.m.posOffset - t.start
	if t.k.m.rangeNoStart {
		pos = min(pos+t.start, t.n-1)
	}
	return t.rows[pos*2*t.k.rd : (pos+1)*2*t.k.rd]
}

// newTableRange is NewTableParams (start 0) and NewTableRange.
func (k *refKernel[T]) newTableRange(fn string, freqs []float64, attn float64, start, n int) *refTable[T] {
	if !k.m.noChecks {
		for i, f := range freqs {
			if !(f >= 0) || math.IsInf(f, 1) || n > 0 && math.IsInf(float64(start+n-1)*f, 0) {
				panic(fmt.Sprintf("refrope: %s: Freqs[%d] = %v: want finite and >= 0, every angle finite", fn, i, f))
			}
		}
		if !(attn > 0) || math.IsInf(attn, 1) {
			panic(fmt.Sprintf("refrope: %s: Attn = %v: want finite and > 0", fn, attn))
		}
		if start < 0 || n < 0 || start > math.MaxInt-n {
			panic(fmt.Sprintf("refrope: %s: start = %d, n = %d (maxPos = %d): want both >= 0", fn, start, n, n))
		}
	}
	if k.m.paramsAttn {
		attn = k.attn
	}
	t := &refTable[T]{k: k, rows: make([]float64, (n+k.m.posOffset)*2*k.rd), n: n, start: start}
	for p := range n + k.m.posOffset {
		k.fillRowWith(t.rows[p*2*k.rd:(p+1)*2*k.rd], start+p, freqs, attn)
	}
	return t
}

// refBatch is a Batch over a refTable whose row j is token j's.
type refBatch[T Elem] struct {
	t        *refTable[T]
	capacity int
	pos      []int32
	freqs    []float64
}

func (b *refBatch[T]) Set(pos []int32) {
	if len(pos) > b.capacity {
		panic(fmt.Sprintf("refrope: Batch.Set: len(pos) = %d: want at most %d", len(pos), b.capacity))
	}
	for j, p := range pos {
		if p < 0 {
			panic(fmt.Sprintf("refrope: Batch.Set: pos[%d] = %d: want >= 0", j, p))
		}
	}
	k := b.t.k
	b.pos = append(b.pos[:0], pos...)
	b.t.n, b.t.rows = len(pos), make([]float64, len(pos)*2*k.rd)
	for j, p := range pos {
		if k.m.batchPos0 {
			p = pos[0]
		}
		k.fillRow(b.t.rows[j*2*k.rd:(j+1)*2*k.rd], int(p))
	}
}

func (b *refBatch[T]) Len() int { return len(b.pos) }

func (b *refBatch[T]) tokens() []int32 {
	idx := make([]int32, len(b.pos))
	for j := range idx {
		idx[j] = int32(j)
	}
	return idx
}

func (b *refBatch[T]) ApplySeq(x []T)        { b.t.ApplySeq(x, b.tokens()) }
func (b *refBatch[T]) ApplyInverseSeq(x []T) { b.t.ApplyInverseSeq(x, b.tokens()) }

func (t *refTable[T]) Apply(x []T, pos int)        { t.one("Apply", x, pos, false) }
func (t *refTable[T]) ApplyInverse(x []T, pos int) { t.one("ApplyInverse", x, pos, true) }
func (t *refTable[T]) ApplySeq(x []T, pos []int32) { t.seq("ApplySeq", x, pos, false) }
func (t *refTable[T]) ApplyInverseSeq(x []T, pos []int32) {
	t.seq("ApplyInverseSeq", x, pos, true)
}

func (t *refTable[T]) one(name string, x []T, pos int, inverse bool) {
	if t == nil {
		panic("refrope: " + name + ": nil table")
	}
	k := t.k
	if !k.m.noChecks {
		if len(x)%k.hd != 0 {
			panic(fmt.Sprintf("refrope: %s: len(x) = %d is not a multiple of HeadDim %d", name, len(x), k.hd))
		}
		if pos < t.start || pos >= t.start+t.n {
			panic(fmt.Sprintf("refrope: %s: pos %d out of range [%d, %d)", name, pos, t.start, t.start+t.n))
		}
	}
	if len(x) == 0 {
		if k.m.panicEmpty {
			panic(name + ": empty")
		}
		return
	}
	k.apply(x, t.row(pos), inverse)
	if k.m.racy && t.overlapped() {
		x[0] = k.fromBits(k.bits(x[0]) ^ 1)
	}
}

func (t *refTable[T]) seq(name string, x []T, pos []int32, inverse bool) {
	if t == nil {
		panic("refrope: " + name + ": nil table")
	}
	k := t.k
	if len(x) == 0 && len(pos) == 0 {
		if k.m.panicEmpty {
			panic(name + ": empty")
		}
		return
	}
	if !k.m.noChecks {
		if len(pos) == 0 || len(x)%(len(pos)*k.hd) != 0 {
			panic(fmt.Sprintf("refrope: %s: len(x) = %d is not a multiple of len(pos)·HeadDim = %d", name, len(x), len(pos)*k.hd))
		}
		for j, p := range pos {
			if int(p) < t.start || int(p) >= t.start+t.n {
				panic(fmt.Sprintf("refrope: %s: pos[%d] = %d out of range [%d, %d)", name, j, p, t.start, t.start+t.n))
			}
		}
	}
	tok := len(x) / len(pos)
	for j, p := range pos {
		k.apply(x[j*tok:(j+1)*tok], t.row(int(p)), inverse)
	}
}

func (k *refKernel[T]) rotate(name string, x []T, pos int, inverse bool) {
	if !k.m.noChecks {
		if len(x)%k.hd != 0 {
			panic(fmt.Sprintf("refrope: %s: len(x) = %d is not a multiple of HeadDim %d", name, len(x), k.hd))
		}
		if pos < 0 {
			panic(fmt.Sprintf("refrope: %s: negative pos %d", name, pos))
		}
	}
	if len(x) == 0 {
		if k.m.panicEmpty {
			panic(name + ": empty")
		}
		return
	}
	r := make([]float64, 2*k.rd)
	k.fillRow(r, pos)
	k.apply(x, r, inverse)
}

// apply rotates every whole head of x with table row r.
func (k *refKernel[T]) apply(x []T, r []float64, inverse bool) {
	if inverse && k.m.inverseNoNeg {
		inverse = false
	}
	for h := 0; h+k.hd <= len(x); h += k.hd {
		v := x[h : h+k.hd]
		for i := range k.half {
			a, b := k.pair(i)
			xa, xb := k.widen(v[a]), k.widen(v[b])
			ya := k.rot(xa, xb, r[a], r[k.rd+a], inverse)
			yb := k.rot(xb, xa, r[b], r[k.rd+b], inverse)
			v[a], v[b] = k.narrow(ya), k.narrow(yb)
			if k.ulp && (k.m.ulp == 1 || k.m.ulp == 2 && xa != 0 && math.Abs(xa) < 0x1p-126) {
				if bits := k.bits(v[a]); k.finiteNonzero(bits) {
					v[a] = k.fromBits(bits + 1)
				}
			}
		}
	}
}

// rot returns fl(fl(xj·C) + fl(xq·S)) (inverse: −) in the compute type.
func (k *refKernel[T]) rot(xj, xq, c, s float64, inverse bool) float64 {
	if inverse {
		s = -s
	}
	fused := k.fused
	var y float64
	if k.f64 {
		if fused {
			y = math.FMA(xq, s, float64(xj*c))
		} else {
			y = float64(xj*c) + float64(xq*s)
		}
	} else {
		a, b, c32, s32 := float32(xj), float32(xq), float32(c), float32(s)
		if k.m.ftz {
			a, b = ftz32(a), ftz32(b)
		}
		if fused {
			y = float64(float32(math.FMA(float64(b), float64(s32), float64(float32(a*c32)))))
		} else {
			y = float64(float32(a*c32) + float32(b*s32))
		}
	}
	if k.m.scale != 0 {
		y = k.round(y * k.m.scale)
	}
	return y
}

func ftz32(v float32) float32 {
	if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
		return 0
	}
	return v
}

func (k *refKernel[T]) widen(x T) float64 {
	switch k.dt {
	case kF16:
		return float64(float16.Frombits(uint16(x)).Float32())
	case kBF16:
		return float64(math.Float32frombits(uint32(uint16(x)) << 16))
	case kF64:
		return float64(x)
	}
	return float64(float32(x))
}

func (k *refKernel[T]) narrow(y float64) T {
	switch k.dt {
	case kF16:
		return T(float16.Fromfloat32(float32(y)).Bits())
	case kBF16:
		return T(nearestBF16(float32(y)))
	case kF64:
		return T(y)
	}
	return T(float32(y))
}

// nearestBF16 picks, of the two bfloat16 values around f (truncation and
// the next one away from zero), the nearer one, ties to the even one.
func nearestBF16(f float32) uint16 {
	if f != f {
		return 0x7fc0
	}
	lo := uint16(math.Float32bits(f) >> 16)
	hi := lo + 1
	dl := math.Abs(float64(f) - float64(math.Float32frombits(uint32(lo)<<16)))
	vh := math.Float32frombits(uint32(hi) << 16)
	dh := math.Abs(float64(f) - float64(vh))
	if math.IsInf(float64(vh), 0) { // hi is the infinity past the largest finite value
		dh = math.Abs(float64(f)) - (0x1p127 * (2 - 0x1p-8)) // distance to the rounding boundary
		if dh >= 0 {
			return hi
		}
		return lo
	}
	if dh < dl || dh == dl && lo&1 == 1 {
		return hi
	}
	return lo
}

func (k *refKernel[T]) bits(x T) uint64 {
	switch k.dt {
	case kF16, kBF16:
		return uint64(uint16(x))
	case kF64:
		return math.Float64bits(float64(x))
	}
	return uint64(math.Float32bits(float32(x)))
}

func (k *refKernel[T]) fromBits(b uint64) T {
	switch k.dt {
	case kF16, kBF16:
		return T(uint16(b))
	case kF64:
		return T(math.Float64frombits(b))
	}
	return T(math.Float32frombits(uint32(b)))
}

func (k *refKernel[T]) finiteNonzero(b uint64) bool {
	v := k.widen(k.fromBits(b))
	return v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// ---- the suite passes correct kernels --------------------------------------

func TestRunReference(t *testing.T) {
	t.Run("f32/hd2/interleaved", func(t *testing.T) { Run(t, newRef[float32]("f32", 2, 2, "interleaved", 1, mutation{})) })
	t.Run("f32/hd6/neox", func(t *testing.T) { Run(t, newRef[float32]("f32", 6, 4, "neox", 1, mutation{})) })
	t.Run("f32/hd64/interleaved", func(t *testing.T) { Run(t, newRef[float32]("f32", 64, 48, "interleaved", 1, mutation{})) })
	t.Run("f32/hd64/neox", func(t *testing.T) { Run(t, newRef[float32]("f32", 64, 48, "neox", 1, mutation{})) })
	t.Run("f32/hd16/neox/A=1.3", func(t *testing.T) { Run(t, newRef[float32]("f32", 16, 16, "neox", 1.3, mutation{})) })
	t.Run("f64/hd8/neox", func(t *testing.T) { Run(t, newRef[float64]("f64", 8, 8, "neox", 1, mutation{})) })
	t.Run("f64/hd10/interleaved/A=0.8", func(t *testing.T) {
		Run(t, newRef[float64]("f64", 10, 6, "interleaved", 0.8, mutation{}))
	})
	t.Run("f16/hd16/interleaved", func(t *testing.T) { Run(t, newRef[uint16]("f16", 16, 12, "interleaved", 1, mutation{})) })
	t.Run("bf16/hd16/neox", func(t *testing.T) { Run(t, newRef[uint16]("bf16", 16, 16, "neox", 1, mutation{})) })
	t.Run("f16/hd8/neox/A=1.2", func(t *testing.T) { Run(t, newRef[uint16]("f16", 8, 8, "neox", 1.2, mutation{})) })
	t.Run("named-type", func(t *testing.T) {
		type half uint16
		Run(t, newRef[half]("bf16", 4, 4, "interleaved", 1, mutation{}))
	})
}

// ---- the suite fails broken kernels ------------------------------------------

// recorder is a rapid.TB that records instead of failing the test, so that
// a check can be watched failing. FailNow and SkipNow end the goroutine the
// check runs in, as they do for *testing.T.
type recorder struct {
	name    string
	mu      sync.Mutex
	failed  bool
	skipped bool
	log     []string
	errs    []string // what Error and Errorf reported
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}
func (r *recorder) Logf(f string, a ...any)   { r.add(fmt.Sprintf(f, a...)) }
func (r *recorder) Log(a ...any)              { r.add(fmt.Sprint(a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.errorMsg(fmt.Sprintf(f, a...)) }
func (r *recorder) Error(a ...any)            { r.errorMsg(fmt.Sprint(a...)) }
func (r *recorder) errorMsg(s string) {
	r.add(s)
	r.mu.Lock()
	r.errs = append(r.errs, s)
	r.mu.Unlock()
	r.Fail()
}
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); r.FailNow() }
func (r *recorder) Fatal(a ...any)            { r.Error(a...); r.FailNow() }
func (r *recorder) Skipf(f string, a ...any)  { r.add(fmt.Sprintf(f, a...)); r.SkipNow() }
func (r *recorder) Skip(a ...any)             { r.add(fmt.Sprint(a...)); r.SkipNow() }
func (r *recorder) FailNow()                  { r.Fail(); runtime.Goexit() }
func (r *recorder) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
func (r *recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.log, "\n")
}

// record runs check against a recorder in its own goroutine.
func record(name string, check func(tb)) *recorder {
	r := &recorder{name: name}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r
}

// quietRapid keeps rapid from writing fail files into testdata and bounds
// its shrinking while mutants are checked.
func quietRapid(t *testing.T) {
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "2s"} {
		f := flag.Lookup(name)
		old := f.Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
}

func mustSuite[T Elem](t *testing.T, k Kernel[T]) *suite[T] {
	t.Helper()
	s, err := newSuite(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.buildTable(); err != nil {
		t.Fatal(err)
	}
	return s
}

// expectFail runs check and requires it to fail with a message containing
// want.
func expectFail(t *testing.T, name, want string, check func(tb)) {
	t.Helper()
	r := record(name, check)
	switch {
	case r.skipped:
		t.Errorf("%s: the check skipped instead of failing:\n%s", name, r.text())
	case !r.Failed():
		t.Errorf("%s: the check passed a broken kernel:\n%s", name, r.text())
	case !strings.Contains(r.text(), want):
		t.Errorf("%s: failed, but no message mentions %q:\n%s", name, want, r.text())
	default:
		r.mu.Lock()
		first := r.errs[0]
		r.mu.Unlock()
		t.Logf("%s: failed as it should: %.600s", name, first)
	}
}

// expectPass runs check and requires it to pass.
func expectPass(t *testing.T, name string, check func(tb)) {
	t.Helper()
	if r := record(name, check); r.Failed() || r.skipped {
		t.Errorf("%s: failed or skipped on a correct kernel:\n%s", name, r.text())
	}
}

func TestMutants(t *testing.T) {
	quietRapid(t)
	const hd, rd = 8, 6
	mut := func(m mutation, backends ...string) *suite[float32] {
		return mustSuite(t, newRef[float32]("f32", hd, rd, "interleaved", 1, m, backends...))
	}

	t.Run("flipped-sin", func(t *testing.T) {
		s := mut(mutation{flipSin: true})
		expectFail(t, "accuracy/table", "bound", func(t tb) { checkAccuracy(t, s, false) })
		expectFail(t, "accuracy/rotate", "bound", func(t tb) { checkAccuracy(t, s, true) })
		// A rotation by −φ is still a rotation: the norm holds.
		expectPass(t, "norm/table", func(t tb) { checkNorm(t, s, false) })
	})
	t.Run("fma", func(t *testing.T) {
		s := mut(mutation{fma: true}, "fma", "generic")
		expectFail(t, "backends", "differs from generic", func(t tb) { checkBackends(t, s, 20000) })
		// Either the unit probes or a §5 comparison catch it.
		expectFail(t, "canonical/table", "pos ", func(t tb) { checkCanonical(t, s, false) })
		expectFail(t, "canonical/rotate", "docs/contract.md §5", func(t tb) { checkCanonical(t, s, true) })
		// Fusing is more accurate, not less.
		expectPass(t, "accuracy/table", func(t tb) { checkAccuracy(t, s, false) })
	})
	t.Run("fma-f64", func(t *testing.T) {
		s := mustSuite(t, newRef[float64]("f64", hd, rd, "neox", 1, mutation{fma: true}, "fma", "generic"))
		expectFail(t, "backends", "differs from generic", func(t tb) { checkBackends(t, s, 20000) })
		// Either the unit probes or a §5 comparison catch it.
		expectFail(t, "canonical/table", "pos ", func(t tb) { checkCanonical(t, s, false) })
	})
	t.Run("off-by-one-position", func(t *testing.T) {
		s := mut(mutation{posOffset: 1})
		expectFail(t, "accuracy/table", "bound", func(t tb) { checkAccuracy(t, s, false) })
		expectFail(t, "consistency/seq", "Rotate gives", func(t tb) { checkConsistency(t, s) })
		expectFail(t, "consistency/bigtable", "Rotate gives", func(t tb) { checkBigTable(t, s) })
		expectFail(t, "canonical/table", "not within one ulp", func(t tb) { checkCanonical(t, s, false) })
		expectPass(t, "accuracy/rotate", func(t tb) { checkAccuracy(t, s, true) })
	})
	t.Run("one-ulp-backend", func(t *testing.T) {
		s := mut(mutation{ulp: 1}, "ulp", "generic")
		// Only the bit-exact checks are sure to see it: one ulp (up to 2u
		// relative) on top of an error of up to 3u can cross the 4u accuracy
		// bound, but need not.
		expectFail(t, "backends", "differs from generic", func(t tb) { checkBackends(t, s, 20000) })
		// Either the unit probes or a §5 comparison catch it.
		expectFail(t, "canonical/table", "pos ", func(t tb) { checkCanonical(t, s, false) })
	})
	t.Run("one-ulp-backend-subnormal-only", func(t *testing.T) {
		s := mut(mutation{ulp: 2}, "ulp", "generic")
		expectFail(t, "backends", "differs from generic", func(t tb) { checkBackends(t, s, 20000) })
	})
	t.Run("f16-one-ulp-backend", func(t *testing.T) {
		s := mustSuite(t, newRef[uint16]("f16", hd, rd, "neox", 1, mutation{ulp: 1}, "ulp", "generic"))
		expectFail(t, "backends", "differs from generic", func(t tb) { checkBackends(t, s, 20000) })
	})
	t.Run("scaled-output", func(t *testing.T) {
		s := mut(mutation{scale: 1 + 0x1p-12})
		expectFail(t, "norm/table", "||y||", func(t tb) { checkNorm(t, s, false) })
		expectFail(t, "norm/rotate", "||y||", func(t tb) { checkNorm(t, s, true) })
	})
	t.Run("flush-to-zero", func(t *testing.T) {
		s := mut(mutation{ftz: true})
		expectFail(t, "identity", "changed", func(t tb) { checkIdentity(t, s) })
		expectFail(t, "canonical/table", "docs/contract.md §5", func(t tb) { checkCanonical(t, s, false) })
	})
	t.Run("inverse-not-negated", func(t *testing.T) {
		s := mut(mutation{inverseNoNeg: true})
		expectFail(t, "inverse/table", "want A²·x", func(t tb) { checkInverse(t, s, false) })
		expectFail(t, "inverse/rotate", "want A²·x", func(t tb) { checkInverse(t, s, true) })
	})
	t.Run("nonlinear-angle", func(t *testing.T) {
		s := mut(mutation{nonlinear: true})
		expectFail(t, "relative/table", "A·q·(R_", func(t tb) { checkRelative(t, s, false) })
		expectFail(t, "relative/rotate", "A·q·(R_", func(t tb) { checkRelative(t, s, true) })
	})
}

// TestMutantsBeyondRotation: the checks of the arguments, the frequencies,
// concurrency, range tables, run-time params and batches fail the kernels
// broken there, and pass a correct one.
func TestMutantsBeyondRotation(t *testing.T) {
	quietRapid(t)
	const hd, rd = 8, 6
	mut := func(m mutation, backends ...string) *suite[float32] {
		return mustSuite(t, newRef[float32]("f32", hd, rd, "interleaved", 1, m, backends...))
	}
	t.Run("no-argument-checks", func(t *testing.T) {
		s := mut(mutation{noChecks: true})
		expectFail(t, "panics", "did not panic", func(t tb) { checkPanics(t, s) })
	})
	t.Run("panics-on-empty", func(t *testing.T) {
		s := mut(mutation{panicEmpty: true})
		expectFail(t, "panics", "must be a no-op", func(t tb) { checkPanics(t, s) })
	})
	t.Run("float32-freqs", func(t *testing.T) {
		s := mut(mutation{freqsF32: true})
		expectFail(t, "freqs", "relative error", func(t tb) { checkFreqs(t, s) })
	})
	t.Run("racy-table", func(t *testing.T) {
		s := mut(mutation{racy: true})
		expectFail(t, "concurrent", "called concurrently", func(t tb) { checkConcurrent(t, s) })
	})
	t.Run("range-ignores-start", func(t *testing.T) {
		s := mut(mutation{rangeNoStart: true})
		expectFail(t, "params/range", "differ", func(t tb) { checkParamsRange(t, s) })
		expectFail(t, "params/far", "Rotate", func(t tb) { checkParamsFar(t, s) })
		expectPass(t, "params/default", func(t tb) { checkParamsDefault(t, s) })
	})
	t.Run("params-ignore-attn", func(t *testing.T) {
		s := mut(mutation{paramsAttn: true})
		expectFail(t, "params/custom", "bound", func(t tb) { checkParamsCustom(t, s) })
		expectPass(t, "params/default", func(t tb) { checkParamsDefault(t, s) })
	})
	t.Run("batch-one-position", func(t *testing.T) {
		s := mut(mutation{batchPos0: true})
		expectFail(t, "params/batch", "differs from Rotate", func(t tb) { checkBatch(t, s) })
	})
	t.Run("params-unchecked", func(t *testing.T) {
		s := mut(mutation{noChecks: true})
		expectFail(t, "params/panics", "did not panic", func(t tb) { checkParamsPanics(t, s) })
	})
	t.Run("correct", func(t *testing.T) {
		s := mut(mutation{})
		for name, check := range map[string]func(tb){
			"panics":     func(t tb) { checkPanics(t, s) },
			"freqs":      func(t tb) { checkFreqs(t, s) },
			"concurrent": func(t tb) { checkConcurrent(t, s) },
		} {
			expectPass(t, name, check)
		}
	})
}

// TestPanicMessages checks the panic check's matching itself.
func TestPanicMessages(t *testing.T) {
	if !wordRE("Apply").MatchString("refrope: Apply: pos 4103 out of range") ||
		wordRE("Apply").MatchString("refrope: ApplySeq: pos 4103") ||
		wordRE("Rotate").MatchString("RotateInverse: bad") {
		t.Error("wordRE")
	}
	if !numRE(-5).MatchString("pos[1] = -5 out of range") || numRE(5).MatchString("len 15") || numRE(4103).MatchString("41030") {
		t.Error("numRE")
	}
}

// ---- verify's own pieces -----------------------------------------------------

func TestMatrix(t *testing.T) {
	freqs := []float64{1, 0.1, 0.01}
	for _, layout := range []string{"interleaved", "neox"} {
		m := Matrix(8, 6, layout, freqs, 1, 5)
		// Orthogonal: M·M^T = I to float64 rounding.
		for i := range 8 {
			for j := range 8 {
				var d float64
				for k := range 8 {
					d += m[i][k] * m[j][k]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(d-want) > 1e-15 {
					t.Errorf("%s: (M·M^T)[%d][%d] = %v", layout, i, j, d)
				}
			}
		}
		x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
		y := MulVec(m, x, false)
		z := MulVec(m, y, true)
		for i := range x {
			if math.Abs(z[i]-x[i]) > 1e-14 {
				t.Errorf("%s: M^T·M·x = %v", layout, z)
				break
			}
		}
		if y[6] != 7 || y[7] != 8 {
			t.Errorf("%s: tail changed: %v", layout, y)
		}
		pa, pb := pairIndices(6, layout)
		sin, cos := math.Sincos(5 * 0.1)
		a, b := pa[1], pb[1]
		if y[a] != x[a]*cos-x[b]*sin || y[b] != x[b]*cos+x[a]*sin {
			t.Errorf("%s: pair 1: (%v, %v)", layout, y[a], y[b])
		}
	}
	if r := Reference(2, 2, "interleaved", []float64{1}, 2, 0, false, []float64{1, -1, 3, 0}); r[0] != 2 || r[1] != -2 || r[2] != 6 || r[3] != 0 {
		t.Errorf("Reference with A = 2 at pos 0: %v", r)
	}
}

func TestBF16(t *testing.T) {
	// Every bfloat16 value widens and narrows back to itself.
	for b := range 1 << 16 {
		v := bf16ToF32(uint16(b))
		got := f32ToBF16(v)
		if v != v {
			if got&0x7f80 != 0x7f80 || got&0x7f == 0 {
				t.Fatalf("NaN %#04x -> %#04x", b, got)
			}
			continue
		}
		if got != uint16(b) {
			t.Fatalf("%#04x -> %v -> %#04x", b, v, got)
		}
	}
	// Narrowing agrees with an independent nearest-even search.
	rapid.Check(t, func(t *rapid.T) {
		f := math.Float32frombits(rapid.Uint32().Draw(t, "bits"))
		if f != f {
			return
		}
		if got, want := f32ToBF16(f), nearestBF16(f); got != want {
			t.Fatalf("f32ToBF16(%v) = %#04x, want %#04x", f, got, want)
		}
	})
}

func TestStorageULP(t *testing.T) {
	f16, _ := newCodec[uint16]("f16")
	bf, _ := newCodec[uint16]("bf16")
	f32, _ := newCodec[float32]("f32")
	for _, c := range []struct {
		got, want float64
	}{
		{f16.storageULP(1), 0x1p-10}, {f16.storageULP(1.999), 0x1p-10}, {f16.storageULP(-2), 0x1p-9},
		{f16.storageULP(0), 0x1p-24}, {f16.storageULP(0x1p-20), 0x1p-24}, {f16.storageULP(0x1p-14), 0x1p-24},
		{bf.storageULP(1), 0x1p-7}, {bf.storageULP(0), 0x1p-133}, {f32.storageULP(1), 0},
	} {
		if c.got != c.want {
			t.Errorf("storageULP: got %v, want %v", c.got, c.want)
		}
	}
	// The ulp is the real spacing: adding it to a value's bits moves by it.
	for _, v := range []float32{1, 3, 1000, 0x1p-13, 60000} {
		b := float16.Fromfloat32(v).Bits()
		d := float64(float16.Frombits(b+1).Float32() - float16.Frombits(b).Float32())
		if d != f16.storageULP(float64(v)) {
			t.Errorf("f16 spacing at %v: %v, storageULP %v", v, d, f16.storageULP(float64(v)))
		}
	}
}

func TestSpecial(t *testing.T) {
	for k, f := range formats {
		classes := map[string]bool{}
		for i := range uint64(20000) {
			b := f.special(mix(i), false)
			if b>>f.width() != 0 {
				t.Fatalf("format %d: %#x has bits above the width", k, b)
			}
			e := (b >> f.mantBits) & f.expMax()
			m := b & f.mantMask()
			switch {
			case e == 0 && m == 0:
				classes["zero"] = true
			case e == 0:
				classes["subnormal"] = true
			case e == f.expMax() && m == 0:
				classes["inf"] = true
			case e == f.expMax():
				classes["nan"] = true
			case e == f.expMax()-1 && m == f.mantMask():
				classes["max"] = true
			default:
				classes["normal"] = true
			}
			if fb := f.special(mix(i), true); !f.isFinite(fb) {
				t.Fatalf("format %d: finite special gave %#x", k, fb)
			}
		}
		if len(classes) != 6 {
			t.Errorf("format %d: classes %v", k, classes)
		}
	}
}

func TestDefaultFreq(t *testing.T) {
	for _, base := range []float64{10000, 500000, 1e6, 2, 12345.678} {
		for _, r := range []int{2, 64, 128, 96} {
			for i := 0; i < r/2; i++ {
				got := defaultFreq(base, 2*i, r)
				want := math.Pow(base, -float64(2*i)/float64(r))
				// math.Pow sees the rounded exponent e = -2i/r, which moves the
				// result by |e·ln base|·2⁻⁵³, and adds a few ulps of its own
				// (more on arm64, where it has no assembly): checkFreqs's bound.
				bound := (float64(2*i)/float64(r)*math.Log(base) + 4) * 0x1p-53
				if math.Abs(got-want) > bound*want {
					t.Fatalf("defaultFreq(%v, %d, %d) = %v, math.Pow %v", base, 2*i, r, got, want)
				}
			}
		}
	}
	// Correctly rounded values (50-digit decimal arithmetic).
	for _, c := range []struct {
		num, den int
		want     float64
	}{{1, 2, 0.01}, {12, 64, 0.1778279410038923}, {0, 64, 1}} {
		if got := defaultFreq(10000, c.num, c.den); got != c.want {
			t.Errorf("10000^(-%d/%d) = %v, want %v", c.num, c.den, got, c.want)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	c, _ := newCodec[float32]("f32")
	nan := math.Float32frombits(0x7f800001) // signaling NaN payload
	if b := c.bits(c.fromBits(uint64(math.Float32bits(nan)))); b != 0x7f800001 {
		t.Errorf("f32 NaN payload: %#x", b)
	}
	if _, err := newCodec[float32]("f64"); err == nil {
		t.Error("f64 with float32 accepted")
	}
	if _, err := newCodec[uint16]("f32"); err == nil {
		t.Error("f32 with uint16 accepted")
	}
}

// The reference kernel is written for clarity, not speed; these exercise
// Bench for every dtype.
func BenchmarkReference(b *testing.B) {
	b.Run("f32", func(b *testing.B) { Bench(b, newRef[float32]("f32", 64, 64, "neox", 1, mutation{})) })
	b.Run("f64", func(b *testing.B) { Bench(b, newRef[float64]("f64", 64, 48, "interleaved", 1, mutation{})) })
	b.Run("f16", func(b *testing.B) { Bench(b, newRef[uint16]("f16", 64, 64, "interleaved", 1.2, mutation{})) })
	b.Run("bf16", func(b *testing.B) { Bench(b, newRef[uint16]("bf16", 64, 64, "neox", 1, mutation{}, "generic")) })
}

// A pair with θ = 0 does not turn (proportional RoPE's pairs past its rope
// angles): the suite takes such a kernel and checks it like any other, and
// still refuses a negative, infinite or NaN frequency.
func TestZeroFrequency(t *testing.T) {
	quietRapid(t)
	k := newRef[float32]("f32", 8, 8, "neox", 1, mutation{})
	k.Freqs[2], k.Freqs[3] = 0, 0 // the reference kernel's own frequencies too
	k.Scaling = "proportional"
	s := mustSuite(t, k)
	expectPass(t, "accuracy", func(t tb) { checkAccuracy(t, s, false) })
	expectPass(t, "canonical", func(t tb) { checkCanonical(t, s, false) })
	expectPass(t, "relative", func(t tb) { checkRelative(t, s, false) })
	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		k := newRef[float32]("f32", 8, 8, "neox", 1, mutation{})
		k.Freqs[3] = bad
		if _, err := newSuite(k); err == nil || !strings.Contains(err.Error(), "Freqs[3]") {
			t.Errorf("Freqs[3] = %v: newSuite error %v, want it refused", bad, err)
		}
	}
}
