// Package spec is the math of a RoPE specification, with nothing but the
// standard library: what a spec is (Spec), its validation, the frequencies
// and attention factor of every scaling scheme (Frequencies, Scale,
// Resolve), the pair layouts and multi-axis maps, and the readers that turn
// a model's Hugging Face config.json (LoadHFConfig) or GGUF file (LoadGGUF,
// ReadGGUF) into a Spec. ropegen's generator (package gen) computes every
// number it bakes into a package here; an engine that loads models at run
// time calls the same code (LoadHFConfigLayers or LoadGGUF, Resolve, then
// Params.Runtime) to fill a generated package's Params, and gets the same
// bits. What ropegen -explain prints and draws of a spec is not here but in
// internal/explain, so that an engine's binary does not carry it.
//
// What the numbers mean is docs/contract.md: §2 the layouts, §3 the
// frequencies and scaling, §9 the multi-axis schemes.
package spec

import (
	"fmt"
	"go/token"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Layout names which two indices of a head form pair i (docs/contract.md
// §2), as the -layout flag spells it.
type Layout string

// The layouts.
const (
	Interleaved Layout = "interleaved" // (2i, 2i+1)
	NeoX        Layout = "neox"        // (i, i+RotaryDim/2)
)

// Layouts lists the layouts.
var Layouts = []Layout{Interleaved, NeoX}

// Limits on the head dimension.
const (
	MinHeadDim = 2
	MaxHeadDim = 4096
)

// Spec is a RoPE kernel specification: everything the generated package is
// specialised for. The zero value is not valid; see DefaultSpec.
type Spec struct {
	HeadDim   int     // values per head vector; even, MinHeadDim…MaxHeadDim
	RotaryDim int     // leading values of each head that are rotated; even, ≤ HeadDim; 0 means HeadDim
	Base      float64 // θ_i = Base^(−2i/RotaryDim) before scaling; finite, > 1
	DType     string  // element type of x: "f32", "f64", "f16", "bf16"
	Layout    Layout  // Interleaved or NeoX
	Package   string  // Go package name of the output
	Scaling   Scaling // frequency scaling; the zero value is no scaling
	Axes      string  // multi-axis scheme: AxesNone (1-D), AxesMRoPE, AxesInterleaved, AxesERNIE, AxesVision or AxesPixtral
	Sections  []int   // AxesMRoPE, AxesInterleaved: pairs per axis (time, height, width); AxesERNIE: (height, width, time); summing to RotaryDim/2
	// Caches are the KV cache types the package stores keys and values
	// as (with DType "f32"): each of CacheFormats, once, the head dim a
	// whole number of each one's blocks; nil for none. The -out-dtype
	// flag's list.
	Caches []CacheType
	// MaxPositions is the model's context length, its config's
	// max_position_embeddings (0: not known). It changes no frequency; a
	// generated package exports it, so that an engine can size its tables.
	MaxPositions int
	QKNorm       QKNorm // QK-norm fused with the rotation (ApplyNormQK); the zero value is none
	// QKScale is the factor by which the model's attention multiplies
	// q·k before the softmax (transformers' scaling, flash attention's
	// softmax_scale, llama.cpp's kq_scale), when it is not
	// 1/sqrt(HeadDim): for MLA (DeepSeek-V2/V3 and the models after them)
	// 1/sqrt(qk_nope_head_dim + qk_rope_head_dim) times YaRN's mscale²,
	// for Gemma 2 and 3 1/sqrt(query_pre_attn_scalar), for Granite
	// attention_multiplier (LoadHFConfigWith and LoadGGUFWith set it from
	// the model; a note says how). It changes no frequency: Runtime
	// carries it to the engine. 0 means 1/sqrt(HeadDim); else finite and
	// > 0.
	QKScale float64
}

// Scaling selects and parameterises a frequency scaling scheme (docs/contract.md §3).
// Fields that a scheme does not use must be left zero.
type Scaling struct {
	Type           string    // "none" (or ""), "linear", "ntk", "yarn", "llama3", "longrope", "dynamic", "proportional"
	Factor         float64   // s
	OrigCtx        int       // L, the original context length (yarn, llama3, longrope)
	BetaFast       float64   // yarn; 0 means 32
	BetaSlow       float64   // yarn; 0 means 1
	AttnFactor     float64   // A given explicitly (yarn, longrope); 0 means derived
	MScale         float64   // yarn (DeepSeek style); 0 means unset
	MScaleAllDim   float64   // yarn (DeepSeek style); 0 means unset
	Truncate       bool      // yarn: floor/ceil the ramp bounds (Hugging Face's default is true)
	LowFreqFactor  float64   // llama3
	HighFreqFactor float64   // llama3
	ShortFactor    []float64 // longrope, RotaryDim/2 values
	LongFactor     []float64 // longrope, RotaryDim/2 values
	FreqFactors    []float64 // explicit per-pair divisors (any type), RotaryDim/2 values
	RopeAngles     int       // proportional: pairs 0…RopeAngles−1 turn, the rest keep θ = 0
}

// DefaultSpec is the spec of `ropegen` with no flags: heads of 128 values,
// all rotated as interleaved pairs, base 10000, float32, no scaling,
// package rope.
func DefaultSpec() Spec {
	return Spec{
		HeadDim: 128,
		Base:    10000,
		DType:   "f32",
		Layout:  Interleaved,
		Package: "rope",
		Scaling: Scaling{Type: "none", Truncate: true},
	}
}

// DTypes lists the element types ropegen knows, in flag order, and whether
// this version generates kernels for them.
var DTypes = []struct {
	Name      string
	Supported bool
}{
	{"f32", true},
	{"f64", true},
	{"f16", true},
	{"bf16", true},
}

// SpecError is a validation failure: the field (named as its CLI flag), the
// value given and what is accepted.
type SpecError struct {
	Field string // flag name without the dash, e.g. "dim"
	// Value is the value given as the message shows it: a string Go-quoted
	// (so that "neox " shows its space), a number as fmt prints it, a list
	// by its length or as its elements.
	Value    string
	Accepted string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("-%s %s: %s", e.Field, e.Value, e.Accepted)
}

// shown is a value already formatted for a SpecError, not quoted again: a
// number printed by a helper, a list's length, a list's elements.
type shown string

// specErr returns a *SpecError for field and value: a string value is
// quoted with %q, a shown one used as it is, any other printed with fmt.
func specErr(field string, value any, format string, args ...any) error {
	var v string
	switch x := value.(type) {
	case string:
		v = strconv.Quote(x)
	case Layout:
		v = strconv.Quote(string(x))
	case NormKind:
		v = strconv.Quote(string(x))
	case shown:
		v = string(x)
	default:
		v = fmt.Sprint(x)
	}
	return &SpecError{Field: field, Value: v, Accepted: fmt.Sprintf(format, args...)}
}

// quoteAll returns the elements of l Go-quoted and joined by ", ".
func quoteAll[S ~string](l []S) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(string(s))
	}
	return strings.Join(q, ", ")
}

