// Package vec is the vector-operation layer every kernel family of a
// generated package is declared against once (docs/contract.md §5, §10,
// §11): the families (rotation, QK-norm, the KV-cache conversions, the
// table fill) are Go functions over the Target interface, and each
// instruction set is one implementation of it: asm/vec/amd64 (AVX2 and
// AVX-512 through avo), asm/vec/purego (pure Go through jennifer), and the
// NEON and RVV targets.
//
// A family says what one head computes, block by block, in the operations
// of Target and Block; the target decides everything the arithmetic does not
// fix: block widths and tails (fixed-width targets unroll a head, a long
// head loops over chunks, a vector-length agnostic target strip-mines at
// run time), how a block's pairs are seen (adjacent lanes swapped, or
// deinterleaving loads), registers, table preloads and how many heads one
// loop iteration takes. The signatures of the kernels are declared here
// once (Func.Params); every target derives its declarations from them.
package vec

import (
	"fmt"
	"slices"
	"strings"
)

// Elem is a type of value in memory.
type Elem struct {
	Name string // "f32", "f64", "f16", "bf16", "e4m3", "e5m2", "q8_0", "q4_0", …
	Go   string // the Go type of one element
	Size int    // bytes per element
}

// The element types.
var (
	F32  = Elem{"f32", "float32", 4}
	F64  = Elem{"f64", "float64", 8}
	F16  = Elem{"f16", "uint16", 2}
	BF16 = Elem{"bf16", "uint16", 2}
	E4M3 = Elem{"e4m3", "uint8", 1}
	E5M2 = Elem{"e5m2", "uint8", 1}
	Q8   = Elem{"q8_0", "uint8", 1}
	// ggml's 4- and 5-bit block formats (docs/contract.md §11): arrays
	// of them are bytes, as q8_0's.
	Q4_0 = Elem{"q4_0", "uint8", 1}
	Q4_1 = Elem{"q4_1", "uint8", 1}
	Q5_0 = Elem{"q5_0", "uint8", 1}
	Q5_1 = Elem{"q5_1", "uint8", 1}
	// ggml's mxfp4 (E8M0 exponent, 32 E2M1 values): bytes, as q4_0's.
	MXFP4 = Elem{"mxfp4", "uint8", 1}
	// ggml's iq4_nl (f16 d, 32 indices into a non-uniform 4-bit grid):
	// bytes, as q4_0's.
	IQ4NL = Elem{"iq4_nl", "uint8", 1}
	// ggml's nvfp4 (blocks of 64 values: four UE4M3 scales, one per 16,
	// and 64 E2M1 values): bytes, as q4_0's.
	NVFP4 = Elem{"nvfp4", "uint8", 1}
	// vLLM's int8_per_token_head (a head of h values in h+4 bytes: its
	// float32 scale, then h int8): bytes, as q8_0's (int8.go).
	Int8PerTokenHead = Elem{"int8_per_token_head", "uint8", 1}
	// NVIDIA's NVFP4 with a float32 tensor scale (blocks of 16 values:
	// 8 bytes of E2M1 codes, then an e4m3fn scale; nvfp4gs.go): bytes.
	NVFP4GS = Elem{"nvfp4_gs", "uint8", 1}
)

// ByteElems are the element types whose arrays are bytes, in the order of
// the run-time's byte kernels (Func.Field's bytes[i]).
var ByteElems = []Elem{E4M3, Q8, E5M2, Q4_0, Q4_1, Q5_0, Q5_1, MXFP4, IQ4NL, NVFP4, Int8PerTokenHead, NVFP4GS}

