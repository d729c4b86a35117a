package rt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Shape is what a set of kernels is generated for: the values per head, the
// leading values of a head that turn, and the pair layout ("interleaved":
// pairs (2i, 2i+1); "neox": pairs (i, i+RotaryDim/2)). Everything else about
// a model is data (Params).
type Shape struct {
	HeadDim   int
	RotaryDim int
	Layout    string
}

// String spells s as its fields: "128/128/neox".
func (s Shape) String() string {
	return fmt.Sprintf("%d/%d/%s", s.HeadDim, s.RotaryDim, s.Layout)
}

// Shapes returns the shapes the package holds kernels for.
func Shapes() []Shape { return slices.Clone(shapeList) }

// Params are one model's numbers: its shape and the data its tables are
// built from. Their fields, types and order are those of ropegen's
// spec.Runtime, so an engine converts a model it loads at run time with
// Params(p.Runtime()); New checks them.
type Params struct {
	HeadDim       int       // values per head
	RotaryDim     int       // leading values of a head that turn
	Layout        string    // "interleaved" or "neox"
	Freqs         []float64 // θ_i, RotaryDim/2 values, after scaling
	Attn          float64   // the attention factor A, folded into cos and sin
	Axes          int       // positions per token: 1, or the number of axes
	Axis          []uint8   // pair i's axis (RotaryDim/2 values) when Axes > 1; nil when Axes = 1
	LongFreqs     []float64 // longrope: θ_i of tables longer than OrigCtx; nil otherwise
	OrigCtx       int       // longrope and dynamic NTK: L; 0 otherwise
	DynamicFactor float64   // dynamic NTK: s; 0 otherwise
	DynamicBase   float64   // dynamic NTK: the base longer tables' frequencies derive from; 0 otherwise
	NormKind      string    // QK-norm: "" (none), "rms", "gemma" or "l2"
	NormEps       float64   // ε, as the model's config gives it (the default applied)
	NormScope     string    // "head" or "token"; "" without a norm
	NormAfter     bool      // normalize the rotated vector
	// QKScale is the whole factor by which the model's attention
	// multiplies q·k before the softmax: scores = QKScale·(q·k).
	// 1/sqrt(HeadDim) for most models; 1/sqrt(qk_nope_head_dim +
	// qk_rope_head_dim)·mscale² for MLA (1/sqrt(192)·(0.1·ln 40 + 1)² for
	// DeepSeek-V3, whose HeadDim here is the rotary part, 64);
	// 1/sqrt(query_pre_attn_scalar) for Gemma 2 and 3; attention_multiplier
	// for Granite; 1 for Gemma 3n and 4, whose q and k are normalized.
	// No kernel of this package applies it: the attention does.
	QKScale      float64
	MaxPositions int // max_position_embeddings; 0 when not known
}

// clone returns p with its slices copied.
func (p Params) clone() Params {
	p.Freqs = slices.Clone(p.Freqs)
	p.Axis = slices.Clone(p.Axis)
	p.LongFreqs = slices.Clone(p.LongFreqs)
	return p
}

// Rotary is one model ready to use: its shape's kernels and its checked
// numbers. It is read-only and safe for concurrent use; its tables and
// batches come from its methods.
type Rotary struct {
	p       Params
	si      int // the shape's index in shapeList and backend.shapes
	hd, rd  int
	hdLog   int // log2(HeadDim) when it is a power of two, else −1: heads() shifts instead of dividing
	rowLen  int // 2·RotaryDim values of a table row
	runMax  int // the strided walk's longest run (runMaxOf)
	neox    bool
	axes    int
	nv      int        // the norm's kernels.norm slot; −1 without a norm
	maxFreq float64    // the largest θ_i of Freqs
	runs    [][][2]int // Axes > 1: per axis, the runs [lo, hi) of row indices < RotaryDim whose pairs it turns
	posWord string     // how a Table's entry points name their token count: "len(pos)" or "len(pos)/Axes"
}