// joinNames returns the elements of l joined by sep.
func joinNames[S ~string](l []S, sep string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = string(s)
	}
	return strings.Join(q, sep)
}

// shortFloat formats f exactly, in the shortest form.
func shortFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Rotary returns the effective Rotary dimension.
func (s Spec) Rotary() int {
	if s.RotaryDim == 0 {
		return s.HeadDim
	}
	return s.RotaryDim
}

// Validate reports the first problem with s, as a *SpecError naming the flag,
// the value and the accepted range.
func (s Spec) Validate() error { return s.validate(nil) }

// validate is Validate. With sd not nil it also sets *sd to the scaled
// frequencies it computes to check them, so that Frequencies need not
// compute them again (2048 correctly rounded powers for a 4096-wide head).
func (s Spec) validate(sd **Scaled) error {
	if s.HeadDim < MinHeadDim || s.HeadDim > MaxHeadDim || s.HeadDim%2 != 0 {
		return specErr("dim", s.HeadDim, "head dim must be even, %d…%d", MinHeadDim, MaxHeadDim)
	}
	if r := s.RotaryDim; r != 0 && (r < 2 || r%2 != 0 || r > s.HeadDim) {
		return specErr("rotary-dim", r, "rotary dim must be even, 2…%d (the head dim)", s.HeadDim)
	}
	if math.IsNaN(s.Base) || math.IsInf(s.Base, 0) || s.Base <= 1 {
		return specErr("base", s.Base, "base must be finite and > 1")
	}
	if err := validateDType("dtype", s.DType); err != nil {
		return err
	}
	if err := s.validateCaches(); err != nil {
		return err
	}
	if !slices.Contains(Layouts, s.Layout) {
		return specErr("layout", string(s.Layout), "layout must be %q or %q", Interleaved, NeoX)
	}
	if !token.IsIdentifier(s.Package) || s.Package == "_" || s.Package == "main" || token.Lookup(s.Package).IsKeyword() {
		return specErr("pkg", s.Package, "package name must be a Go identifier, not a keyword, _ or main")
	}
	if s.MaxPositions < 0 {
		return specErr("max-positions", s.MaxPositions, "the context length must be >= 0 (0: not known)")
	}
	if f := s.QKScale; f != 0 && !finitePos(f) {
		return specErr("qk-scale", f, "the attention's q·k scale must be finite and > 0 (0 means 1/sqrt(dim))")
	}
	out, err := s.validateScaling()
	if err != nil {
		return err
	}
	if sd != nil {
		*sd = out
	}
	if err := s.validateAxes(); err != nil {
		return err
	}
	return s.validateNorm()
}

func validateDType(field, name string) error {
	var names []string
	for _, d := range DTypes {
		names = append(names, d.Name)
		if d.Name == name {
			if !d.Supported {
				return specErr(field, name, "dtype %q is not supported yet", name)
			}
			return nil
		}
	}
	return specErr(field, name, "dtype must be one of %s", quoteAll(names))
}
