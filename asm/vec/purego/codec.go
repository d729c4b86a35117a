package purego

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// The codec operations (vec.Codec) in pure Go: each operation assigns its
// lane to a fresh variable (uint32 bits, float32 values, bool masks). The
// minifloat family runs once a package and element, into a helper function
// (narrowF16, widenE5M2, …) that the kernels call value by value.

// op assigns e to a fresh variable.
func (t *Target) op(e jen.Code) vec.V {
	n := t.fresh("u")
	t.emit(jen.Id(n).Op(":=").Add(e))
	return &val{e: jen.Id(n), v: true}
}

func ex(v any) jen.Code { return v.(*val).operand() }

func (t *Target) U32(v uint32) vec.V { return &val{e: jen.Lit(v), v: true, big: v >= 1<<31, k: v} }
func (t *Target) AsU32(a vec.V) vec.V {
	return t.op(jen.Qual("math", "Float32bits").Call(a.(*val).e))
}
func (t *Target) AsF32(a vec.V) vec.V {
	return t.op(jen.Qual("math", "Float32frombits").Call(a.(*val).e))
}
func (t *Target) bin(a vec.V, o string, b vec.V) vec.V { return t.op(jen.Add(ex(a)).Op(o).Add(ex(b))) }
func (t *Target) And(a, b vec.V) vec.V                 { return t.bin(a, "&", b) }
func (t *Target) Or(a, b vec.V) vec.V                  { return t.bin(a, "|", b) }
func (t *Target) Xor(a, b vec.V) vec.V                 { return t.bin(a, "^", b) }
func (t *Target) AndNot(a, b vec.V) vec.V              { return t.bin(a, "&^", b) }
func (t *Target) Add32(a, b vec.V) vec.V               { return t.bin(a, "+", b) }
func (t *Target) Sub32(a, b vec.V) vec.V               { return t.bin(a, "-", b) }
func (t *Target) Shl32(a vec.V, n int) vec.V           { return t.op(jen.Add(ex(a)).Op("<<").Lit(n)) }
func (t *Target) Shr32(a vec.V, n int) vec.V           { return t.op(jen.Add(ex(a)).Op(">>").Lit(n)) }
func (t *Target) Gt32(a, b vec.V) vec.Mask {
	i32 := func(x *val) jen.Code {
		if x.big {
			return jen.Lit(int32(x.k))
		}
		return jen.Int32().Call(x.e)
	}
	return t.op(jen.Add(i32(a.(*val))).Op(">").Add(i32(b.(*val))))
}
func (t *Target) Eq32(a, b vec.V) vec.Mask { return t.bin(a, "==", b) }
func (t *Target) IsNaN(a vec.V) vec.Mask   { return t.bin(a, "!=", a) }

// Select is r := b; if m { r = a }.
func (t *Target) Select(m vec.Mask, a, b vec.V) vec.V {
	r := t.op(b.(*val).e)
	t.emit(jen.If(m.(*val).e).Block(jen.Add(r.(*val).e).Op("=").Add(a.(*val).e)))
	return r
}

func (t *Target) MinF(a, b vec.V) vec.V { return t.op(jen.Min(a.(*val).e, b.(*val).e)) }
func (t *Target) MaxF(a, b vec.V) vec.V { return t.op(jen.Max(a.(*val).e, b.(*val).e)) }
func (t *Target) ToF32(a vec.V) vec.V   { return t.op(jen.Float32().Call(jen.Int32().Call(a.(*val).e))) }
func (t *Target) TruncI32(a vec.V) vec.V {
	return t.op(jen.Uint32().Call(jen.Int32().Call(a.(*val).e)))
}
func (t *Target) codecName(e vec.Elem) string { return strings.ToUpper(e.Name) }

