// Package verify is the property suite every ropegen-generated RoPE package
// runs from its tests (docs/contract.md is the contract it checks).
//
// A generated package describes itself with a [Kernel] and calls [Run] from a
// test and [Bench] from a benchmark:
//
//	func TestRoPE(t *testing.T) { verify.Run(t, kernel) }
//	func BenchmarkRoPE(b *testing.B) { verify.Bench(b, kernel) }
//
// Run checks, each as a subtest: the frequencies, accuracy against a dense
// float64 reference ([Matrix], [Reference]), norm preservation, R_0 = I,
// inverse∘forward ≈ identity, the relative-position property, Apply =
// ApplySeq = Rotate bit for bit, docs/contract.md §5's canonical arithmetic bit for
// bit, every backend bit-identical to the pure-Go one (also in the table
// rows it computes, and in Rotate's), the panics of §7, every entry point on
// memory flush against PROT_NONE guard pages (linux), concurrent use of a
// Table, and the Parallel forms of ApplySeq ([ParallelTable]) against the
// serial ones on sequences long enough to split, and the strided entry
// points ([Strides]: ApplyStrided, ApplyInverseStrided, ApplyQK) against
// copying each head out and back, with canaries in every element they must
// not touch, on guard pages and with their panics,
// and, for a package with a QK-norm ([Norm]), ApplyNormQK against Hugging
// Face's norms and docs/contract.md §10's arithmetic bit for bit.
// [Fuzz] and [FuzzStrided] are the bodies of fuzz targets that compare the
// backends on the inputs the fuzzer finds.
//
// Every entry point is described once: the slices a call takes, how to make
// the call, the panic each bad input must raise. One driver runs every
// description's calls with each slice against guard pages, one makes the
// bad calls and matches their panics, and one times the calls beside the
// stream baseline of their bytes (Bench). The cache checks know a cache
// format only through its [CacheFormat].
//
// Random inputs come from pgregory.net/rapid, so a failing case is shrunk and
// can be replayed with the -rapid.seed or -rapid.failfile flag that the
// failure message prints. The bulk backend comparison does not use rapid; it
// logs its seed and takes -rapid.seed too.
//
// # Tolerance
//
// Let u be the unit roundoff of the compute type (2^-24 for f32, f16 and
// bf16, 2^-53 for f64), A the attention factor and (x_a, x_b) a pair. The
// suite compares every output y_j of a rotated index j against the float64
// reference y_ref_j = (A·R_p·x)_j (inverse: (A·R_p^T·x)_j) and requires
//
//	|y_j − y_ref_j| <= B_j = 4·u·A·(|x_a| + |x_b|) + ulp_S(|y_ref_j|)
//
// where ulp_S is 0 for f32 and f64 and one unit in the last place of the
// storage type at |y_ref_j| for f16 and bf16: 2^(e−10) for f16 and 2^(e−7)
// for bf16 with e = floor(log2 |y_ref_j|), and 2^-24 (f16) or 2^-133 (bf16)
// below the smallest normal. For float32 compute the 4 covers the table's
// rounding of A·cos and A·sin (u), both rounded products (u·A·(|x_a|+|x_b|)
// together) and the rounded sum (u·|y| <= u·A·(|x_a|+|x_b|)), 3u plus O(u²),
// with one u to spare for the float64 reference's own error (about 2^-50
// relative). For f64 the reference has the kernel's precision: its cos and
// sin are correctly rounded (exactSincos), as the tables' are (docs/contract.md
// §4), so both sides round two products and a sum of the same operands (2u
// each) and k = 4 leaves slack only for a table value one ulp off. The ulp
// term covers the final narrowing for f16/bf16 (half an ulp at the float32 result, which is
// at most one ulp at |y_ref_j| even when the float32 result crosses into the
// next binade). Indices >= RotaryDim must come back with their bits
// unchanged.
//
// The bound is relative to |x_a| + |x_b| and so only holds where the
// products x·cos and x·sin do not underflow: accuracy inputs are finite
// normal values with magnitudes in [2^-30, 2^31) for f32 and bf16,
// [2^-100, 2^101) for f64 and [2^-10, 2^13) for f16 (the top narrowed so that
// A²·|x| stays well below 65504), plus zeros. Subnormals, infinities and NaNs
// are exercised by the bit-exact checks instead (canonical, consistency,
// backends, identity).
package verify

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// Elem is the set of element types a generated package works on: float32,
// float64, or uint16 holding IEEE binary16 (f16) or bfloat16 (bf16) bits.
type Elem interface{ ~float32 | ~float64 | ~uint16 }