// New checks p and returns its Rotary. An error names the field, the value
// and what is accepted: a shape the package has no kernels for (the error
// lists the shapes it has), a slice of the wrong length (never truncated or
// padded), a frequency or factor that is not finite, an axis map that does
// not match Axes, a QK-norm this package has no kernels for at this shape
// (the error lists the ones it has).
func New(p Params) (*Rotary, error) {
	r, err := newRotary(p)
	if err != nil {
		return nil, errors.New(pkgName + ".New: " + err.Error())
	}
	return r, nil
}

// newRotary is New without the function's name in the error.
func newRotary(p Params) (*Rotary, error) {
	p = p.clone()
	si, err := findShape(p)
	if err != nil {
		return nil, err
	}
	half := p.RotaryDim / 2
	r := &Rotary{p: p, si: si, hd: p.HeadDim, rd: p.RotaryDim, rowLen: 2 * p.RotaryDim, runMax: runMaxOf(2 * p.RotaryDim), neox: p.Layout == "neox", axes: p.Axes, nv: -1, hdLog: log2(p.HeadDim), posWord: "len(pos)"}
	if err := checkFreqs("Freqs", p.Freqs, half); err != nil {
		return nil, err
	}
	r.maxFreq = maxOf(p.Freqs)
	if !(p.Attn > 0) || math.IsInf(p.Attn, 1) {
		return nil, fmt.Errorf("Attn = %v: want finite and > 0", p.Attn)
	}
	switch {
	case p.Axes < 1 || p.Axes > 256:
		return nil, fmt.Errorf("Axes = %d: want 1 (one position per token) or the number of axes, at most 256", p.Axes)
	case p.Axes == 1 && len(p.Axis) != 0:
		return nil, fmt.Errorf("len(Axis) = %d with Axes = 1: want nil (every pair turns by the one position)", len(p.Axis))
	case p.Axes > 1 && len(p.Axis) != half:
		return nil, fmt.Errorf("len(Axis) = %d with Axes = %d: want RotaryDim/2 = %d, the axis of each pair", len(p.Axis), p.Axes, half)
	}
	for i, a := range p.Axis {
		if int(a) >= p.Axes {
			return nil, fmt.Errorf("Axis[%d] = %d: want < Axes = %d", i, a, p.Axes)
		}
	}
	if p.Axes > 1 {
		r.runs = axisRuns(p.Axis, p.Axes, p.RotaryDim, r.neox)
		r.posWord = "len(pos)/Axes"
	} else {
		r.p.Axis = nil
	}
	if p.OrigCtx < 0 {
		return nil, fmt.Errorf("OrigCtx = %d: want >= 0 (0: none)", p.OrigCtx)
	}
	if p.LongFreqs != nil {
		if err := checkFreqs("LongFreqs", p.LongFreqs, half); err != nil {
			return nil, err
		}
		if p.OrigCtx <= 0 {
			return nil, fmt.Errorf("OrigCtx = %d with LongFreqs: want the original context length L > 0 (tables longer than L use LongFreqs)", p.OrigCtx)
		}
	}
	if err := checkDynamic(p); err != nil {
		return nil, err
	}
	if err := r.checkNorm(); err != nil {
		return nil, err
	}
	switch {
	case p.QKScale == 0:
		return nil, fmt.Errorf("QKScale = 0: want the attention's q·k scale, finite and > 0 (1/sqrt(HeadDim) for most models; spec.Runtime fills it)")
	case !(p.QKScale > 0) || math.IsInf(p.QKScale, 1):
		return nil, fmt.Errorf("QKScale = %v: want finite and > 0", p.QKScale)
	case p.MaxPositions < 0:
		return nil, fmt.Errorf("MaxPositions = %d: want >= 0 (0: not known)", p.MaxPositions)
	}
	return r, nil
}

