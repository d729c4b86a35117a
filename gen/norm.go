package gen

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/dave/jennifer/jen"
	"github.com/ropegen/ropegen/spec"
)

// NormPlan is a plan's QK-norm (docs/contract.md §10): what ApplyNormQK
// computes, as every emitter reads it. For one normed vector x of n values
// (a head, or with Token a token's heads one after another), in the compute
// type C with float64 for the scale:
//
//	s_k = Σ fl64(x_j²) over j ≡ k (mod 8), in increasing j
//	ss  = ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7))
//	r   = C( 1 / sqrt( fl64(ss/n) + Eps ) )        each float64 op rounded
//	y_j = fl(fl(x_j·r)·w_j)   (rms; gemma: w_j → fl(1 + w_j); l2: fl(x_j·r))
//
// then the rotation of y (docs/contract.md §5), values past RotaryDim
// passing through. With After the rotation comes first and the norm takes
// the rotated vector, kept in C. f16 and bf16 values widen exactly and
// narrow once, at the end. For C = float32 every square is exact in
// float64, so the sum can neither overflow nor lose a small value.
type NormPlan struct {
	Kind     string  // spec.NormRMS, spec.NormGemma or spec.NormL2
	Eps      float64 // ε
	Token    bool    // a token's heads are normed as one vector
	After    bool    // normalize the rotated vector
	Weighted bool    // rms and gemma multiply by weights; l2 does not
}

// newNormPlan returns the NormPlan of s, or nil when s has no QK-norm.
func newNormPlan(s spec.Spec) *NormPlan {
	n := s.QKNorm
	if !n.Enabled() {
		return nil
	}
	return &NormPlan{Kind: n.Kind, Eps: n.Epsilon(), Token: n.Token(), After: n.After, Weighted: n.Weighted()}
}

// normRoundings returns c_y, the roundings after r of one normed value: x·r,
// then ·w (rms), or 1+w and ·(1+w) (gemma).
func (n *NormPlan) normRoundings() int {
	switch n.Kind {
	case spec.NormRMS:
		return 2
	case spec.NormGemma:
		return 3
	}
	return 1
}

// NormBound is the error bound of ApplyNormQK against exact arithmetic, in
// units u of the compute type (docs/contract.md §10): for value j of a
// normed vector of n values,
//
//	|y_j − y_ref_j| ≤ K·u·m_j  (+ one ulp of |y_ref_j| in the storage type for f16 and bf16)
//
// with K Rotated for the rotated values and Pass for those past RotaryDim,
// and the scale m_j, for pair (a, b) holding j, y* the exact normed vector
// and r* its exact scale (w'_j = w_j for rms, 1 + w_j for gemma, 1 for l2):
//
//	before: m_j = A·(|y*_a| + |y*_b|)          rotated;   |y*_j|            passing through
//	after:  m_j = r*·|w'_j|·A·(|x_a| + |x_b|)   rotated;   r*·|w'_j|·|x_j|   passing through
//
// Derivation. r's relative error c_r: float32 compute, 1 (its rounding to
// float32; the float64 steps add (⌈n/8⌉+4)·2⁻⁵³, far below 2⁻²⁴); float64
// compute, ⌈n/8⌉+4: each s_k sums at most ⌈n/8⌉ squares, each rounded,
// with as many rounded additions, the tree three more, then ss/n, +ε,
// sqrt (halving what it takes in) and 1/q one each. Then c_y roundings per
// value (normRoundings). The rotation adds docs/contract.md §6's 4 (the
// table's rounding, two products, one sum, relative to A·(|y_a|+|y_b|)),
// and before the rotation |(A·R·(y − y*))_j| ≤ A·(|y_a − y*_a| + |y_b −
// y*_b|). After it, the rotated vector z is off by at most 4·u·A·(|x_a| +
// |x_b|) per value, which moves ‖z‖ by at most 4√2·u·‖A·R·x‖ and r by at
// most 6·u relatively. One u more covers the second-order terms and the
// float64 reference's own error for float32 compute.
func (p *Plan) NormBound(n int) (rotated, pass int) {
	nb := p.Norm
	cr := 1
	if p.computeType() == "float64" {
		cr = (n+spec.NormLanes-1)/spec.NormLanes + 4
	}
	pass = cr + nb.normRoundings() + 1
	if nb.After {
		pass += 6
	}
	return pass + 4, pass
}