// BlockBytes is the bytes of one block (of BlockValues values) of a block
// format (q8_0 34; q4_0 18, q4_1 20, q5_0 22, q5_1 24; mxfp4 17; iq4_nl
// 18; nvfp4 36, a block of 64; nvfp4_gs 18, two of its blocks of 16),
// 0 for an element stored value by value.
func (e Elem) BlockBytes() int {
	switch e {
	case Q8:
		return 34
	case Q4_0:
		return 18
	case Q4_1:
		return 20
	case Q5_0:
		return 22
	case Q5_1:
		return 24
	case MXFP4:
		return 17
	case IQ4NL:
		return 18
	case NVFP4:
		return 36
	case NVFP4GS:
		return 18
	}
	return 0
}

// BlockValues is the values of one block of a block format: 64 for nvfp4,
// 32 for the others, 0 for an element stored value by value.
func (e Elem) BlockValues() int {
	switch {
	case e == NVFP4:
		return 64
	case e.BlockBytes() != 0:
		return 32
	}
	return 0
}

// HeadBytes is the bytes of a head of h values of e: whole blocks of a
// block format, h+4 for int8_per_token_head (its scale, then h int8),
// else h elements.
func (e Elem) HeadBytes(h int) int {
	switch {
	case e == Int8PerTokenHead:
		return h + 4
	case e.BlockBytes() != 0:
		return h / e.BlockValues() * e.BlockBytes()
	}
	return h * e.Size
}

// Compute is the type the arithmetic on e runs in: float64 for f64, float32
// for everything else.
func (e Elem) Compute() Elem {
	if e == F64 {
		return F64
	}
	return F32
}

// Shape is the geometry of a head.
type Shape struct {
	HeadDim   int  // values per head
	RotaryDim int  // leading values that turn
	NeoX      bool // pair i is (i, i+R/2), else (2i, 2i+1)
}

// Half is the number of pairs, R/2.
func (s Shape) Half() int { return s.RotaryDim / 2 }

// Suffix names the shape in a kernel's name: "128x64i", "128x128n".
func (s Shape) Suffix() string {
	l := "i"
	if s.NeoX {
		l = "n"
	}
	return fmt.Sprintf("%dx%d%s", s.HeadDim, s.RotaryDim, l)
}

// Kind is what a kernel computes, spelled as the field of the run-time's
// kernels struct that holds it.
type Kind string

// The kinds.
const (
	Fwd        Kind = "fwd"        // x ← A·R·x in place, values [0, R)
	Inv        Kind = "inv"        // x ← A·Rᵀ·x
	FwdRows    Kind = "fwdRows"    // fwd, head h by rows[h·2R:]
	InvRows    Kind = "invRows"    // inv likewise
	Fill       Kind = "fill"       // a table row's leading pairs, fillRow's bits
	Norm       Kind = "norm"       // QK-norm and the forward rotation
	NormOnly   Kind = "normOnly"   // the QK-norm alone
	RotTo      Kind = "rotTo"      // float32 heads rotated forward into others, values past R copied
	Store      Kind = "store"      // float32 heads into cache heads
	StoreShift Kind = "storeShift" // the first ShiftValues values only
	Load       Kind = "load"       // cache heads into float32 heads
	LoadShift  Kind = "loadShift"  // the first ShiftValues values only
	To         Kind = "to"         // float32 heads rotated forward into f16 or bf16 heads, values past R narrowed
	Shift      Kind = "shift"      // f16 or bf16 cache heads rotated forward in place (a row with A = 1)
	ShiftInv   Kind = "shiftInv"   // backward likewise
	Hadamard   Kind = "hadamard"   // x ← H·x in place: the normalized Walsh–Hadamard transform of each head of HeadDim values (hadamard.go)
)

// Headwise reports whether k sees a head only through its HeadDim and
// Count, never its rotary dimension or layout: the cache conversions and
// the Hadamard transform. Shapes of one package that share those share the
// kernel (Func.Key).
func (k Kind) Headwise() bool {
	switch k {
	case Store, StoreShift, Load, LoadShift, Hadamard:
		return true
	}
	return false
}

// Inverse reports whether k turns backward.
func (k Kind) Inverse() bool { return k == Inv || k == InvRows || k == ShiftInv }

