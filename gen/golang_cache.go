package gen

import (
	"fmt"
	"go/format"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/amd64"
	"github.com/ropegen/ropegen/spec"
)

// The KV-cache forms (docs/contract.md §11), in rope_cache.go of a package
// with -out-dtype: ApplyStore, Store, Load and Shift, their checks, the
// walk over the slots, the cache kernels' type and the pure Go ones.
//
// Every backend has a cacheKernels value (backend.cache): store (float32
// heads into cache heads), load (back), and for Shift the same over the
// leading shiftValues values. A key is stored by the backend's "to" kernel
// (f16, bf16: rotate and narrow in one pass) or, for e4m3 and q8_0, by
// rotTo into a float32 scratch buffer and store from there. Shift widens
// the heads into the scratch buffer, rotates them with the backend's fwd or
// inv kernel by a table row filled for |delta| with A = 1, and stores them
// back, unless the backend has fused shift kernels (f16 and bf16 on amd64).
// Each step is the same arithmetic on every backend, so every order of
// steps gives the same bits.

// cacheBackendField adds the cache field to the backend struct.
func (p *Plan) cacheBackendField(g *jen.Group) {
	if _, ok := p.cache(); ok {
		g.Id("cache").Op("*").Id("cacheKernels")
	}
}

// cacheBackendValue sets a backend literal's cache field: &cacheGeneric
// for the pure Go backend "generic", else &cache<LEVEL>, defined with the
// level's kernels in rope_cache_<arch>.go.
func (p *Plan) cacheBackendValue(d jen.Dict, name string) {
	if _, ok := p.cache(); ok {
		d[jen.Id("cache")] = jen.Op("&").Id(cacheVar(name))
	}
}

// cacheVar is the name of the cacheKernels value of the backend name.
func cacheVar(name string) string {
	if name == "generic" {
		return "cacheGeneric"
	}
	return "cache" + strings.ToUpper(name)
}

// cacheScale reports whether the forms take a scale (e4m3).
func (p *Plan) cacheScale() bool {
	c, _ := p.cache()
	return c.scale
}

// scaleParam is ", scale float32" for e4m3, else nothing.
func (p *Plan) scaleParam() []jen.Code {
	if p.cacheScale() {
		return []jen.Code{jen.Id("scale").Float32()}
	}
	return nil
}

// scaleArg is the scale argument for e4m3, else nothing.
func (p *Plan) scaleArg() []jen.Code {
	if p.cacheScale() {
		return []jen.Code{jen.Id("scale")}
	}
	return nil
}

// storeKernType is the type of the store kernels: n float32 heads of src,
// srcStride apart, into cache heads of dst, dstStride apart.
func (p *Plan) storeKernType() *jen.Statement {
	c, _ := p.cache()
	return jen.Func().Params(append([]jen.Code{jen.Id("dst").Index().Id(c.goType), jen.Id("dstStride").Int(), jen.Id("src").Index().Float32(), jen.List(jen.Id("srcStride"), jen.Id("n")).Int()}, p.scaleParam()...)...)
}

// loadKernType is the type of the load kernels: n cache heads of src into
// float32 heads of dst.
func (p *Plan) loadKernType() *jen.Statement {
	c, _ := p.cache()
	return jen.Func().Params(append([]jen.Code{jen.Id("dst").Index().Float32(), jen.Id("dstStride").Int(), jen.Id("src").Index().Id(c.goType), jen.List(jen.Id("srcStride"), jen.Id("n")).Int()}, p.scaleParam()...)...)
}

// rotToKernType is the type of rotTo: n heads of src rotated forward into
// float32 heads of dst.
func rotToKernType() *jen.Statement { return jen.Func().Params(rotToParams()...) }

// rotToParams are rotTo's parameters.
func rotToParams() []jen.Code {
	return []jen.Code{jen.Id("dst").Index().Float32(), jen.Id("dstStride").Int(), jen.Id("src").Index().Float32(), jen.List(jen.Id("srcStride"), jen.Id("n")).Int(), jen.Id("r").Op("*").Id("row")}
}

// shiftKernType is the type of the fused shift kernels (f16, bf16): n cache
// heads of x rotated in place.
func (p *Plan) shiftKernType() *jen.Statement {
	c, _ := p.cache()
	return jen.Func().Params(jen.Id("x").Index().Id(c.goType), jen.List(jen.Id("stride"), jen.Id("n")).Int(), jen.Id("r").Op("*").Id("row"))
}

// scratchHeads is how many heads the scratch buffer holds: 16 KiB of
// float32, at least one head.
func (p *Plan) scratchHeads() int { return max(1, 4096/p.HeadDim) }