// weightType is the Go type of ApplyNormQK's weights: the compute type,
// float32 for f32, f16 and bf16 and float64 for f64 (whose callers have
// float64 weights; float32 weights convert to it exactly).
func (p *Plan) weightType() string { return p.computeType() }

// normKernType is the type of a backend's norm kernel: it normalizes and
// rotates n heads of x, head h at x[h·stride:][:HeadDim], with table row r
// and weights w (HeadDim values shared by every head; Token: n·HeadDim
// values, head h's at w[h·HeadDim:]; l2: none).
func (p *Plan) normKernType() *jen.Statement {
	return jen.Func().Params(jen.Id("x").Index().Id(p.elemType()), jen.List(jen.Id("stride"), jen.Id("n")).Int(), jen.Id("r").Op("*").Id("row"), jen.Id("w").Index().Id(p.weightType()))
}

// normDoc is the package doc's paragraphs on ApplyNormQK.
func (p *Plan) normDoc() string {
	nb := p.Norm
	if nb == nil {
		return ""
	}
	over, n, weights := "each head", "HeadDim", "HeadDim weights"
	if nb.Token {
		over, n, weights = "a token's heads as one vector", "Heads·HeadDim", "Heads·HeadDim weights"
	}
	if !nb.Weighted {
		weights = "no weights"
	}
	when := "normalizes each query and key head before rotating it"
	if nb.After {
		when = "rotates each query and key head, then normalizes the rotated head"
	}
	if nb.Token {
		when = strings.Replace(strings.Replace(when, "each query and key head", "the query heads and the key heads of each token", 1), "rotated head", "rotated heads", 1)
	}
	var b strings.Builder
	b.WriteString("\n\n")
	b.WriteString(wrapDoc(fmt.Sprintf("ApplyNormQK %s, in one pass: QK-norm %s over %s, ε = NormEps, %s. For a normed vector x of n = %s values it computes, in the compute type with float64 for r,", when, nb.Kind, over, weights, n)))
	b.WriteString("\n\n")
	b.WriteString("\ts_k = Σ x_j² in float64 over j ≡ k (mod 8), in increasing j\n")
	b.WriteString("\tr   = fl(1/sqrt(fl(fl(((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)))/n) + ε))\n")
	fmt.Fprintf(&b, "\t%s\n\n", spec.NormFormula(nb.Kind))
	then := "and rotates y as above."
	if nb.After {
		then = "where x is the head rotated as above, kept in the compute type."
	}
	if p.Spec.DType == "f16" || p.Spec.DType == "bf16" {
		then += " The values widen exactly and narrow once, at the end."
	}
	b.WriteString(wrapDoc(then + " Every backend returns the same bits. Against exact arithmetic, value j of a vector of n values satisfies"))
	b.WriteString("\n\n")
	// K without its ⌈n/8⌉ term (float64 compute), which is printed as such.
	rot, pass := p.NormBound(0)
	ct := ""
	if p.computeType() == "float64" {
		ct = "⌈n/8⌉+"
	}
	fmt.Fprintf(&b, "\t|y_j − y_ref_j| ≤ K·%s·m_j%s,  K = %s%d (rotated values), %s%d (values past RotaryDim)\n\n", p.unitRoundoff(), p.dtype().ulp, ct, rot, ct, pass)
	if nb.After {
		b.WriteString(wrapDoc("with m_j = r*·|w'_j|·A·(|x_a| + |x_b|) for the pair (a, b) holding j (r*·|w'_j|·|x_j| past RotaryDim), r* the exact scale of the exactly rotated vector and w'_j the weight as applied (w_j, 1 + w_j, or 1). ropegen's docs/contract.md §10 derives K."))
	} else {
		b.WriteString(wrapDoc("with m_j = A·(|y*_a| + |y*_b|) for the pair (a, b) holding j (|y*_j| past RotaryDim), y* the exactly normalized vector. ropegen's docs/contract.md §10 derives K."))
	}
	return b.String()
}