// Rotates reports whether k is one of the rotation family's kinds.
func (k Kind) Rotates() bool {
	switch k {
	case Fwd, Inv, FwdRows, InvRows, RotTo, To, Shift, ShiftInv:
		return true
	}
	return false
}

// NormVariant is one QK-norm kernel of docs/contract.md §10.
type NormVariant struct {
	Kind  string // "rms", "gemma" or "l2"
	Token bool   // a token's heads are one vector
	After bool   // normalize the rotated vector
}

// NormKinds are the norm kinds in the order of NormVariant.Index.
var NormKinds = []string{"rms", "gemma", "l2"}

// Index is the variant's place in the run-time's [12] arrays:
// kind·4 + token·2 + after.
func (v NormVariant) Index() int {
	i := 0
	for k, n := range NormKinds {
		if n == v.Kind {
			i = 4 * k
		}
	}
	if v.Token {
		i += 2
	}
	if v.After {
		i++
	}
	return i
}

// Weighted reports whether the norm multiplies by weights (rms, gemma).
func (v NormVariant) Weighted() bool { return v.Kind != "l2" }

func (v NormVariant) String() string {
	s := v.Kind + map[bool]string{true: "Token", false: "Head"}[v.Token]
	if v.After {
		s += "After"
	}
	return s
}

// Func is one kernel of one shape: what it computes and, through Params,
// its Go signature.
type Func struct {
	Kind  Kind
	Shape Shape
	X     Elem        // the elements of x (the heads a rotation or norm turns in place; F32 for the cache kinds)
	Cache Elem        // store, load, to, shift: the cache's elements
	Norm  NormVariant // norm, normOnly
	Level string      // the target's level, e.g. "avx512", "generic"
}

// C is the compute type of f: the table's and the arithmetic's.
func (f *Func) C() Elem { return f.X.Compute() }

// Count is how many leading values of a head f reads and writes: the
// rotary values for the shift kinds (for a block format the blocks
// holding one; int8_per_token_head's one scale covers the whole head),
// else every value.
func (f *Func) Count() int {
	if f.Kind != StoreShift && f.Kind != LoadShift || f.Cache == Int8PerTokenHead { // int8_per_token_head: one block, the head
		return f.Shape.HeadDim
	}
	if bv := f.Cache.BlockValues(); bv != 0 {
		return (f.Shape.RotaryDim + bv - 1) / bv * bv
	}
	return f.Shape.RotaryDim
}

// Key is the kernel that serves f: f itself, or for a Headwise kind f at
// the shape that keeps only what the kernel sees, {HeadDim, Count} (its
// RotaryDim the Count, interleaved), so that every shape of a package with
// the same HeadDim and Count names one kernel.
func (f Func) Key() Func {
	if f.Kind.Headwise() {
		f.Shape = Shape{HeadDim: f.Shape.HeadDim, RotaryDim: f.Count()}
	}
	return f
}

// AppendKey appends f's Key to fs unless fs holds it: a package's kernel
// list, each kernel once however many shapes it serves.
func AppendKey(fs []*Func, f Func) []*Func {
	if f = f.Key(); !slices.ContainsFunc(fs, func(g *Func) bool { return *g == f }) {
		fs = append(fs, &f)
	}
	return fs
}

// Serves reports whether f is the kernel of kind f.Kind that a shape s
// calls (the Key of f's kind, variant and elements at s).
func (f *Func) Serves(s Shape) bool {
	g := *f
	g.Shape = s
	return g.Key() == *f
}