// cacheFile is rope_cache.go: the cache forms, their checks, the walk, the
// pure Go cache kernels and conversions. It is nil without -out-dtype.
func (p *Plan) cacheFile(header string) ([]byte, error) {
	c, ok := p.cache()
	if !ok {
		return nil, nil
	}
	f := jen.NewFile(p.Spec.Package)
	id := jen.Id
	scale := p.cacheScale()

	if c.blocks {
		f.Comment(fmt.Sprintf("CacheHead is the bytes one head takes in a q8_0 cache: HeadDim/%d blocks of", 32))
		f.Comment("34 bytes, each an f16 scale d (little endian) and 32 int8 (ggml's")
		f.Comment("block_q8_0). Strides of a q8_0 cache count bytes: a token-major cache of")
		f.Comment("h heads is Strides{Heads: h, Head: CacheHead, Token: h·CacheHead}.")
	} else {
		f.Comment("CacheHead is the elements one head takes in the cache: HeadDim " + c.about + " values.")
	}
	f.Const().Id("CacheHead").Op("=").Lit(p.cacheHead())
	f.Line()
	f.Comment("shiftValues is how many leading values of a cached head Shift reads and")
	if c.blocks {
		f.Comment("writes: the blocks that hold a rotary value.")
	} else {
		f.Comment("writes: the rotary ones.")
	}
	f.Const().Id("shiftValues").Op("=").Lit(p.shiftValues())
	f.Line()
	f.Comment("scratchHeads is how many float32 heads the scratch buffer holds (16 KiB).")
	f.Const().Id("scratchHeads").Op("=").Lit(p.scratchHeads())
	f.Line()
	f.Comment("scratchPool holds the buffers keys and shifted heads pass through in float32.")
	f.Var().Id("scratchPool").Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index(id("scratchHeads").Op("*").Id("HeadDim")).Float32()))),
	})

	// The kernels' type and the pure Go ones.
	f.Line()
	f.Comment("cacheKernels are one backend's cache kernels (a backend's cache field).")
	f.Comment("store narrows or quantizes n float32 heads of src, srcStride values apart,")
	f.Comment("into the cache heads of dst, dstStride elements apart; load widens or")
	f.Comment("dequantizes them back. storeShift and loadShift do the same for the first")
	f.Comment("shiftValues values of each head only. Callers guarantee that the heads lie")
	f.Comment("inside the slices and, for n > 1, that the strides keep them apart.")
	if c.blocks || scale {
		f.Comment("rotTo rotates n heads of src forward with table row r into float32 heads")
		f.Comment("of dst, values past RotaryDim copied: a key on its way to the cache.")
	} else {
		f.Comment("shift and shiftInverse, when set, rotate n cache heads in place with table")
		f.Comment("row r (widen, rotate, narrow in one pass); else Shift goes through store")
		f.Comment("and load.")
	}
	f.Type().Id("cacheKernels").StructFunc(func(g *jen.Group) {
		g.List(id("store"), id("storeShift")).Add(p.storeKernType())
		g.List(id("load"), id("loadShift")).Add(p.loadKernType())
		if c.blocks || scale {
			g.Id("rotTo").Add(rotToKernType())
		} else {
			g.List(id("shift"), id("shiftInverse")).Add(p.shiftKernType())
		}
	})
	f.Line()
	f.Comment("cacheGeneric are the pure Go cache kernels.")
	gen := jen.Dict{
		id("store"): id("cacheStoreGeneric"), id("storeShift"): id("cacheStoreShiftGeneric"),
		id("load"): id("cacheLoadGeneric"), id("loadShift"): id("cacheLoadShiftGeneric"),
	}
	if c.blocks || scale {
		gen[id("rotTo")] = id("rotToGeneric")
	}
	f.Var().Id("cacheGeneric").Op("=").Id("cacheKernels").Values(gen)
	p.genericCacheKernels(f, c)

	p.cacheAPI(f, c)

	f.Line()
	f.Id(cacheWalkSource())
	names := map[string]bool{}
	switch c.name {
	case "f16":
		names["f16to32"] = true
	case "bf16":
		names["bf16to32"] = true
	case "e4m3":
		names["f32toe4m3"], names["e4m3to32"] = true, true
	case "q8_0":
		names["f16to32"], names["f32to16"], names["q8Block"], names["q8Unblock"] = true, true, true, true
	}
	conversions(f, names)
	return goFile(f, header, "")
}