// helper emits, once a target, the function name(x ptype) rtype whose
// body is body's operations and which returns what body returns.
func (t *Target) helper(name, doc, ptype, rtype string, body func(x vec.V) vec.V) {
	if t.helpers == nil {
		t.helpers = map[string]bool{}
	}
	if t.helpers[name] {
		return
	}
	t.helpers[name] = true
	t.open()
	r := body(&val{e: jen.Id("x"), v: true})
	t.emit(jen.Return(r.(*val).e))
	fn := jen.Comment(fmt.Sprintf("%s is %s.", name, doc)).Line().Func().Id(name).Params(jen.Id("x").Id(ptype)).Id(rtype).Block(t.close()...)
	t.funcs = append(t.funcs, fn)
}

// narrowCall is the element e (f16, bf16, e4m3, e5m2) of the float32 y:
// a call of the family's helper.
func (t *Target) narrowCall(e vec.Elem, y jen.Code) jen.Code {
	name := "narrow" + t.codecName(e)
	t.helper(name, "vec.Narrow's bits of "+e.Name+" for x, written once in package vec (the minifloat family)", "float32", "uint32",
		func(x vec.V) vec.V { return vec.Narrow(t, e, x) })
	return jen.Id(e.Go).Call(jen.Id(name).Call(y))
}

// widenCall is the float32 of the element e c.
func (t *Target) widenCall(e vec.Elem, c jen.Code) jen.Code {
	name := "widen" + t.codecName(e)
	t.helper(name, "vec.Widen's float32 of the "+e.Name+" code x, written once in package vec (the minifloat family)", "uint32", "float32",
		func(x vec.V) vec.V { return vec.Widen(t, e, x) })
	return jen.Id(name).Call(jen.Uint32().Call(c))
}

// LoadBits is the block's element of a as uint32.
func (t *Target) LoadBits(b vec.Block, a vec.Arr) vec.V {
	k := b.(*blk)
	return &val{e: jen.Uint32().Call(k.elem(a, k.at[0]))}
}

// StoreBits assigns the low bits of v to the block's element of a.
func (t *Target) StoreBits(b vec.Block, a vec.Arr, v vec.V) {
	k := b.(*blk)
	t.emit(jen.Add(k.elem(a, k.at[0])).Op("=").Id(a.Elem.Go).Call(v.(*val).e))
}

// The q8_0 family's blocks (vec.Quantizer): a block is 32 members of one
// lane each, and the family runs once a package and direction, into a
// helper function (q8Quantize, q8Dequantize) the kernels call block by
// block.