// Name is f's Go name: kind, variant, shape and level, e.g.
// "fwd_128x64i_avx512", "norm_rmsHeadAfter_128x128n_avx2",
// "store_q8_0_128_generic", "storeShift_q8_0_128x64_neon". A Headwise
// kind's shape is its Key's: the head dimension, and the Count when that
// is less.
func (f *Func) Name() string {
	k := string(f.Kind)
	switch {
	case f.Kind == Norm || f.Kind == NormOnly:
		k += "_" + f.Norm.String()
	case f.Cache != Elem{}:
		k += "_" + f.Cache.Name
	}
	suffix := f.Shape.Suffix()
	if f.Kind.Headwise() {
		suffix = fmt.Sprint(f.Shape.HeadDim)
		if n := f.Count(); n < f.Shape.HeadDim {
			suffix += fmt.Sprintf("x%d", n)
		}
	}
	return fmt.Sprintf("%s_%s_%s", k, suffix, f.Level)
}

// Field is where f goes in the run-time's kernels struct, as a Go
// selector from a kernels value: "fwd", "norm[5]", "half[1].storeShift",
// "bytes[0].load".
func (f *Func) Field() string {
	switch {
	case f.Kind == Norm || f.Kind == NormOnly:
		return fmt.Sprintf("%s[%d]", f.Kind, f.Norm.Index())
	case f.Cache == F16 || f.Cache == BF16:
		return fmt.Sprintf("half[%d].%s", map[Elem]int{F16: 0, BF16: 1}[f.Cache], f.Kind)
	case f.Cache.Size == 1:
		return fmt.Sprintf("bytes[%d].%s", slices.Index(ByteElems, f.Cache), f.Kind)
	}
	return string(f.Kind)
}

// Param is one parameter or result of a kernel.
type Param struct {
	Name string
	Type string // Go type: "[]float32", "int", "*float32", "float64"
}

// Params are f's parameters: the one declaration of its signature.
func (f *Func) Params() []Param {
	c := f.C().Go
	heads := func(x string) []Param {
		return []Param{{"x", "[]" + x}, {"stride", "int"}, {"n", "int"}}
	}
	conv := func(dst, src string) []Param {
		return []Param{{"dst", "[]" + dst}, {"ds", "int"}, {"src", "[]" + src}, {"ss", "int"}, {"n", "int"}}
	}
	row := Param{"r", "*" + c}
	switch f.Kind {
	case Fwd, Inv:
		return append(heads(f.X.Go), row)
	case Hadamard:
		return heads(f.X.Go)
	case Shift, ShiftInv:
		return append(heads(f.Cache.Go), row)
	case FwdRows, InvRows:
		return append(heads(f.X.Go), Param{"rows", "[]" + c})
	case Norm, NormOnly:
		return append(heads(f.X.Go), row, Param{"w", "[]" + c}, Param{"eps", "float64"})
	case RotTo:
		return append(conv("float32", "float32"), row)
	case To:
		return append(conv(f.Cache.Go, "float32"), row)
	case Store, StoreShift, Load, LoadShift:
		p := conv(f.Cache.Go, "float32")
		if f.Kind == Load || f.Kind == LoadShift {
			p = conv("float32", f.Cache.Go)
		}
		if f.Cache.Size == 1 { // e4m3's and e5m2's scale, nvfp4_gs's g; q8_0 has the same signature
			p = append(p, Param{"scale", "float32"})
		}
		return p
	case Fill:
		return []Param{row, {"pos", "float64"}, {"freqs", "*float64"}, {"attn", "float64"}}
	}
	panic("vec: unknown kind " + string(f.Kind))
}

// Results are f's results: fill's count of pairs written.
func (f *Func) Results() []Param {
	if f.Kind == Fill {
		return []Param{{"done", "int"}}
	}
	return nil
}

// Signature is f's Go signature, "func(x []float32, stride int, n int, r *float32)".
func (f *Func) Signature() string {
	list := func(ps []Param) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Name+" "+p.Type)
		}
		return strings.Join(s, ", ")
	}
	sig := "func(" + list(f.Params()) + ")"
	if r := f.Results(); r != nil {
		sig += " (" + list(r) + ")"
	}
	return sig
}