// genericCacheKernels emits the pure Go store and load kernels, each a call
// of a loop over n heads of m values (cacheStoreN, cacheLoadN), and, for
// e4m3 and q8_0, rotToGeneric.
func (p *Plan) genericCacheKernels(f *jen.File, c cacheType) {
	id := jen.Id
	scale := c.scale
	sp, sa := p.scaleParam(), p.scaleArg()
	for _, k := range []struct{ name, n, what string }{
		{"cacheStoreGeneric", "HeadDim", "every value"},
		{"cacheStoreShiftGeneric", "shiftValues", "the first shiftValues values"},
	} {
		f.Line()
		f.Comment(k.name + " stores " + k.what + " of n heads, in pure Go.")
		f.Func().Id(k.name).Params(append([]jen.Code{id("dst").Index().Id(c.goType), id("dstStride").Int(), id("src").Index().Float32(), jen.List(id("srcStride"), id("n")).Int()}, sp...)...).Block(
			id("cacheStoreN").Call(append([]jen.Code{id("dst"), id("dstStride"), id("src"), id("srcStride"), id("n"), id(k.n)}, sa...)...),
		)
	}
	for _, k := range []struct{ name, n, what string }{
		{"cacheLoadGeneric", "HeadDim", "every value"},
		{"cacheLoadShiftGeneric", "shiftValues", "the first shiftValues values"},
	} {
		f.Line()
		f.Comment(k.name + " loads " + k.what + " of n heads, in pure Go.")
		f.Func().Id(k.name).Params(append([]jen.Code{id("dst").Index().Float32(), id("dstStride").Int(), id("src").Index().Id(c.goType), jen.List(id("srcStride"), id("n")).Int()}, sp...)...).Block(
			id("cacheLoadN").Call(append([]jen.Code{id("dst"), id("dstStride"), id("src"), id("srcStride"), id("n"), id(k.n)}, sa...)...),
		)
	}
	// The loops: one head (m values) per iteration.
	advance := func(d, s string) jen.Code {
		return jen.If(id("n").Op("==").Lit(1)).Block(jen.Break()).Line().List(id("dst"), id("src")).Op("=").List(id("dst").Index(id(d).Op(":")), id("src").Index(id(s).Op(":")))
	}
	var storeBody, loadBody []jen.Code
	if c.blocks {
		storeBody = []jen.Code{
			jen.For(id("b").Op(":=").Lit(0), id("b").Op("<").Id("m").Op("/").Lit(32), id("b").Op("++")).Block(
				id("q8Block").Call(jen.Parens(jen.Op("*").Index(jen.Lit(34)).Byte()).Call(id("dst").Index(jen.Lit(34).Op("*").Id("b").Op(":"))), jen.Parens(jen.Op("*").Index(jen.Lit(32)).Float32()).Call(id("src").Index(jen.Lit(32).Op("*").Id("b").Op(":")))),
			),
		}
		loadBody = []jen.Code{
			jen.For(id("b").Op(":=").Lit(0), id("b").Op("<").Id("m").Op("/").Lit(32), id("b").Op("++")).Block(
				id("q8Unblock").Call(jen.Parens(jen.Op("*").Index(jen.Lit(32)).Float32()).Call(id("dst").Index(jen.Lit(32).Op("*").Id("b").Op(":"))), jen.Parens(jen.Op("*").Index(jen.Lit(34)).Byte()).Call(id("src").Index(jen.Lit(34).Op("*").Id("b").Op(":")))),
			),
		}
	} else {
		in := jen.Id("v")
		if scale {
			in = jen.Id("v").Op("/").Id("scale")
		}
		out := jen.Id(c.widen).Call(id("s").Index(id("i")))
		if scale {
			out = out.Op("*").Id("scale")
		}
		storeBody = []jen.Code{
			jen.List(id("d"), id("s")).Op(":=").List(id("dst").Index(jen.Op(":").Id("m")), id("src").Index(jen.Op(":").Id("m"))),
			jen.For(jen.List(id("i"), id("v")).Op(":=").Range().Id("s")).Block(id("d").Index(id("i")).Op("=").Id(c.narrow).Call(in)),
		}
		loadBody = []jen.Code{
			jen.List(id("d"), id("s")).Op(":=").List(id("dst").Index(jen.Op(":").Id("m")), id("src").Index(jen.Op(":").Id("m"))),
			jen.For(id("i").Op(":=").Range().Id("d")).Block(id("d").Index(id("i")).Op("=").Add(out)),
		}
	}
	f.Line()
	f.Comment("cacheStoreN stores the first m values of n heads, head i of src at")
	f.Comment("src[i·srcStride:], of dst at dst[i·dstStride:].")
	f.Func().Id("cacheStoreN").Params(append([]jen.Code{id("dst").Index().Id(c.goType), id("dstStride").Int(), id("src").Index().Float32(), jen.List(id("srcStride"), id("n"), id("m")).Int()}, sp...)...).Block(
		jen.For(jen.Op(";").Id("n").Op(">").Lit(0).Op(";").Id("n").Op("--")).Block(append(storeBody, advance("dstStride", "srcStride"))...),
	)
	f.Line()
	f.Comment("cacheLoadN loads the first m values of n heads, head i of src at")
	f.Comment("src[i·srcStride:], of dst at dst[i·dstStride:].")
	f.Func().Id("cacheLoadN").Params(append([]jen.Code{id("dst").Index().Float32(), id("dstStride").Int(), id("src").Index().Id(c.goType), jen.List(id("srcStride"), id("n"), id("m")).Int()}, sp...)...).Block(
		jen.For(jen.Op(";").Id("n").Op(">").Lit(0).Op(";").Id("n").Op("--")).Block(append(loadBody, advance("dstStride", "srcStride"))...),
	)
	if c.blocks || scale {
		f.Line()
		f.Comment("rotToGeneric is rotTo in pure Go: the heads copied, then rotated in place.")
		f.Func().Id("rotToGeneric").Params(rotToParams()...).Block(
			id("rotCopy").Call(id("applyGeneric"), id("dst"), id("dstStride"), id("src"), id("srcStride"), id("n"), id("r")),
		)
		f.Line()
		f.Comment("rotCopy is rotTo from a backend's in-place forward kernel fwd: it copies")
		f.Comment("each of the n heads of src into dst, then rotates them there.")
		f.Func().Id("rotCopy").Params(id("fwd").Add(p.kernType()), id("dst").Index().Float32(), id("dstStride").Int(), id("src").Index().Float32(), jen.List(id("srcStride"), id("n")).Int(), id("r").Op("*").Id("row")).Block(
			jen.For(id("i").Op(":=").Range().Id("n")).Block(
				jen.Copy(id("dst").Index(id("i").Op("*").Id("dstStride").Op(":")).Index(jen.Op(":").Id("HeadDim")), id("src").Index(id("i").Op("*").Id("srcStride").Op(":")).Index(jen.Op(":").Id("HeadDim"))),
			),
			id("fwd").Call(id("dst"), id("dstStride"), id("n"), id("r")),
		)
	}
}