// Table is the method set of a generated package's *Table: cos/sin rows for
// positions [0, Len()) and the four table entry points of docs/contract.md §7.
type Table[T Elem] interface {
	// Len returns the number of positions the table covers.
	Len() int
	// Apply rotates every head in x, in place, by position pos.
	Apply(x []T, pos int)
	// ApplySeq rotates token j of x (len(x)/len(pos) values) by pos[j].
	ApplySeq(x []T, pos []int32)
	// ApplyInverse applies A·R_pos^T to every head in x, in place.
	ApplyInverse(x []T, pos int)
	// ApplyInverseSeq applies A·R_pos[j]^T to token j of x.
	ApplyInverseSeq(x []T, pos []int32)
}

// Backend is one dispatch level available on this machine (e.g. "avx2",
// "generic"). Use makes it the active one for every entry point.
type Backend struct {
	// Name identifies the backend in subtest names and messages.
	Name string
	// Use makes this backend the active one.
	Use func()
}

// Kernel describes a generated package to the suite.
type Kernel[T Elem] struct {
	// DType is "f32", "f64", "f16" (IEEE binary16 bits in uint16) or "bf16"
	// (bfloat16 bits in uint16).
	DType string
	// HeadDim is the number of values per head; RotaryDim (even, at most
	// HeadDim) the number of them that are rotated.
	HeadDim, RotaryDim int
	// Layout is "interleaved" (pairs (2i, 2i+1)) or "neox" (pairs
	// (i, i+RotaryDim/2)).
	Layout string
	// Base is the frequency base.
	Base float64
	// Scaling is "none" or the name of a scaling scheme. When it is "none"
	// (or empty) the suite checks Freqs[i] against Base^(-2i/RotaryDim)
	// computed independently in extended precision, within the error that
	// float64 evaluation allows (see checkFreqs).
	Scaling string
	// Freqs holds θ_i, len RotaryDim/2: the package's constant. The
	// reference rotates by float64(p)·Freqs[i].
	Freqs []float64
	// LongFreqs and OrigCtx describe a longrope package: a table of more
	// than OrigCtx positions uses LongFreqs, a shorter one (and Rotate)
	// Freqs. Leave them zero otherwise.
	LongFreqs []float64
	OrigCtx   int
	// AttentionFactor is A, folded into the table.
	AttentionFactor float64
	// NewTable builds a table for positions [0, maxPos) (Len() >= maxPos).
	NewTable func(maxPos int) Table[T]
	// Rotate is the tableless forward rotation.
	Rotate func(x []T, pos int)
	// RotateInverse is the tableless inverse (A·R^T).
	RotateInverse func(x []T, pos int)
	// ParallelMin is the package's ParallelMin: the least number of bytes
	// of x its ApplySeqParallel gives a goroutine. The suite checks the
	// Parallel forms of the table (ParallelTable) on sequences long enough
	// to split. Leave it zero when the table has no Parallel forms.
	ParallelMin int
	// DynamicFactor is the factor s of a dynamic NTK package (with OrigCtx,
	// its L): a table of n > OrigCtx positions follows DynamicFreqs for n.
	// Leave it zero otherwise.
	DynamicFactor float64
	// Axes describes the multi-axis entry points (docs/contract.md §9; see
	// Axes) of a multi-axis package; nil for a 1-D package.
	Axes *Axes[T]
	// Strided describes the strided entry points (see Strided).
	// When it is nil the strided checks log that and do nothing; ropegen
	// sets it.
	Strided *Strided[T]
	// Runtime describes the run-time parameters and the Batch of
	// docs/contract.md §12 (see Runtime). When it is nil the params
	// subtest fails, since ropegen sets it.
	Runtime *Runtime[T]
	// Norm describes ApplyNormQK, the QK-norm fused with the rotation
	// (docs/contract.md §10; see Norm), for a package generated with
	// -qk-norm; nil otherwise.
	Norm *Norm[T]
	// Caches describe the KV-cache forms of a package with cache types
	// (ApplyStore, Store, Load, Shift), one *Cache[C] per type; nil
	// otherwise. Run checks them (runCache) and Bench measures them.
	Caches []CacheForms
	// Backends lists the dispatch levels available on this machine, best
	// first; Backends[0] is the default and the last one is the pure-Go
	// reference the others must match bit for bit. Run and Bench make
	// Backends[0] active again when they return. It may be empty when the
	// package has a single implementation.
	Backends []Backend
}