// Decl is f's Go declaration, as an assembly function's stub needs it:
// its doc comment, //go:noescape and "func name(…)".
func (f *Func) Decl() string {
	return fmt.Sprintf("// %s %s, using %s.\n//\n//go:noescape\nfunc %s%s\n", f.Name(), f.Doc(), f.Level, f.Name(), strings.TrimPrefix(f.Signature(), "func"))
}

// Frame returns the byte offset of each parameter and result in the
// function's argument frame (Go's ABI0) and the frame's size: each value
// aligned to its size, a slice 24 bytes, the results from a multiple of 8;
// the size ends with the last value (go vet's asmdecl checks it).
func (f *Func) Frame() (offsets map[string]int, size int) {
	offsets = map[string]int{}
	place := func(ps []Param) {
		for _, p := range ps {
			n := 8
			switch {
			case strings.HasPrefix(p.Type, "[]"):
				n = 24
			case p.Type == "float32":
				n = 4
			}
			a := min(n, 8)
			size = (size + a - 1) / a * a
			offsets[p.Name] = size
			size += n
		}
	}
	place(f.Params())
	if r := f.Results(); r != nil {
		size = (size + 7) / 8 * 8
		place(r)
	}
	return offsets, size
}

// Doc is f's doc comment, without its name.
func (f *Func) Doc() string {
	s := f.Shape
	h := fmt.Sprintf("of %d values (%d rotary, %s)", s.HeadDim, s.RotaryDim, map[bool]string{true: "neox", false: "interleaved"}[s.NeoX])
	if f.Kind.Headwise() { // every shape of its HeadDim and Count
		h = fmt.Sprintf("of %d values", s.HeadDim)
	}
	switch f.Kind {
	case Fwd, Inv, Shift, ShiftInv:
		d := map[bool]string{true: "backward (A·R_pᵀ·x)", false: "forward (A·R_p·x)"}[f.Kind.Inverse()]
		return fmt.Sprintf("rotates the n heads %s of x, stride elements apart, %s in place with table row r", h, d)
	case FwdRows, InvRows:
		d := map[bool]string{true: "backward", false: "forward"}[f.Kind.Inverse()]
		return fmt.Sprintf("rotates the n heads %s of x, stride elements apart, %s in place, head h with rows[h·%d:]", h, d, 2*s.RotaryDim)
	case Norm, NormOnly:
		what := map[bool]string{true: "as one vector", false: "each alone"}[f.Norm.Token]
		rot := "then rotates them forward with table row r"
		switch {
		case f.Kind == NormOnly:
			rot = "without rotating them (r unused)"
		case f.Norm.After:
			rot = "after rotating them forward with table row r"
		}
		return fmt.Sprintf("normalizes (QK-norm %s, ε = eps) the n heads %s of x, stride elements apart, %s, %s", f.Norm.Kind, h, what, rot)
	case RotTo, To:
		return fmt.Sprintf("rotates the n float32 heads %s of src, ss apart, forward with table row r into the %s heads of dst, ds apart, values past the rotary ones as they are", h, f.dstElem().Name)
	case Store, StoreShift:
		return fmt.Sprintf("stores the first %d values of the n float32 heads %s of src, ss apart, as %s into the heads of dst, ds apart", f.Count(), h, f.Cache.Name)
	case Load, LoadShift:
		return fmt.Sprintf("loads the first %d values of the n %s heads %s of src, ss apart, as float32 into the heads of dst, ds apart", f.Count(), f.Cache.Name, h)
	case Hadamard:
		return fmt.Sprintf("transforms the n heads of %d values of x, stride elements apart, by the normalized Walsh–Hadamard matrix in place", s.HeadDim)
	case Fill:
		return "writes the table values of pairs [0, done) of row r at position pos, fillRow's bits"
	}
	return ""
}

func (f *Func) dstElem() Elem {
	if f.Kind == To {
		return f.Cache
	}
	return F32
}