// findShape returns the index of p's shape in shapeList, or an error naming
// the first field no shape the package holds matches, with the shapes it
// holds.
func findShape(p Params) (int, error) {
	if p.Layout != "interleaved" && p.Layout != "neox" {
		return 0, fmt.Errorf("Layout = %q: want \"interleaved\" or \"neox\"", p.Layout)
	}
	want := Shape{p.HeadDim, p.RotaryDim, p.Layout}
	if i := slices.Index(shapeList, want); i >= 0 {
		return i, nil
	}
	field, value := "Layout", fmt.Sprintf("%q", p.Layout)
	switch {
	case !slices.ContainsFunc(shapeList, func(s Shape) bool { return s.HeadDim == p.HeadDim }):
		field, value = "HeadDim", fmt.Sprint(p.HeadDim)
	case !slices.ContainsFunc(shapeList, func(s Shape) bool { return s.HeadDim == p.HeadDim && s.RotaryDim == p.RotaryDim }):
		field, value = "RotaryDim", fmt.Sprint(p.RotaryDim)
	}
	var have []string
	for _, s := range shapeList {
		have = append(have, s.String())
	}
	return 0, fmt.Errorf("%s = %s: no kernels for the shape %s (HeadDim/RotaryDim/Layout); this package has %s", field, value, want, strings.Join(have, ", "))
}

// checkFreqs checks a frequency slice: half values, each finite and >= 0.
func checkFreqs(name string, f []float64, half int) error {
	if len(f) != half {
		return fmt.Errorf("len(%s) = %d: want RotaryDim/2 = %d", name, len(f), half)
	}
	for i, v := range f {
		if !(v >= 0) || math.IsInf(v, 1) {
			return fmt.Errorf("%s[%d] = %v: want finite and >= 0", name, i, v)
		}
	}
	return nil
}

// checkDynamic checks the dynamic NTK fields: all zero, or a factor >= 1, a
// base > 1, an original context and no LongFreqs, in a package that computes
// dynamic NTK frequencies.
func checkDynamic(p Params) error {
	if p.DynamicFactor == 0 && p.DynamicBase == 0 {
		return nil
	}
	switch {
	case !(p.DynamicFactor >= 1) || math.IsInf(p.DynamicFactor, 1):
		return fmt.Errorf("DynamicFactor = %v: want finite and >= 1 (0 with DynamicBase 0: no dynamic NTK)", p.DynamicFactor)
	case !(p.DynamicBase > 1) || math.IsInf(p.DynamicBase, 1):
		return fmt.Errorf("DynamicBase = %v with DynamicFactor %v: want finite and > 1", p.DynamicBase, p.DynamicFactor)
	case p.OrigCtx <= 0:
		return fmt.Errorf("OrigCtx = %d with DynamicFactor %v: want the original context length L > 0", p.OrigCtx, p.DynamicFactor)
	case p.LongFreqs != nil:
		return fmt.Errorf("DynamicFactor = %v with LongFreqs: want one of dynamic NTK and longrope", p.DynamicFactor)
	case p.RotaryDim <= 2:
		return fmt.Errorf("DynamicFactor = %v with RotaryDim = %d: want RotaryDim > 2", p.DynamicFactor, p.RotaryDim)
	case dynamicNTK == nil:
		return fmt.Errorf("DynamicFactor = %v: this package does not compute dynamic NTK frequencies (generate it for a dynamic NTK model)", p.DynamicFactor)
	}
	return nil
}

// checkNorm checks the QK-norm fields and sets r.nv: no norm (every field
// zero but NormEps, which a config gives whether or not it normalizes q and
// k), or a kind, scope and placement this package has kernels for at r's
// shape, with ε finite and >= 0.
func (r *Rotary) checkNorm() error {
	p := &r.p
	if p.NormKind == "" {
		if p.NormScope != "" || p.NormAfter {
			return fmt.Errorf("NormScope = %q, NormAfter = %v with NormKind \"\": want no scope and no placement without a norm", p.NormScope, p.NormAfter)
		}
		return nil
	}
	k := slices.Index(normKinds[:], p.NormKind)
	if k < 0 {
		return fmt.Errorf("NormKind = %q: want \"\" (none), \"rms\", \"gemma\" or \"l2\"", p.NormKind)
	}
	if p.NormScope != "head" && p.NormScope != "token" {
		return fmt.Errorf("NormScope = %q with NormKind %q: want \"head\" or \"token\"", p.NormScope, p.NormKind)
	}
	if !(p.NormEps >= 0) || math.IsInf(p.NormEps, 1) {
		return fmt.Errorf("NormEps = %v: want finite and >= 0", p.NormEps)
	}
	token := p.NormScope == "token"
	if token && p.HeadDim%8 != 0 {
		return fmt.Errorf("NormScope = \"token\" with HeadDim = %d: want HeadDim a multiple of 8", p.HeadDim)
	}
	v := normVariant(k, token, p.NormAfter)
	g := &backends[len(backends)-1].shapes[r.si]
	if g.norm[v] == nil {
		var have []string
		for w, f := range g.norm {
			if f != nil {
				have = append(have, normName(w))
			}
		}
		has := "none"
		if have != nil {
			has = strings.Join(have, ", ")
		}
		return fmt.Errorf("NormKind = %q, NormScope = %q, NormAfter = %v: no kernels for the norm %s at the shape %s; this package has %s there", p.NormKind, p.NormScope, p.NormAfter, normName(v), shapeList[r.si], has)
	}
	r.nv = v
	return nil
}