// tableRows is the number of positions of the table most checks use.
const tableRows = 4096

// maxRotatePos bounds the positions the tableless checks use: docs/contract.md §4
// promises half-ulp tables below 2^24.
const maxRotatePos = 1<<24 - 1

// rotatePositions are the positions the tableless checks always include.
var rotatePositions = []int{0, 1, 17, 4095, 131071, maxRotatePos}

// start returns the suite of k, with Backends[0] active and the table
// built, or fails t.
func start[T Elem](t *testing.T, k Kernel[T]) *suite[T] {
	t.Helper()
	s, err := newSuite(k)
	if err != nil {
		t.Fatalf("verify: invalid Kernel: %v", err)
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	if err := s.buildTable(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return s
}

// Run runs the whole suite against k, each property as a subtest of t. It
// leaves Backends[0] active.
func Run[T Elem](t *testing.T, k Kernel[T]) {
	t.Helper()
	s := start(t, k)
	if len(k.Backends) > 0 {
		defer k.Backends[0].Use()
	}
	t.Logf("%s HeadDim=%d RotaryDim=%d layout=%s scaling=%s A=%g table Len=%d backends=%v",
		k.DType, k.HeadDim, k.RotaryDim, k.Layout, k.Scaling, k.AttentionFactor, s.n, s.backendNames())

	t.Run("freqs", func(t *testing.T) { checkFreqs(t, s) })
	t.Run("accuracy", func(t *testing.T) {
		t.Run("table", func(t *testing.T) { checkAccuracy(t, s, false) })
		t.Run("rotate", func(t *testing.T) { checkAccuracy(t, s, true) })
	})
	t.Run("norm", func(t *testing.T) {
		t.Run("table", func(t *testing.T) { checkNorm(t, s, false) })
		t.Run("rotate", func(t *testing.T) { checkNorm(t, s, true) })
	})
	t.Run("identity", func(t *testing.T) { checkIdentity(t, s) })
	t.Run("inverse", func(t *testing.T) {
		t.Run("table", func(t *testing.T) { checkInverse(t, s, false) })
		t.Run("rotate", func(t *testing.T) { checkInverse(t, s, true) })
	})
	t.Run("relative", func(t *testing.T) {
		t.Run("table", func(t *testing.T) { checkRelative(t, s, false) })
		t.Run("rotate", func(t *testing.T) { checkRelative(t, s, true) })
	})
	t.Run("consistency", func(t *testing.T) {
		t.Run("seq", func(t *testing.T) { checkConsistency(t, s) })
		t.Run("bigtable", func(t *testing.T) { checkBigTable(t, s) })
	})
	t.Run("canonical", func(t *testing.T) {
		t.Run("table", func(t *testing.T) { checkCanonical(t, s, false) })
		t.Run("rotate", func(t *testing.T) { checkCanonical(t, s, true) })
	})
	t.Run("backends", func(t *testing.T) { checkBackends(t, s, backendHeads(s.hd)) })
	t.Run("rows", func(t *testing.T) { checkRows(t, s) })
	t.Run("parallel", func(t *testing.T) { checkParallel(t, s) })
	t.Run("panics", func(t *testing.T) { checkPanics(t, s) })
	t.Run("guard", func(t *testing.T) { checkGuard(t, s) })
	t.Run("concurrent", func(t *testing.T) { checkConcurrent(t, s) })
	t.Run("axes", func(t *testing.T) { checkAxes(t, s) })
	t.Run("dynamic", func(t *testing.T) { checkDynamic(t, s) })
	t.Run("strided", func(t *testing.T) { runStrided(t, s) })
	t.Run("params", func(t *testing.T) { runParams(t, s) })
	t.Run("normqk", func(t *testing.T) { runNorm(t, s) })
	t.Run("cache", func(t *testing.T) { runCache(t, s) })
}

// tb is what the check functions report to: *testing.T satisfies it, and so
// does the recorder verify's own tests use to watch a check fail. It is
// rapid's TB so that the checks can hand it to rapid.Check.
type tb = rapid.TB

// entry names one of the six entry points.
type entry int

const (
	eApply entry = iota
	eApplySeq
	eApplyInverse
	eApplyInverseSeq
	eRotate
	eRotateInverse
)

var entryNames = [...]string{"Apply", "ApplySeq", "ApplyInverse", "ApplyInverseSeq", "Rotate", "RotateInverse"}

func (e entry) String() string { return entryNames[e] }
func (e entry) inverse() bool {
	return e == eApplyInverse || e == eApplyInverseSeq || e == eRotateInverse
}
func (e entry) seq() bool       { return e == eApplySeq || e == eApplyInverseSeq }
func (e entry) tableless() bool { return e == eRotate || e == eRotateInverse }
func allEntries() []entry {
	return []entry{eApply, eApplySeq, eApplyInverse, eApplyInverseSeq, eRotate, eRotateInverse}
}
func pairEntries(rot bool) (entry, entry) {
	if rot {
		return eRotate, eRotateInverse
	}
	return eApply, eApplyInverse
}

// suite is a validated Kernel plus what the checks derive from it.
type suite[T Elem] struct {
	k          Kernel[T]
	c          codec[T]
	hd, rd, hf int
	pa, pb     []int // pair i is (pa[i], pb[i])
	partner    []int // partner[j] for rotated j; -1 for the tail
	attn       float64
	tab        Table[T]
	n          int // tab.Len()
}

func newSuite[T Elem](k Kernel[T]) (*suite[T], error) {
	c, err := newCodec[T](k.DType)
	if err != nil {
		return nil, err
	}
	switch {
	case k.HeadDim <= 0:
		return nil, fmt.Errorf("HeadDim %d must be positive", k.HeadDim)
	case k.RotaryDim < 2 || k.RotaryDim%2 != 0 || k.RotaryDim > k.HeadDim:
		return nil, fmt.Errorf("RotaryDim %d must be even, at least 2 and at most HeadDim %d", k.RotaryDim, k.HeadDim)
	case k.Layout != "interleaved" && k.Layout != "neox":
		return nil, fmt.Errorf("Layout %q must be \"interleaved\" or \"neox\"", k.Layout)
	case len(k.Freqs) != k.RotaryDim/2:
		return nil, fmt.Errorf("len(Freqs) = %d, want RotaryDim/2 = %d", len(k.Freqs), k.RotaryDim/2)
	case !(k.AttentionFactor > 0) || math.IsInf(k.AttentionFactor, 0):
		return nil, fmt.Errorf("AttentionFactor %v must be positive and finite", k.AttentionFactor)
	case k.NewTable == nil || k.Rotate == nil || k.RotateInverse == nil:
		return nil, fmt.Errorf("NewTable, Rotate and RotateInverse must be set")
	}
	if k.DynamicFactor != 0 && (!(k.DynamicFactor >= 1) || k.OrigCtx <= 0) {
		return nil, fmt.Errorf("DynamicFactor = %v and OrigCtx = %d: want DynamicFactor >= 1 and OrigCtx > 0", k.DynamicFactor, k.OrigCtx)
	}
	if ax := k.Axes; ax != nil {
		if ax.N < 2 {
			return nil, fmt.Errorf("Axes.N = %d: want at least 2 (a 1-D package leaves Axes nil)", ax.N)
		}
		if len(ax.Axis) != k.RotaryDim/2 || ax.ApplySeq == nil || ax.ApplyInverseSeq == nil {
			return nil, fmt.Errorf("Axes.N = %d: want len(Axes.Axis) = RotaryDim/2 = %d (got %d) and Axes.ApplySeq, Axes.ApplyInverseSeq set", ax.N, k.RotaryDim/2, len(ax.Axis))
		}
		for i, a := range ax.Axis {
			if int(a) >= ax.N {
				return nil, fmt.Errorf("Axes.Axis[%d] = %d: want < Axes.N = %d", i, a, ax.N)
			}
		}
	}
	if k.LongFreqs != nil && (len(k.LongFreqs) != k.RotaryDim/2 || k.OrigCtx <= 0) {
		return nil, fmt.Errorf("len(LongFreqs) = %d and OrigCtx = %d: want RotaryDim/2 = %d and OrigCtx > 0", len(k.LongFreqs), k.OrigCtx, k.RotaryDim/2)
	}
	for i, f := range k.Freqs {
		// θ = 0 is a pair that does not turn (proportional RoPE's pairs
		// past its rope angles).
		if !(f >= 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("Freqs[%d] = %v must be finite and >= 0", i, f)
		}
	}
	seen := map[string]bool{}
	for i, b := range k.Backends {
		if b.Name == "" || b.Use == nil {
			return nil, fmt.Errorf("Backends[%d] needs a Name and a Use", i)
		}
		if seen[b.Name] {
			return nil, fmt.Errorf("backend name %q appears twice", b.Name)
		}
		seen[b.Name] = true
	}
	s := &suite[T]{k: k, c: c, hd: k.HeadDim, rd: k.RotaryDim, hf: k.RotaryDim / 2, attn: k.AttentionFactor}
	s.pa, s.pb = pairIndices(k.RotaryDim, k.Layout)
	s.partner = make([]int, k.HeadDim)
	for j := range s.partner {
		s.partner[j] = -1
	}
	for i := range s.pa {
		s.partner[s.pa[i]], s.partner[s.pb[i]] = s.pb[i], s.pa[i]
	}
	return s, nil
}

// buildTable builds the suite's table of tableRows positions.
func (s *suite[T]) buildTable() error {
	rows := tableRows
	if (s.k.LongFreqs != nil || s.k.DynamicFactor != 0) && s.k.OrigCtx < rows {
		rows = s.k.OrigCtx // keep the main table on the short factors, as Rotate
	}
	s.tab = s.k.NewTable(rows)
	if s.tab == nil {
		return fmt.Errorf("NewTable(%d) returned nil", rows)
	}
	s.n = s.tab.Len()
	if s.n < rows {
		return fmt.Errorf("NewTable(%d).Len() = %d, want at least %d", rows, s.n, rows)
	}
	return nil
}

func (s *suite[T]) backendNames() []string {
	var names []string
	for _, b := range s.k.Backends {
		names = append(names, b.Name)
	}
	return names
}

// rowBytes is the size of one table row (plan.go: 2·RotaryDim values of the
// compute type), used to size the big table.
func (s *suite[T]) rowBytes() int {
	if s.c.kind == kF64 {
		return 16 * s.rd
	}
	return 8 * s.rd
}

// call runs entry e on x at pos (seq for the Seq entries).
func (s *suite[T]) call(e entry, x []T, pos int, seq []int32) {
	switch e {
	case eApply:
		s.tab.Apply(x, pos)
	case eApplySeq:
		s.tab.ApplySeq(x, seq)
	case eApplyInverse:
		s.tab.ApplyInverse(x, pos)
	case eApplyInverseSeq:
		s.tab.ApplyInverseSeq(x, seq)
	case eRotate:
		s.k.Rotate(x, pos)
	case eRotateInverse:
		s.k.RotateInverse(x, pos)
	}
}

// out returns a copy of x after entry e at pos (the Seq entries get one
// position per head).
func (s *suite[T]) out(e entry, x []T, pos int) []T {
	y := slices.Clone(x)
	var seq []int32
	if e.seq() {
		seq = make([]int32, len(x)/s.hd)
		for i := range seq {
			seq[i] = int32(pos)
		}
	}
	s.call(e, y, pos, seq)
	return y
}

// posAt names position j of a call whose tokens the suite passes one
// position each as the package's message does: pos[j], or in a multi-axis
// package, whose entry points take Axes.N positions per token (a text
// token's all equal), pos[j·Axes.N].
func (s *suite[T]) posAt(j int) string {
	return fmt.Sprintf("pos[%d]", j*s.k.axesN())
}

// posLen is len(pos) as the package counts it for a call of n tokens.
func (s *suite[T]) posLen(n int) int { return n * s.k.axesN() }

// axesN is the number of positions per token the package's entry points
// take: Axes.N, or 1 for a 1-D package.
func (k *Kernel[T]) axesN() int {
	if k.Axes == nil {
		return 1
	}
	return k.Axes.N
}

// axisMap is the axis map the run-time forms take: Axes.Axis, or nil for a
// 1-D package.
func (k *Kernel[T]) axisMap() []uint8 {
	if k.Axes == nil {
		return nil
	}
	return k.Axes.Axis
}

// pairIndices returns the pair indices of docs/contract.md §2.
func pairIndices(rotaryDim int, layout string) (pa, pb []int) {
	h := rotaryDim / 2
	pa, pb = make([]int, h), make([]int, h)
	for i := range h {
		if layout == "neox" {
			pa[i], pb[i] = i, i+h
		} else {
			pa[i], pb[i] = 2*i, 2*i+1
		}
	}
	return pa, pb
}

// sizeOf is unsafe.Sizeof for a type parameter.
func sizeOf[T Elem]() uintptr {
	var z T
	return unsafe.Sizeof(z)
}