// cacheAPI emits ApplyStore, Store, Load and Shift, and their helpers.
func (p *Plan) cacheAPI(f *jen.File, c cacheType) {
	id, lit := jen.Id, jen.Lit
	pkg := p.Spec.Package
	C := c.goType
	scale := c.scale
	sa := p.scaleArg()
	sp := p.scaleParam()
	quant := c.blocks || scale
	with := func(first []jen.Code, rest ...jen.Code) []jen.Code {
		return append(append(append([]jen.Code{}, first...), sp...), rest...)
	}
	withArg := func(first []jen.Code, rest ...jen.Code) []jen.Code {
		return append(append(append([]jen.Code{}, first...), sa...), rest...)
	}
	slots := id("slots").Index().Int64()
	view := func(name string) jen.Code { return id(name).Id("Strides") }
	// checkTokens checks a float32 token view over len(slots) tokens.
	checkTokens := func(fn, what, x string) jen.Code {
		return jen.If(jen.Op("!").Id("smallView").Call(id(what), jen.Len(id(x)), jen.Len(id("slots")), id("HeadDim"))).Block(
			id("checkView").Call(id(fn), lit(what), id(what), jen.Len(id(x)), jen.Len(id("slots")), id("HeadDim")),
		)
	}
	heads := func(fn, a, b string) jen.Code {
		return jen.If(id(a).Dot("Heads").Op("!=").Id(b).Dot("Heads")).Block(
			id("panicf").Call(lit("%s: "+a+".Heads = %d: want "+b+".Heads (%d)"), id(fn), id(a).Dot("Heads"), id(b).Dot("Heads")),
		)
	}
	lengths := func(fn, a string) jen.Code {
		return jen.If(jen.Len(id(a)).Op("!=").Len(id("slots"))).Block(
			id("panicf").Call(lit("%s: len("+a+") = %d: want len(slots) = %d"), id(fn), jen.Len(id(a)), jen.Len(id("slots"))),
		)
	}
	cacheChecks := func(fn, cache, v string) []jen.Code {
		return []jen.Code{
			id("checkSlots").Call(id(fn), lit(cache), lit(v), id("slots"), id("rows"), jen.Len(id(cache))),
			id("checkCacheView").Call(id(fn), lit(v), id(v), id("rows"), id("CacheHead"), id("slots")),
		}
	}
	checkScale := func(fn string) jen.Code {
		if !scale {
			return jen.Null()
		}
		return id("checkScale").Call(id(fn), id("scale"))
	}
	fnDecl := func(name string) jen.Code { return id("fn").Op(":=").Lit(pkg + "." + name) }
	// The scratch buffer a quantized key or a shifted head passes through,
	// taken once per call of ApplyStore or Shift.
	scratch := func() *jen.Statement { return jen.Op("*").Index(id("scratchHeads").Op("*").Id("HeadDim")).Float32() }
	getScratch := func() *jen.Statement { return id("scratchPool").Dot("Get").Call().Assert(scratch()) }
	cacheDoc := func(v string) {
		if c.blocks {
			f.Comment("Cache strides (" + v + ") count bytes and a head is CacheHead bytes: HeadDim/32")
			f.Comment("q8_0 blocks, quantized as ggml's quantize_row_q8_0_ref does.")
		}
	}

	// ApplyStore.
	f.Line()
	f.Comment("ApplyStore rotates the keys of a step into a KV cache by slot: for every")
	f.Comment("token j with slots[j] ≠ −1 and every h < ss.Heads it rotates the head")
	f.Comment("src[j·ss.Token + h·ss.Head :][:HeadDim] by position pos[j], as Apply does")
	f.Comment("(the attention factor A applied once, here), and stores it as " + c.about)
	f.Comment("in cache row slots[j]: at dst[slots[j]·ds.Token + h·ds.Head :]. A slot of")
	f.Comment("−1 skips its token (padding); a paged cache resolves its block table to")
	f.Comment("slots. Nothing else of dst is written, and src is not modified.")
	switch {
	case c.blocks:
		f.Comment("Each head is rotated in float32, then quantized block by block.")
	case scale:
		f.Comment("Each value y is stored as e4m3(y/scale), rounded to nearest even,")
		f.Comment("saturating at ±448; a NaN stays a NaN.")
	default:
		f.Comment("Values are narrowed with round-to-nearest-even, those past RotaryDim unrotated.")
	}
	cacheDoc("ds")
	f.Comment("A view field that is not positive, a slot outside the rows ds gives dst, a")
	f.Comment("slot listed twice, heads of different counts, len(pos) ≠ len(slots), a")
	f.Comment("position outside the table" + map[bool]string{true: " or a scale that is not finite and positive", false: ""}[scale] + " panic")
	f.Comment("before anything is written.")
	f.Func().Params(id("t").Op("*").Id("Table")).Id("ApplyStore").Params(with([]jen.Code{id("dst").Index().Id(C)}, view("ds"), slots, id("src").Index().Float32(), view("ss"), id("pos").Index().Int32())...).Block(
		fnDecl("Table.ApplyStore"),
		id("rows").Op(":=").Id("cacheRows").Call(id("fn"), lit("ds"), id("ds"), jen.Len(id("dst")), id("CacheHead")),
		checkTokens("fn", "ss", "src"),
		heads("fn", "ds", "ss"),
		lengths("fn", "pos"),
		jen.Add(cacheChecks("fn", "dst", "ds")[0]),
		jen.Add(cacheChecks("fn", "dst", "ds")[1]),
		id("t").Dot("checkSeq").Call(lit("Table.ApplyStore"), id("pos")),
		checkScale("fn"),
		jen.Do(func(s *jen.Statement) {
			if quant {
				s.Id("sp").Op(":=").Add(getScratch())
			}
		}),
		jen.For(jen.List(id("j"), id("s")).Op(":=").Range().Id("slots")).Block(
			jen.If(id("s").Op("<").Lit(0)).Block(jen.Continue()),
			id("r").Op(":=").Id("t").Dot("row").Call(jen.Int().Call(id("pos").Index(id("j")))),
			jen.List(id("d"), id("x")).Op(":=").List(id("dst").Index(jen.Int().Call(id("s")).Op("*").Id("ds").Dot("Token").Op(":")), id("src").Index(id("j").Op("*").Id("ss").Dot("Token").Op(":"))),
			jen.Do(func(s *jen.Statement) {
				if quant {
					s.Id("storeRotated").Call(withArg([]jen.Code{id("d")}, id("ds").Dot("Head"), id("x"), id("ss").Dot("Head"), id("ss").Dot("Heads"), id("r"), id("sp"))...)
				} else {
					s.Id("active").Dot("to").Call(id("d"), id("ds").Dot("Head"), id("x"), id("ss").Dot("Head"), id("ss").Dot("Heads"), id("r"))
				}
			}),
		),
		jen.Do(func(s *jen.Statement) {
			if quant {
				s.Id("scratchPool").Dot("Put").Call(id("sp"))
			}
		}),
	)

	// Batch.ApplyStore: a decode step's keys into their slots, each token at
	// the position the Batch's Set gave it.
	f.Line()
	f.Comment("ApplyStore rotates the keys of token j by the position of token j and stores")
	f.Comment("them in cache row slots[j], as Table.ApplyStore does: a decode step's keys")
	f.Comment("written straight into the cache, whatever each sequence's position.")
	f.Func().Params(id("b").Op("*").Id("Batch")).Id("ApplyStore").Params(with([]jen.Code{id("dst").Index().Id(C)}, view("ds"), slots, id("src").Index().Float32(), view("ss"))...).Block(
		id("b").Dot("t").Dot("ApplyStore").Call(withArg([]jen.Code{id("dst")}, id("ds"), id("slots"), id("src"), id("ss"), id("b").Dot("tokens").Call())...),
	)

	// Store.
	f.Line()
	f.Comment("Store writes the values of a step into a KV cache by slot, as ApplyStore")
	f.Comment("writes keys but without rotating: for every token j with slots[j] ≠ −1 and")
	f.Comment("every h < ss.Heads, src[j·ss.Token + h·ss.Head :][:HeadDim] stored as")
	f.Comment(c.about + " at dst[slots[j]·ds.Token + h·ds.Head :]. The checks")
	f.Comment("and panics are ApplyStore's (without positions).")
	cacheDoc("ds")
	f.Func().Id("Store").Params(with([]jen.Code{id("dst").Index().Id(C)}, view("ds"), slots, id("src").Index().Float32(), view("ss"))...).Block(
		fnDecl("Store"),
		id("rows").Op(":=").Id("cacheRows").Call(id("fn"), lit("ds"), id("ds"), jen.Len(id("dst")), id("CacheHead")),
		checkTokens("fn", "ss", "src"),
		heads("fn", "ds", "ss"),
		jen.Add(cacheChecks("fn", "dst", "ds")[0]),
		jen.Add(cacheChecks("fn", "dst", "ds")[1]),
		checkScale("fn"),
		id("k").Op(":=").Id("active").Dot("cache"),
		id("cacheWalk").Call(id("slots"), jen.Nil(), id("ds"), id("ss"), jen.Func().Params(jen.List(id("_"), id("c"), id("cs"), id("x"), id("xs"), id("n")).Int()).Block(
			id("k").Dot("store").Call(append([]jen.Code{id("dst").Index(id("c").Op(":")), id("cs"), id("src").Index(id("x").Op(":")), id("xs"), id("n")}, sa...)...),
		)),
	)

	// Load.
	f.Line()
	f.Comment("Load reads cache rows back as float32 for attention: for every token j with")
	f.Comment("slots[j] ≠ −1 and every h < ds.Heads, the head at src[slots[j]·ss.Token +")
	f.Comment("h·ss.Head :] is widened")
	switch {
	case c.blocks:
		f.Comment("(dequantized: q·d, as ggml's dequantize_row_q8_0)")
	case scale:
		f.Comment("(e4m3 → float32, exact, then times scale, rounded once)")
	default:
		f.Comment("(exactly)")
	}
	f.Comment("into dst[j·ds.Token + h·ds.Head :][:HeadDim]. The rows of tokens with slot −1")
	f.Comment("and every other element of dst keep their values. A view field that is not")
	f.Comment("positive, a slot outside the rows ss gives src, a slot listed twice or")
	f.Comment("heads of different counts panic before dst is written.")
	cacheDoc("ss")
	f.Func().Id("Load").Params(with([]jen.Code{id("dst").Index().Float32()}, view("ds"), id("src").Index().Id(C), view("ss"), slots)...).Block(
		fnDecl("Load"),
		id("rows").Op(":=").Id("cacheRows").Call(id("fn"), lit("ss"), id("ss"), jen.Len(id("src")), id("CacheHead")),
		checkTokens("fn", "ds", "dst"),
		heads("fn", "ds", "ss"),
		jen.Add(cacheChecks("fn", "src", "ss")[0]),
		jen.Add(cacheChecks("fn", "src", "ss")[1]),
		checkScale("fn"),
		id("k").Op(":=").Id("active").Dot("cache"),
		id("cacheWalk").Call(id("slots"), jen.Nil(), id("ss"), id("ds"), jen.Func().Params(jen.List(id("_"), id("c"), id("cs"), id("x"), id("xs"), id("n")).Int()).Block(
			id("k").Dot("load").Call(append([]jen.Code{id("dst").Index(id("x").Op(":")), id("xs"), id("src").Index(id("c").Op(":")), id("cs"), id("n")}, sa...)...),
		)),
	)

	// Shift.
	f.Line()
	f.Comment("Shift re-rotates keys already in the cache, for a context shift: the heads")
	f.Comment("of every row slots[j] ≠ −1, at c[slots[j]·cs.Token + h·cs.Head :], turn by")
	f.Comment("delta[j] positions (negative: backward), in the cache's type: each head is")
	f.Comment("widened, rotated by R_delta with A = 1 and stored back as Store stores it.")
	f.Comment("The attention factor A was applied once, when ApplyStore wrote the key,")
	f.Comment("and is not applied again. The rotation's cos and sin are computed from the")
	f.Comment("table's own frequencies for |delta| (one row per run of equal deltas), so")
	f.Comment("delta may be any int32 but −2³¹, whatever positions the table covers. A delta of 0")
	if c.blocks {
		f.Comment("leaves its row as it is. Only the blocks holding rotary values are read")
		f.Comment("and requantized; the other blocks keep their bits.")
	} else {
		f.Comment("leaves its row as it is; values past RotaryDim keep their bits.")
	}
	cacheDoc("cs")
	f.Comment("A view field that is not positive, a slot outside the rows cs gives c, a")
	f.Comment("slot listed twice, len(delta) ≠ len(slots), a delta of −2³¹" + map[bool]string{true: " or a bad scale", false: ""}[scale] + " panic before")
	f.Comment("anything is written.")
	f.Func().Params(id("t").Op("*").Id("Table")).Id("Shift").Params(with([]jen.Code{id("c").Index().Id(C)}, view("cs"), slots, id("delta").Index().Int32())...).Block(
		fnDecl("Table.Shift"),
		id("t").Dot("checkNil").Call(lit("Table.Shift")),
		id("rows").Op(":=").Id("cacheRows").Call(id("fn"), lit("cs"), id("cs"), jen.Len(id("c")), id("CacheHead")),
		lengths("fn", "delta"),
		jen.For(jen.List(id("j"), id("d")).Op(":=").Range().Id("delta")).Block(
			jen.If(id("d").Op("==").Qual("math", "MinInt32")).Block(
				id("panicf").Call(lit("%s: delta[%d] = %d: want |delta| < 2³¹"), id("fn"), id("j"), id("d")),
			),
		),
		jen.Add(cacheChecks("fn", "c", "cs")[0]),
		jen.Add(cacheChecks("fn", "c", "cs")[1]),
		checkScale("fn"),
		id("r").Op(":=").Id("rowPool").Dot("Get").Call().Assert(jen.Op("*").Id("row")),
		id("sp").Op(":=").Add(getScratch()),
		id("cur").Op(":=").Int32().Call(lit(0)).Comment("the delta r is filled for; 0: none yet"),
		id("cacheWalk").Call(id("slots"), id("delta"), id("cs"), id("cs"), jen.Func().Params(jen.List(id("j"), id("o"), id("st"), id("_"), id("_"), id("n")).Int()).Block(
			id("d").Op(":=").Id("delta").Index(id("j")),
			jen.If(id("d").Op("==").Lit(0)).Block(jen.Return()),
			jen.If(id("d").Op("!=").Id("cur")).Block(
				id("p").Op(":=").Int64().Call(id("d")),
				jen.If(id("p").Op("<").Lit(0)).Block(id("p").Op("=").Op("-").Id("p")),
				id("fill").Call(id("r"), jen.Int().Call(id("p")), jen.Op("&").Id("t").Dot("p").Dot("Freqs"), lit(1), id("t").Dot("maxFreq")),
				id("cur").Op("=").Id("d"),
			),
			id("shiftHeads").Call(withArg([]jen.Code{id("c").Index(id("o").Op(":"))}, id("st"), id("n"), id("r"), id("d").Op("<").Lit(0), id("sp"))...),
		)),
		id("scratchPool").Dot("Put").Call(id("sp")),
		id("rowPool").Dot("Put").Call(id("r")),
	)

	// shiftHeads.
	f.Line()
	f.Comment("shiftHeads rotates n cache heads in place, head i at c[i·stride:], by the")
	f.Comment("table row r (filled with A = 1), backward when inverse: with the backend's")
	f.Comment("fused shift kernels where it has them, else through the scratch buffer sp,")
	f.Comment("scratchHeads heads at a time: loadShift, the fwd or inv kernel, storeShift.")
	f.Func().Id("shiftHeads").Params(with([]jen.Code{id("c").Index().Id(C)}, jen.List(id("stride"), id("n")).Int(), id("r").Op("*").Id("row"), id("inverse").Bool(), id("sp").Add(scratch()))...).BlockFunc(func(g *jen.Group) {
		g.Id("k").Op(":=").Id("active").Dot("cache")
		if !quant {
			g.If(id("k").Dot("shift").Op("!=").Nil()).Block(
				jen.If(id("inverse")).Block(
					id("k").Dot("shiftInverse").Call(id("c"), id("stride"), id("n"), id("r")),
				).Else().Block(
					id("k").Dot("shift").Call(id("c"), id("stride"), id("n"), id("r")),
				),
				jen.Return(),
			)
		}
		g.Id("kern").Op(":=").Id("active").Dot("fwd")
		g.If(id("inverse")).Block(id("kern").Op("=").Id("active").Dot("inv"))
		g.For(id("h").Op(":=").Lit(0), id("h").Op("<").Id("n"), id("h").Op("+=").Id("scratchHeads")).Block(
			id("m").Op(":=").Min(id("scratchHeads"), id("n").Op("-").Id("h")),
			id("x").Op(":=").Id("c").Index(id("h").Op("*").Id("stride").Op(":")),
			id("k").Dot("loadShift").Call(append([]jen.Code{id("sp").Index(jen.Op(":")), id("HeadDim"), id("x"), id("stride"), id("m")}, sa...)...),
			id("kern").Call(id("sp").Index(jen.Op(":")), id("HeadDim"), id("m"), id("r")),
			id("k").Dot("storeShift").Call(append([]jen.Code{id("x"), id("stride"), id("sp").Index(jen.Op(":")), id("HeadDim"), id("m")}, sa...)...),
		)
	})

	if quant {
		f.Line()
		f.Comment("storeRotated rotates n heads of src, srcStride apart, forward by the table")
		f.Comment("row r and stores them in the cache heads of dst, dstStride apart: rotTo into")
		f.Comment("the scratch buffer sp, then store, scratchHeads heads at a time.")
		f.Func().Id("storeRotated").Params(with([]jen.Code{id("dst").Index().Id(C)}, id("dstStride").Int(), id("src").Index().Float32(), jen.List(id("srcStride"), id("n")).Int(), id("r").Op("*").Id("row"), id("sp").Add(scratch()))...).Block(
			id("k").Op(":=").Id("active").Dot("cache"),
			jen.For(id("h").Op(":=").Lit(0), id("h").Op("<").Id("n"), id("h").Op("+=").Id("scratchHeads")).Block(
				id("m").Op(":=").Min(id("scratchHeads"), id("n").Op("-").Id("h")),
				id("k").Dot("rotTo").Call(id("sp").Index(jen.Op(":")), id("HeadDim"), id("src").Index(id("h").Op("*").Id("srcStride").Op(":")), id("srcStride"), id("m"), id("r")),
				id("k").Dot("store").Call(append([]jen.Code{id("dst").Index(id("h").Op("*").Id("dstStride").Op(":")), id("dstStride"), id("sp").Index(jen.Op(":")), id("HeadDim"), id("m")}, sa...)...),
			),
		)
	}
	if scale {
		f.Line()
		f.Comment("checkScale panics unless scale is finite and positive.")
		f.Func().Id("checkScale").Params(id("fn").String(), id("scale").Float32()).Block(
			jen.If(jen.Op("!").Parens(id("scale").Op(">").Lit(0)).Op("||").Id("scale").Op(">").Qual("math", "MaxFloat32")).Block(
				id("panicf").Call(lit("%s: scale = %v: want a finite scale > 0"), id("fn"), id("scale")),
			),
		)
	}
}