// Blocks32 is for b := range n { helper(dst block b, src block b) }, the
// helper emitted from body the first time.
func (t *Target) Blocks32(h vec.Head, n int, src vec.Arr, ss int, dst vec.Arr, ds int, body func(s, d vec.Arr)) {
	e := src.Elem
	if e == vec.F32 {
		e = dst.Elem
	}
	fam := "q8"
	switch {
	case e == vec.Int8PerTokenHead: // a block is the head: one helper a head size
		fam = fmt.Sprintf("int8Head%d", t.f.Shape.HeadDim)
	case e != vec.Q8:
		fam = strings.ReplaceAll(e.Name, "_", "") // q40, q41, q50, q51
	}
	name := fam + "Dequantize"
	if src.Elem == vec.F32 {
		name = fam + "Quantize"
	}
	if t.helpers == nil {
		t.helpers = map[string]bool{}
	}
	if !t.helpers[name] {
		t.helpers[name] = true
		param := func(n string, a vec.Arr, k int) vec.Arr {
			return vec.Arr{Name: n, Elem: a.Elem, P: &ptr{name: n, n: k, kind: "array", scope: t.fn, view: n}}
		}
		help := t.help
		t.help = t.open()
		body(param("s", src, ss), param("d", dst, ds))
		t.help = help
		what := map[bool]string{true: "quantizes the 32 float32 at s into the " + e.Name + " block at d", false: "dequantizes the " + e.Name + " block at s into the 32 float32 at d"}[src.Elem == vec.F32]
		doc := "package vec's q8_0 family (ggml's quantize_row_q8_0_ref, dequantize_row_q8_0), written once there"
		switch {
		case e == vec.Int8PerTokenHead:
			what = map[bool]string{true: "quantizes the head of " + fmt.Sprint(t.f.Shape.HeadDim) + " float32 at s into its scale and int8 at d", false: "dequantizes the head at s (its scale, then int8) into the float32 at d"}[src.Elem == vec.F32]
			doc = "package vec's int8_per_token_head family (vLLM's int8 KV cache, a float32 scale a head; verify/codec's Int8PerTokenHead), written once there"
		case e == vec.NVFP4GS:
			doc = "package vec's nvfp4_gs family (verify/codec's NVFP4GS), written once there"
		case e != vec.Q8:
			doc = "package vec's qn family (ggml's quantize_row_" + e.Name + "_ref, dequantize_row_" + e.Name + "; verify/codec's transcription), written once there"
		}
		params := []jen.Code{jen.Id("d").Op("*").Index(jen.Lit(ds)).Id(dst.Elem.Go), jen.Id("s").Op("*").Index(jen.Lit(ss)).Id(src.Elem.Go)}
		if e == vec.NVFP4GS { // the body reads the kernel's tensor scale (Broadcast("scale"): the name)
			what += " with the tensor scale"
			params = append(params, jen.Id("scale").Float32())
		}
		fn := jen.Comment(fmt.Sprintf("%s %s: %s.", name, what, doc)).Line().
			Func().Id(name).Params(params...).Block(t.close()...)
		t.funcs = append(t.funcs, fn)
	}
	h.(*head).blocks(name, dst, ds, src, ss, n, e == vec.NVFP4GS)
}

// at is element j of the helper's array a.
func at(a vec.Arr, j int) jen.Code { return jen.Id(a.P.(*ptr).view).Index(jen.Lit(a.Off + j)) }

func (t *Target) LoadF32x32(a vec.Arr) []vec.V {
	xs := make([]vec.V, 32)
	for j := range xs {
		xs[j] = t.op(at(a, j))
	}
	return xs
}

func (t *Target) StoreF32x32(a vec.Arr, xs []vec.V) {
	for j, x := range xs {
		t.emit(jen.Add(at(a, j)).Op("=").Add(x.(*val).e))
	}
}

func (t *Target) LoadI8x32(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32)
	for j := range qs {
		qs[j] = t.op(jen.Uint32().Call(jen.Int32().Call(jen.Int8().Call(at(a, j)))))
	}
	return qs
}

func (t *Target) StoreI8x32(a vec.Arr, qs []vec.V) {
	for j, q := range qs {
		t.emit(jen.Add(at(a, j)).Op("=").Uint8().Call(q.(*val).e))
	}
}

func (t *Target) LoadU16(a vec.Arr) vec.V {
	return t.op(jen.Uint32().Call(at(a, 0)).Op("|").Uint32().Call(at(a, 1)).Op("<<").Lit(8))
}

func (t *Target) StoreU16(a vec.Arr, v vec.V) {
	e := v.(*val).e
	t.emit(jen.List(at(a, 0), at(a, 1)).Op("=").List(jen.Uint8().Call(e), jen.Uint8().Call(jen.Add(e).Op(">>").Lit(8))))
}

// MaxAcross is Go's max of the 32 lanes.
func (t *Target) MaxAcross(xs []vec.V) vec.V {
	var es []jen.Code
	for _, x := range xs {
		es = append(es, x.(*val).e)
	}
	return t.op(jen.Max(es...))
}

// Iota is i+1: member i is value i.
func (t *Target) Iota(i, _ int) vec.V { return t.U32(uint32(i + 1)) }

// If is if m { then } else { els }.
func (t *Target) If(m vec.Mask, then, els func()) {
	t.open()
	then()
	a := t.close()
	t.open()
	els()
	b := t.close()
	t.emit(jen.If(m.(*val).e).Block(a...).Else().Block(b...))
}