// checkWeights panics unless the weight slice named name has the values
// r's QK-norm takes for the view s, named view.
func (r *Rotary) checkWeights(fn, name string, n int, view string, s Strides) {
	kind, token := r.nv/4, r.nv%4/normToken == 1
	switch {
	case kind == normL2:
		if n != 0 {
			panicf("%s: len(%s) = %d: want nil: QK-norm l2 has no weights", fn, name, n)
		}
	case token:
		if n != s.Heads*r.hd {
			panicf("%s: len(%s) = %d: want %s.Heads·HeadDim = %d (QK-norm %s over a token's heads, HeadDim = %d)", fn, name, n, view, s.Heads*r.hd, normKinds[kind], r.hd)
		}
	default:
		if n != r.hd {
			panicf("%s: len(%s) = %d: want HeadDim = %d (QK-norm %s over each head)", fn, name, n, r.hd, normKinds[kind])
		}
	}
}

// maxOf returns the largest value of f, 0 for none.
func maxOf(f []float64) float64 {
	m := 0.0
	for _, v := range f {
		m = max(m, v)
	}
	return m
}

// Params returns a copy of the numbers r was made from.
func (r *Rotary) Params() Params {
	r.checkNil("Rotary.Params")
	return r.p.clone()
}

// Shape returns r's shape.
func (r *Rotary) Shape() Shape {
	r.checkNil("Rotary.Shape")
	return shapeList[r.si]
}

// kern returns the active backend's kernels for r's shape.
func (r *Rotary) kern() *kernels { return &active.shapes[r.si] }

// checkNil panics, naming fn, if r is nil.
func (r *Rotary) checkNil(fn string) {
	if r == nil {
		panicf("%s: r = nil: want a Rotary from New", fn)
	}
}

// TableFreqs returns the frequencies a table reaching position n−1 uses:
// Freqs, but LongFreqs (longrope) or the dynamic NTK frequencies of a
// sequence of n tokens when n > OrigCtx.
func (r *Rotary) TableFreqs(n int) []float64 {
	r.checkNil("Rotary.TableFreqs")
	return slices.Clone(r.tableFreqs(n))
}

// tableFreqs is TableFreqs without the copy of Freqs or LongFreqs.
func (r *Rotary) tableFreqs(n int) []float64 {
	p := &r.p
	switch {
	case p.LongFreqs != nil && n > p.OrigCtx:
		return p.LongFreqs
	case p.DynamicFactor != 0 && n > p.OrigCtx:
		f := make([]float64, r.rd/2)
		dynamicNTK(f, p.DynamicBase, p.DynamicFactor, p.OrigCtx, r.rd, n)
		return f
	}
	return p.Freqs
}

// dynamicNTK is dynamicFreqs where the package computes dynamic NTK
// frequencies (it sets it), else nil.
var dynamicNTK func(f []float64, base, factor float64, origCtx, r, n int)

// count returns n and word, plural unless n is 1: "1 token", "2 tokens".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func panicf(format string, args ...any) {
	panic(pkgName + "." + fmt.Sprintf(format, args...))
}