// cacheFeatures adds to the cpu.X86 features of the assembly level named
// level those its cache kernels need: AVX512BW for the masked byte and
// 16-bit loads and stores of every cache type at AVX-512, F16C for q8_0's
// f16 scales at AVX2 (f16 has it already, for the "to" kernels).
func (p *Plan) cacheFeatures(level string, features []string) []string {
	c, ok := p.cache()
	if !ok {
		return features
	}
	add := func(f string) {
		if !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	for _, f := range amd64.CacheFeatures(level, c.name) {
		add(f)
	}
	return features
}

// cacheFiles returns the files of the cache forms: rope_cache.go and the
// assembly cache kernels with their declarations, for amd64 and arm64;
// none without -out-dtype.
func (p *Plan) cacheFiles(header string) ([]File, error) {
	if _, ok := p.cache(); !ok {
		return nil, nil
	}
	var files []File
	src, err := p.cacheFile(header)
	if err != nil {
		return nil, fmt.Errorf("generating rope_cache.go: %w", err)
	}
	files = append(files, File{"rope_cache.go", src})
	amd, err := p.cacheAmd64Files(header)
	if err != nil {
		return nil, err
	}
	arm, err := p.cacheArm64Files(header)
	if err != nil {
		return nil, err
	}
	return append(append(files, amd...), arm...), nil
}

// cacheAmd64Files returns rope_cache_amd64.s, the cache kernels at every
// level (asm/amd64.GenerateCache), and rope_cache_amd64.go, their
// declarations and each level's cacheKernels value.
func (p *Plan) cacheAmd64Files(header string) ([]File, error) {
	c, _ := p.cache()
	k := amd64.CacheKernel{
		Kernel:      amd64.Kernel{HeadDim: p.HeadDim, RotaryDim: p.RotaryDim, NeoX: p.Spec.Layout == spec.NeoX, DType: p.Spec.DType},
		Cache:       c.name,
		ShiftValues: p.shiftValues(),
	}
	out, err := amd64.GenerateCache(k, header, "amd64,!purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_cache_amd64.s: %w", err)
	}
	f := jen.NewFile(p.Spec.Package)
	for _, l := range out.Levels {
		names := map[string]string{}
		for _, fn := range out.Funcs {
			if fn.Level == l.Name {
				names[fn.Kind] = fn.Name
			}
		}
		for _, k := range []string{"store", "load"} {
			if names[k+"Shift"] == "" {
				names[k+"Shift"] = names[k]
			}
		}
		fields := jen.Dict{}
		for k, v := range names {
			fields[jen.Id(k)] = jen.Id(v)
		}
		f.Comment(cacheVar(l.Name) + " are the " + strings.ToUpper(l.Name) + " cache kernels.")
		f.Var().Id(cacheVar(l.Name)).Op("=").Id("cacheKernels").Values(fields)
		f.Line()
	}
	src, err := goFile(f, header, "amd64 && !purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_cache_amd64.go: %w", err)
	}
	var stubs []string
	for _, fn := range out.Funcs {
		stubs = append(stubs, fn.Stub)
	}
	src = append(append(src, '\n'), strings.Join(stubs, "\n")...)
	if src, err = format.Source(src); err != nil {
		return nil, fmt.Errorf("generating rope_cache_amd64.go: %w", err)
	}
	return []File{{"rope_cache_amd64.go", src}, {"rope_cache_amd64.s", out.Asm}}, nil
}