// wrapDoc wraps text into lines of at most 76 characters.
func wrapDoc(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		l := len([]rune(w))
		switch {
		case n == 0:
		case n+1+l > 76:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// normAPI emits NormEps, ApplyNormQK and its weight check into rope.go.
func (p *Plan) normAPI(f *jen.File) {
	nb := p.Norm
	if nb == nil {
		return
	}
	T, W, pkg := p.elemType(), p.weightType(), p.Spec.Package
	fn := "Table.ApplyNormQK"
	id, lit := jen.Id, jen.Lit
	f.Line()
	f.Comment("NormEps is ε of ApplyNormQK's QK-norm, added to the mean of the squares.")
	f.Const().Id("NormEps").Op("=").Add(float(nb.Eps))

	f.Line()
	what := "normalizes each head of q and of k (QK-norm " + nb.Kind + ") and rotates it"
	if nb.After {
		what = "rotates each head of q and of k and normalizes the rotated head (QK-norm " + nb.Kind + ")"
	}
	if nb.Token {
		what = strings.Replace(what, "each head of q and of k", "the heads of each token of q, and of k, as one vector", 1)
		what = strings.Replace(what, "the rotated head", "the rotated heads", 1)
	}
	f.Comment("ApplyNormQK " + what + ",")
	f.Comment("in one pass: for every token j, the qs.Heads heads of q and the ks.Heads heads")
	f.Comment("of k at position pos[j], as ApplyQK walks them. The package doc gives the")
	f.Comment("arithmetic and its error bound; every backend returns the same bits.")
	f.Comment("")
	switch {
	case !nb.Weighted:
		f.Comment("QK-norm l2 has no weights: qw and kw must be nil (or empty).")
	case nb.Token:
		f.Comment("qw holds the query norm's weights, qs.Heads·HeadDim values, head h's at")
		f.Comment("qw[h·HeadDim:]; kw the key norm's, ks.Heads·HeadDim values. Every layer has")
		f.Comment("its own, so they come with each call.")
	default:
		f.Comment("qw holds the query norm's HeadDim weights, shared by every query head, and")
		f.Comment("kw the key norm's. Every layer has its own, so they come with each call.")
	}
	if nb.Kind == spec.NormGemma {
		f.Comment("Each value is multiplied by 1 + w (Gemma's form), computed as fl(1 + w).")
	}
	if W == "float64" {
		f.Comment("The weights are float64, the compute type of this package; float32 weights")
		f.Comment("convert to it exactly.")
	}
	f.Comment("")
	f.Comment("Views, positions and the weights' lengths are checked as in ApplyQK, and a")
	f.Comment("bad one panics before anything is written; q and k may share a buffer")
	f.Comment("(a fused QKV projection) as long as no head of q overlaps a head of k.")
	x := jen.Index().Id(T)
	ws := jen.Index().Id(W)
	checkView := func(what, xs, s string) jen.Code {
		return jen.If(jen.Op("!").Id("smallView").Call(id(s), jen.Len(id(xs)), jen.Len(id("pos")), id("HeadDim"))).Block(
			id("checkView").Call(lit(pkg+"."+fn), lit(what), id(s), jen.Len(id(xs)), jen.Len(id("pos")), id("HeadDim")),
		)
	}
	wlen := func(s string) jen.Code {
		switch {
		case !nb.Weighted:
			return lit(0)
		case nb.Token:
			return id(s).Dot("Heads").Op("*").Id("HeadDim")
		}
		return id("HeadDim")
	}
	at := func(xs, s string) jen.Code { return id(xs).Index(id("j").Op("*").Id(s).Dot("Token").Op(":")) }
	f.Func().Params(id("t").Op("*").Id("Table")).Id("ApplyNormQK").Params(
		id("q").Add(x.Clone()), id("qs").Id("Strides"), id("qw").Add(ws.Clone()),
		id("k").Add(x.Clone()), id("ks").Id("Strides"), id("kw").Add(ws.Clone()),
		id("pos").Index().Int32(),
	).Block(
		checkView("qs", "q", "qs"),
		checkView("ks", "k", "ks"),
		jen.If(jen.List(id("d"), id("ok")).Op(":=").Id("sharedOffset").Call(lit(pkg+"."+fn), id("q"), id("k")), id("ok")).Block(
			id("checkApart").Call(lit(pkg+"."+fn), id("qs"), id("ks"), id("d"), jen.Len(id("pos")), id("HeadDim")),
		),
		id("checkWeights").Call(lit("qw"), jen.Len(id("qw")), wlen("qs"), lit("qs")),
		id("checkWeights").Call(lit("kw"), jen.Len(id("kw")), wlen("ks"), lit("ks")),
		id("t").Dot("checkSeq").Call(lit(fn), id("pos")),
		id("norm").Op(":=").Id("active").Dot("norm"),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("r").Op(":=").Id("t").Dot("row").Call(jen.Int().Call(id("p"))),
			id("norm").Call(at("q", "qs"), id("qs").Dot("Head"), id("qs").Dot("Heads"), id("r"), id("qw")),
			id("norm").Call(at("k", "ks"), id("ks").Dot("Head"), id("ks").Dot("Heads"), id("r"), id("kw")),
		),
	)

	f.Line()
	f.Comment("checkWeights panics unless the weight slice named name has want values")
	f.Comment("(s names the view whose Heads a token-scope norm counts).")
	msg := pkg + "." + fn + ": len(%s) = %d: "
	var panicCall jen.Code
	switch {
	case !nb.Weighted:
		panicCall = id("panicf").Call(lit(msg+"want nil: QK-norm "+nb.Kind+" has no weights"), id("name"), id("n"))
	case nb.Token:
		panicCall = id("panicf").Call(lit(msg+"want %s.Heads·HeadDim = %d (QK-norm "+nb.Kind+" over a token's heads, HeadDim = %d)"), id("name"), id("n"), id("s"), id("want"), id("HeadDim"))
	default:
		panicCall = id("panicf").Call(lit(msg+"want HeadDim = %d (QK-norm "+nb.Kind+" over each head)"), id("name"), id("n"), id("HeadDim"))
	}
	f.Func().Id("checkWeights").Params(id("name").String(), jen.List(id("n"), id("want")).Int(), id("s").String()).Block(
		jen.If(id("n").Op("!=").Id("want")).Block(panicCall),
	)
}

// normGenericSource is the pure Go norm kernel of the plan
// (applyNormGeneric) and its helpers, as Go source.
func (p *Plan) normGenericSource() (string, error) {
	nb := p.Norm
	d := p.dtype()
	ja, jb := p.pairExprs()
	a, b := fmt.Sprintf("%#v", ja), fmt.Sprintf("%#v", jb) // gofmt respaces them in the file
	data := map[string]any{
		"T": d.goType, "C": d.compute, "W": p.weightType(),
		"Widen": d.widen, "Narrow": d.narrow,
		"A": a, "B": b,
		"Token": nb.Token, "After": nb.After, "Kind": nb.Kind,
		"Weighted": nb.Weighted,
		"Pass":     p.RotaryDim < p.HeadDim,
	}
	var buf bytes.Buffer
	if err := normGenericTmpl.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

var normGenericTmpl = template.Must(template.New("norm").Funcs(template.FuncMap{
	"w": func(fn, v string) string { // fn(v), or v when fn is ""
		if fn == "" {
			return v
		}
		return fn + "(" + v + ")"
	},
}).Parse(`
// normSums are the 8 partial sums of squares of a normed vector: value j
// adds its square to s[j mod 8], in increasing j.
type normSums [8]float64

// add adds the squares of the HeadDim values v to s: v holds values
// 0…HeadDim−1 of the vector counted from a multiple of 8.
func (s *normSums) add(v *[HeadDim]{{.C}}) {
	s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	j := 0
	for ; j+8 <= HeadDim; j += 8 {
		g := (*[8]{{.C}})(v[j:])
		// float64(a*a): exact for a float32 a; the conversion keeps a
		// float64 product from being fused into the sum.
		a0, a1, a2, a3 := float64(g[0]), float64(g[1]), float64(g[2]), float64(g[3])
		a4, a5, a6, a7 := float64(g[4]), float64(g[5]), float64(g[6]), float64(g[7])
		s0 += float64(a0 * a0)
		s1 += float64(a1 * a1)
		s2 += float64(a2 * a2)
		s3 += float64(a3 * a3)
		s4 += float64(a4 * a4)
		s5 += float64(a5 * a5)
		s6 += float64(a6 * a6)
		s7 += float64(a7 * a7)
	}
	*s = normSums{s0, s1, s2, s3, s4, s5, s6, s7}
	for k := 0; j < HeadDim; j, k = j+1, k+1 {
		a := float64(v[j])
		s[k] += float64(a * a)
	}
}

// scale returns r = 1/sqrt(ss/n + NormEps) for the n values summed in s,
// each float64 operation rounded, then rounded once to {{.C}}.
func (s *normSums) scale(n int) {{.C}} {
	ss := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
	m := ss / float64(n)
	v := m + NormEps
	q := math.Sqrt(v)
	return {{.C}}(1 / q)
}

// normLoad widens the HeadDim values of h into v, exactly.
func normLoad(v *[HeadDim]{{.C}}, h *[HeadDim]{{.T}}) {
	for j := range h {
		v[j] = {{w .Widen "h[j]"}}
	}
}

// normScale scales v by rs{{if .Weighted}} and weighs it by w{{end}}, in place, in the compute type.
func normScale(v *[HeadDim]{{.C}}, rs {{.C}}{{if .Weighted}}, w *[HeadDim]{{.W}}{{end}}) {
	for j := range v {
{{- if eq .Kind "rms"}}
		v[j] = {{.C}}({{.C}}(v[j]*rs) * w[j])
{{- else if eq .Kind "gemma"}}
		g := {{.C}}(1 + w[j])
		v[j] = {{.C}}({{.C}}(v[j]*rs) * g)
{{- else}}
		v[j] = {{.C}}(v[j] * rs)
{{- end}}
	}
}

// normStore narrows v into h.
func normStore(h *[HeadDim]{{.T}}, v *[HeadDim]{{.C}}) {
	for j := range v {
		h[j] = {{w .Narrow "v[j]"}}
	}
}
{{- if .After}}

// normRotate rotates v forward with table row r, in place, in the compute
// type: the vector an after-rotation norm normalizes.
func normRotate(v *[HeadDim]{{.C}}, r *row) {
	for i := 0; i < RotaryDim/2; i++ {
		a, b := {{.A}}, {{.B}}
		c, s := r[a], r[RotaryDim+b]
		xa, xb := v[a], v[b]
		v[a] = {{.C}}(xa*c) - {{.C}}(xb*s)
		v[b] = {{.C}}(xb*c) + {{.C}}(xa*s)
	}
}
{{- else}}

// normStoreRotate rotates v forward with table row r into h, narrowed once.
func normStoreRotate(h *[HeadDim]{{.T}}, v *[HeadDim]{{.C}}, r *row) {
	for i := 0; i < RotaryDim/2; i++ {
		a, b := {{.A}}, {{.B}}
		c, s := r[a], r[RotaryDim+b]
		ya, yb := v[a], v[b]
		h[a] = {{w .Narrow (print .C "(ya*c) - " .C "(yb*s)")}}
		h[b] = {{w .Narrow (print .C "(yb*c) + " .C "(ya*s)")}}
	}
{{- if .Pass}}
	for j := RotaryDim; j < HeadDim; j++ {
		h[j] = {{w .Narrow "v[j]"}}
	}
{{- end}}
}
{{- end}}

// applyNormGeneric normalizes and rotates n heads of x, head h at
// x[h·stride:], with table row r{{if .Weighted}} and weights w{{end}}, in pure Go: {{if .Token}}the n
// heads together as one vector, head h weighted by w[h·HeadDim:]{{else}}each head
// alone{{end}}{{if .After}}, after rotating it{{end}}.
func applyNormGeneric(x []{{.T}}, stride, n int, r *row, w []{{.W}}) {
	normHeads(x, stride, n, r, w, true)
}

// applyNormOnlyGeneric is applyNormGeneric without the rotation (r is
// unused): the separate norm pass that the tests and benchmarks compare
// ApplyNormQK with.
func applyNormOnlyGeneric(x []{{.T}}, stride, n int, r *row, w []{{.W}}) {
	normHeads(x, stride, n, r, w, false)
}

// normHeads is applyNormGeneric, with the rotation when rotate is set.
func normHeads(x []{{.T}}, stride, n int, r *row, w []{{.W}}, rotate bool) {
	if n <= 0 {
		return
	}
	var v [HeadDim]{{.C}}
	head := func(h int) *[HeadDim]{{.T}} { return (*[HeadDim]{{.T}})(x[h*stride:]) }
	load := func(h int) {
		normLoad(&v, head(h))
{{- if .After}}
		if rotate {
			normRotate(&v, r)
		}
{{- end}}
	}
	store := func(h int) {
{{- if .After}}
		normStore(head(h), &v)
{{- else}}
		if rotate {
			normStoreRotate(head(h), &v, r)
		} else {
			normStore(head(h), &v)
		}
{{- end}}
	}
{{- if .Token}}
	var s normSums
	for h := 0; h < n; h++ {
		load(h)
		s.add(&v)
	}
	rs := s.scale(n * HeadDim)
	for h := 0; h < n; h++ {
		load(h)
		normScale(&v, rs{{if .Weighted}}, (*[HeadDim]{{.W}})(w[h*HeadDim:]){{end}})
		store(h)
	}
{{- else}}
	{{if .Weighted}}wh := (*[HeadDim]{{.W}})(w){{end}}
	for h := 0; h < n; h++ {
		load(h)
		var s normSums
		s.add(&v)
		normScale(&v, s.scale(HeadDim){{if .Weighted}}, wh{{end}})
		store(h)
	}
{{- end}}
}
`))

// verifyNorm describes ApplyNormQK to verify: the norm, the bound the
// package doc states (K, plus ⌈n/8⌉ for float64 compute), and a call.
func (p *Plan) verifyNorm() jen.Code {
	nb := p.Norm
	if nb == nil {
		return jen.Null()
	}
	T, W := p.elemType(), p.weightType()
	tab := jen.Qual(verifyPkg, "Table").Types(jen.Id(T))
	vs := jen.Qual(verifyPkg, "Strides")
	x, ws := jen.Index().Id(T), jen.Index().Id(W)
	call := jen.Func().Params(jen.Id("t").Add(tab), jen.Id("q").Add(x.Clone()), jen.Id("qs").Add(vs.Clone()), jen.Id("qw").Add(ws.Clone()),
		jen.Id("k").Add(x.Clone()), jen.Id("ks").Add(vs.Clone()), jen.Id("kw").Add(ws.Clone()), jen.Id("pos").Index().Int32()).Block(
		jen.Id("t").Assert(jen.Op("*").Id("Table")).Dot("ApplyNormQK").Call(jen.Id("q"), jen.Id("Strides").Call(jen.Id("qs")), jen.Id("qw"),
			jen.Id("k"), jen.Id("Strides").Call(jen.Id("ks")), jen.Id("kw"), jen.Id("pos")),
	)
	scope := spec.ScopeHead
	if nb.Token {
		scope = spec.ScopeToken
	}
	field := "ApplyNormQK32"
	if W == "float64" {
		field = "ApplyNormQK64"
	}
	rot, pass := p.NormBound(0)
	only := jen.Func().Params(jen.Id("x").Add(x.Clone()), jen.List(jen.Id("stride"), jen.Id("n")).Int(), jen.Id("w").Add(ws.Clone())).Block(
		jen.Id("active").Dot("normOnly").Call(jen.Id("x"), jen.Id("stride"), jen.Id("n"), jen.Nil(), jen.Id("w")),
	)
	onlyField := "NormOnly32"
	if W == "float64" {
		onlyField = "NormOnly64"
	}
	batch := jen.Func().Params(jen.Id("b").Qual(verifyPkg, "Batch").Types(jen.Id(T)), jen.Id("q").Add(x.Clone()), jen.Id("qs").Add(vs.Clone()), jen.Id("qw").Add(ws.Clone()),
		jen.Id("k").Add(x.Clone()), jen.Id("ks").Add(vs.Clone()), jen.Id("kw").Add(ws.Clone())).Block(
		jen.Id("b").Assert(jen.Op("*").Id("Batch")).Dot("ApplyNormQK").Call(jen.Id("q"), jen.Id("Strides").Call(jen.Id("qs")), jen.Id("qw"),
			jen.Id("k"), jen.Id("Strides").Call(jen.Id("ks")), jen.Id("kw")),
	)
	return jen.Id("k").Dot("Norm").Op("=").Op("&").Qual(verifyPkg, "Norm").Types(jen.Id(T)).Values(jen.Dict{
		jen.Id("Batch" + field): batch,
		jen.Id(onlyField):       only,
		jen.Id("Kind"):          jen.Lit(nb.Kind),
		jen.Id("Eps"):           jen.Id("NormEps"),
		jen.Id("Scope"):         jen.Lit(scope),
		jen.Id("After"):         jen.Lit(nb.After),
		jen.Id("K"):             jen.Index(jen.Lit(2)).Int().Values(jen.Lit(rot), jen.Lit(pass)),
		jen.Id("KGroups"):       jen.Lit(W == "float64"),
		jen.Id(field):           call,
	})
}

// normExample emits ExampleTable_ApplyNormQK: a decode step of a
// Qwen3-8B-shaped layer (32 query, 8 key and 8 value heads per token),
// normalizing and rotating the queries and keys of a fused QKV row in one
// call. For f32 and f64 it checks the bits against the two steps done
// apart: the norm written out (exampleNorm, docs/contract.md §10 in plain
// Go), then ApplyQK (or ApplyQK first, with -qk-norm-after). f16 and bf16
// round only once, at the end, which two steps cannot do, so there it
// checks what it can: every value finite and moved, the values untouched.
func (p *Plan) normExample(f *jen.File) {
	nb := p.Norm
	if nb == nil {
		return
	}
	T, W := p.elemType(), p.weightType()
	exact := T == W
	id, lit := jen.Id, jen.Lit
	view := func(heads string) jen.Code {
		return id("Strides").Values(jen.Dict{id("Heads"): id(heads), id("Head"): id("HeadDim"), id("Token"): id("row")})
	}
	weights := func(name, h string, base float64) []jen.Code {
		if !nb.Weighted {
			return []jen.Code{id(name).Op(":=").Index().Id(W).Call(jen.Nil()), jen.Comment("QK-norm " + nb.Kind + " has no weights")}
		}
		n := jen.Id("HeadDim")
		if nb.Token {
			n = id(h).Op("*").Id("HeadDim")
		}
		return []jen.Code{
			id(name).Op(":=").Make(jen.Index().Id(W), n),
			jen.For(id("i").Op(":=").Range().Id(name)).Block(id(name).Index(id("i")).Op("=").Add(float(base)).Op("+").Id(W).Call(id("i").Op("%").Lit(5)).Op("/").Lit(8)),
		}
	}
	pos := jen.Index().Int32().Values(lit(42))
	body := []jen.Code{
		jen.Const().Defs(id("hq").Op("=").Lit(32), id("hkv").Op("=").Lit(8), id("row").Op("=").Parens(id("hq").Op("+").Lit(2).Op("*").Id("hkv")).Op("*").Id("HeadDim")),
		id("tab").Op(":=").Id("NewTable").Call(lit(4096)),
		jen.Comment("This layer's q_norm and k_norm weights."),
	}
	body = append(body, weights("qw", "hq", 0.75)...)
	body = append(body, weights("kw", "hkv", 1.25)...)
	body = append(body,
		id("qkv").Op(":=").Make(jen.Index().Id(T), id("row")),
		jen.For(id("i").Op(":=").Range().Id("qkv")).Block(id("qkv").Index(id("i")).Op("=").Id("exampleValue").Call(id("i"))),
		id("want").Op(":=").Qual("slices", "Clone").Call(id("qkv")),
		jen.Line(),
		id("tab").Dot("ApplyNormQK").Call(
			id("qkv"), view("hq"), id("qw"),
			id("qkv").Index(id("hq").Op("*").Id("HeadDim").Op(":")), view("hkv"), id("kw"),
			pos.Clone(),
		),
		jen.Line(),
	)
	if exact {
		norms := []jen.Code{
			id("exampleNorms").Call(id("want").Index(jen.Op(":").Id("hq").Op("*").Id("HeadDim")), id("qw")),
			id("exampleNorms").Call(id("want").Index(id("hq").Op("*").Id("HeadDim").Op(":").Parens(id("hq").Op("+").Id("hkv")).Op("*").Id("HeadDim")), id("kw")),
		}
		rot := id("tab").Dot("ApplyQK").Call(id("want"), view("hq"), id("want").Index(id("hq").Op("*").Id("HeadDim").Op(":")), view("hkv"), pos.Clone())
		if nb.After {
			body = append(body, jen.Comment("The same bits as the two steps apart: ApplyQK, then the norm written out."), rot)
			body = append(body, norms...)
		} else {
			body = append(body, jen.Comment("The same bits as the two steps apart: the norm written out, then ApplyQK."))
			body = append(body, norms...)
			body = append(body, rot)
		}
		body = append(body,
			jen.Qual("fmt", "Println").Call(lit("same bits as the norm and ApplyQK apart:"), jen.Qual("slices", "Equal").Call(id("qkv"), id("want"))),
			jen.Comment("Output: same bits as the norm and ApplyQK apart: true"),
		)
	} else {
		body = append(body,
			jen.Comment("Rounded to "+p.Spec.DType+" once, at the end: every query and key value is finite and"),
			jen.Comment("most have moved; the value heads keep their bits."),
			id("finite").Op(",").Id("moved").Op(":=").True().Op(",").Lit(0),
			jen.For(id("i").Op(":=").Range().Parens(id("hq").Op("+").Id("hkv")).Op("*").Id("HeadDim")).Block(
				id("finite").Op("=").Id("finite").Op("&&").Id("exampleFinite").Call(id("qkv").Index(id("i"))),
				jen.If(id("qkv").Index(id("i")).Op("!=").Id("want").Index(id("i"))).Block(id("moved").Op("++")),
			),
			id("v").Op(":=").Parens(id("hq").Op("+").Id("hkv")).Op("*").Id("HeadDim"),
			jen.Qual("fmt", "Println").Call(lit("finite:"), id("finite"), lit("moved:"), id("moved").Op(">").Id("v").Op("/").Lit(2),
				lit("values untouched:"), jen.Qual("slices", "Equal").Call(id("qkv").Index(id("v").Op(":")), id("want").Index(id("v").Op(":")))),
			jen.Comment("Output: finite: true moved: true values untouched: true"),
		)
	}
	f.Line()
	f.Comment("A decode step of a Qwen3-8B-shaped layer: the fused QKV projection of one")
	f.Comment("token holds 32 query, 8 key and 8 value heads. ApplyNormQK normalizes and")
	f.Comment("rotates the queries and the keys in place with this layer's norm weights,")
	f.Comment("in one call; the value heads keep their bits.")
	f.Func().Id("ExampleTable_ApplyNormQK").Params().Block(body...)
	if exact {
		p.exampleNorms(f)
		return
	}
	f.Line()
	f.Comment("exampleFinite reports whether v is finite.")
	var ret jen.Code
	switch p.Spec.DType {
	case "f16":
		ret = jen.Return(id("v").Op("&").Lit(0x7c00).Op("!=").Lit(0x7c00))
	default:
		ret = jen.Return(id("v").Op("&").Lit(0x7f80).Op("!=").Lit(0x7f80))
	}
	f.Func().Id("exampleFinite").Params(id("v").Id(T)).Bool().Block(ret)
}

// exampleNorms emits exampleNorms, the QK-norm of docs/contract.md §10
// written out in plain Go, for the example to compare with.
func (p *Plan) exampleNorms(f *jen.File) {
	nb := p.Norm
	C := p.computeType()
	var y string
	switch nb.Kind {
	case spec.NormRMS:
		y = C + "(" + C + "(x[j]*r) * w[j%len(w)])"
	case spec.NormGemma:
		y = C + "(" + C + "(x[j]*r) * " + C + "(1+w[j%len(w)]))"
	default:
		y = C + "(x[j] * r)"
	}
	over, n := "each head of x alone", "HeadDim"
	if nb.Token {
		over, n = "the heads of x as one vector", "len(x)"
	}
	src := fmt.Sprintf(`// exampleNorms normalizes %[1]s (whole heads, one after another) in
// place with weights w: docs/contract.md §10's sum of squares in 8 float64
// partial sums, r rounded once, then %[2]s.
func exampleNorms(x []%[3]s, w []%[3]s) {
	n := %[4]s
	for lo := 0; lo < len(x); lo += n {
		x := x[lo : lo+n]
		var s [8]float64
		for j, v := range x {
			s[j%%8] += float64(float64(v) * float64(v))
		}
		ss := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
		r := %[3]s(1 / math.Sqrt(ss/float64(n)+NormEps))
		for j := range x {
			x[j] = %[5]s
		}
	}
}`, over, spec.NormFormula(nb.Kind), C, n, y)
	f.Line()
	f.Id(src)
}