// verifyCache describes the cache forms to verify (Kernel.Cache).
func (p *Plan) verifyCache() jen.Code {
	c, ok := p.cache()
	if !ok {
		return jen.Null()
	}
	id := jen.Id
	C := c.goType
	tab := jen.Qual(verifyPkg, "Table").Types(jen.Float32())
	vs := jen.Qual(verifyPkg, "Strides")
	conv := func(s string) jen.Code { return id("Strides").Call(id(s)) }
	scaleName := "_"
	var scale []jen.Code
	if c.scale {
		scaleName = "scale"
		scale = []jen.Code{id("scale")}
	}
	args := func(first []jen.Code, rest ...jen.Code) []jen.Code {
		return append(append(append([]jen.Code{}, first...), scale...), rest...)
	}
	self := id("t").Assert(jen.Op("*").Id("Table"))
	return id("k").Dot("Cache").Op("=").Op("&").Qual(verifyPkg, "Cache").Types(id(C)).Values(jen.Dict{
		id("DType"):     jen.Lit(c.name),
		id("CacheHead"): id("CacheHead"),
		id("ApplyStore"): jen.Func().Params(id("t").Add(tab.Clone()), id("dst").Index().Id(C), id(scaleName).Float32(), id("ds").Add(vs.Clone()), id("slots").Index().Int64(), id("src").Index().Float32(), id("ss").Add(vs.Clone()), id("pos").Index().Int32()).Block(
			self.Clone().Dot("ApplyStore").Call(args([]jen.Code{id("dst")}, conv("ds"), id("slots"), id("src"), conv("ss"), id("pos"))...),
		),
		id("Store"): jen.Func().Params(id("dst").Index().Id(C), id(scaleName).Float32(), id("ds").Add(vs.Clone()), id("slots").Index().Int64(), id("src").Index().Float32(), id("ss").Add(vs.Clone())).Block(
			id("Store").Call(args([]jen.Code{id("dst")}, conv("ds"), id("slots"), id("src"), conv("ss"))...),
		),
		id("Load"): jen.Func().Params(id("dst").Index().Float32(), id(scaleName).Float32(), id("ds").Add(vs.Clone()), id("src").Index().Id(C), id("ss").Add(vs.Clone()), id("slots").Index().Int64()).Block(
			id("Load").Call(args([]jen.Code{id("dst")}, conv("ds"), id("src"), conv("ss"), id("slots"))...),
		),
		id("Shift"): jen.Func().Params(id("t").Add(tab.Clone()), id("c").Index().Id(C), id(scaleName).Float32(), id("cs").Add(vs.Clone()), id("slots").Index().Int64(), id("delta").Index().Int32()).Block(
			self.Clone().Dot("Shift").Call(args([]jen.Code{id("c")}, conv("cs"), id("slots"), id("delta"))...),
		),
		id("BatchApplyStore"): jen.Func().Params(id("b").Qual(verifyPkg, "Batch").Types(jen.Float32()), id("dst").Index().Id(C), id(scaleName).Float32(), id("ds").Add(vs.Clone()), id("slots").Index().Int64(), id("src").Index().Float32(), id("ss").Add(vs.Clone())).Block(
			id("b").Assert(jen.Op("*").Id("Batch")).Dot("ApplyStore").Call(args([]jen.Code{id("dst")}, conv("ds"), id("slots"), id("src"), conv("ss"))...),
		),
	})
}

// cacheTests emits TestCacheExhaustive for a cache of per-value types (f16,
// bf16, e4m3): every float32 through every backend's Store.
func (p *Plan) cacheTests(f *jen.File) {
	c, ok := p.cache()
	if !ok || c.blocks {
		return
	}
	f.Line()
	f.Comment("TestCacheExhaustive stores float32 values into a " + c.name + " cache with Store")
	f.Comment("(scale 1) on every backend and compares them with package verify's own")
	f.Comment("rounding: every float32 bit pattern with ROPEGEN_EXHAUSTIVE=1, else a")
	f.Comment("sample strided across them.")
	f.Func().Id("TestCacheExhaustive").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Qual(verifyPkg, "CacheExhaustive").Call(jen.Id("t"), jen.Id("kernel").Call()),
	)
}

// cachePackageDoc is the package doc's paragraph on the cache forms ("" without
// -out-dtype): the cache type and what its rounding adds to the bound.
func (p *Plan) cachePackageDoc() string {
	c, ok := p.cache()
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "KV cache type %s (-out-dtype): ApplyStore rotates keys into cache rows by\n", c.name)
	b.WriteString("slot, Store writes values, Load reads them back as float32 and Shift turns\n")
	b.WriteString("stored keys by a position delta with A = 1. A stored value adds the cache\n")
	switch c.name {
	case "f16", "bf16":
		fmt.Fprintf(&b, "type's rounding to the bound: half a %s ulp of it (round to nearest even).\n\n", map[string]string{"f16": "binary16", "bf16": "bfloat16"}[c.name])
	case "e4m3":
		b.WriteString("type's rounding to the bound: e4m3(x/scale)·scale is within half an e4m3\n")
		b.WriteString("unit of x/scale, times scale (x/scale and the product each rounded once\n")
		b.WriteString("more in float32), with magnitudes past 448·scale saturating to 448·scale.\n\n")
	case "q8_0":
		b.WriteString("type's rounding to the bound: a value of a q8_0 block is within about\n")
		b.WriteString("0.563·d of what was stored, d the block's f16 scale (ggml's amax/127).\n\n")
	}
	return b.String()
}
