package amd64

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The KV-cache kernels (docs/contract.md §11), a file of their own
// (rope_cache_amd64.s). At each level L, for each shape S and each of its
// cache types C (tag T: F16, BF16, E4M3, Q80):
//
//	func cacheStoreTLS(dst []C, dstStride int, src []float32, srcStride, n int[, scale float32])
//	func cacheLoadTLS(dst []float32, dstStride int, src []C, srcStride, n int[, scale float32])
//
// store the first count values (HeadDim, or for the Shift variants
// cacheStoreShiftL and cacheLoadShiftL, CacheKernel.ShiftValues) of n float32
// heads of src, srcStride values apart, into the cache heads of dst,
// dstStride elements apart (q8_0: bytes), and load them back; the byte
// types (e4m3, q8_0) take the scale, which q8_0 does not read (the
// run-time's ABI has one signature for both). Strides count
// elements of their slice; a head of a q8_0 cache is HeadDim/32 blocks of 34
// bytes. For f16 and bf16 also the in-place kernels of an f16 (bf16)
// package, applied to the cache (widen, rotate, narrow):
//
//	func cacheShiftTLS(x []uint16, stride, n int, r *float32)        // and cacheShiftInverseTLS
//
// and, once per shape (CacheKernel.RotTo), a rotation into float32 heads
// (the keys of f32, e4m3 and q8_0 caches go through it on their way to the
// cache):
//
//	func cacheRotToLS(dst []float32, dstStride int, src []float32, srcStride, n int, r *float32)
//
// The conversions are the generated pure Go ones, lane by lane:
//
//   - f16 and bf16 narrow with round-to-nearest-even (VCVTPS2PH; bf16's
//     integer rounding, NaNs quieted) and widen exactly;
//   - e4m3 stores e4m3(x/scale): VDIVPS, then f32toe4m3 in integer lanes
//     (clamp the magnitude's bits at 448's, round 20 mantissa bits to
//     nearest even, or below 2⁻⁶ add 2¹⁴ as a float to round to a
//     multiple of 2⁻⁹; NaN gives S.1111.111) and loads e4m3to32·scale;
//   - q8_0 quantizes 32 values at a time as q8Block does: amax as a vector
//     maximum when the block holds no NaN, else by ggml's sequence
//     amax = MAX(amax, |x_j|), each MAX a scalar VMAXSS, whose "a > b ? a : b"
//     is C's MAX exactly; d = amax/127 and id = d ≠ 0 ? 1/d : 0 in scalar
//     float32; d stored as f16; q = x·id, NaN lanes zeroed, clamped to
//     ±127, rounded half away from zero (truncate, then add ±1 where the
//     fraction is at least 1/2) and packed to int8.
//
// n = 0 returns at once; nothing outside the heads is read or written
// (AVX-512 tails are masked, AVX2 tails narrower registers and scalar
// moves).

// CacheKernel is the geometry of one shape's kernels of one cache type.
type CacheKernel struct {
	Kernel             // HeadDim, RotaryDim, NeoX, Suffix; DType is "f32"
	Cache       string // "f16", "bf16", "e4m3", "q8_0"
	ShiftValues int    // the leading values of a head Shift reads and writes
	RotTo       bool   // also emit the shape's rotation into float32 heads
}

// cacheTags are the cache types' parts of their kernels' names.
var cacheTags = map[string]string{"f16": "F16", "bf16": "BF16", "e4m3": "E4M3", "q8_0": "Q80"}

// CacheFeatures are the cpu.X86 features the cache kernels of type cache
// need at the level named level, besides the level's own.
func CacheFeatures(level, cache string) []string {
	switch level {
	case "avx512":
		return []string{"HasAVX512F", "HasAVX512BW"}
	case "avx2":
		if cache == "f16" || cache == "q8_0" {
			return []string{"HasAVX2", "HasF16C"}
		}
		return []string{"HasAVX2"}
	}
	return nil
}

// cacheCodec is the element codec of a cache type.
var cacheCodec = map[string]codec{
	"f16":  codecs["f16"],
	"bf16": codecs["bf16"],
	"e4m3": {"e4m3", "uint8", 1},
	"q8_0": {"q8_0", "uint8", 1},
}

// GenerateCache emits the cache kernels of every entry of ks at every
// level, best first, into one file; a level's features are those every
// entry needs.
func GenerateCache(ks []CacheKernel, header, constraint string) (*Output, error) {
	for _, k := range ks {
		if _, ok := cacheCodec[k.Cache]; !ok {
			return nil, fmt.Errorf("amd64: unknown cache type %q", k.Cache)
		}
		if k.RotaryDim <= 0 || k.RotaryDim%2 != 0 || k.RotaryDim > k.HeadDim || k.DType != "f32" ||
			k.ShiftValues < k.RotaryDim || k.ShiftValues > k.HeadDim || k.Cache == "q8_0" && (k.HeadDim%32 != 0 || k.ShiftValues%32 != 0) {
			return nil, fmt.Errorf("amd64: bad cache geometry %+v", k)
		}
	}
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	out := &Output{}
	var funcs []Func
	for _, l := range levels {
		lv := Level{Name: l.name}
		for _, k := range ks {
			lv.Features = union(lv.Features, CacheFeatures(l.name, k.Cache))
			funcs = append(funcs, emitCacheKernels(c, l, k)...)
		}
		out.Levels = append(out.Levels, lv)
	}
	if err := finish(c, out, funcs, "rope", header); err != nil {
		return nil, err
	}
	return out, nil
}

// emitCacheKernels emits the kernels of k at level l.
func emitCacheKernels(c *build.Context, l level, k CacheKernel) []Func {
	cc := cacheCodec[k.Cache]
	scale := ""
	if cc.size == 1 {
		scale = ", scale float32"
	}
	rowSig := "r *float32"
	var funcs []Func
	sfx, tag := l.suffix+k.Suffix, cacheTags[k.Cache]
	add := func(name, kind, sig, doc string, emit func()) {
		c.Function(name)
		c.Attributes(attr.NOSPLIT)
		c.SignatureExpr(sig)
		c.Doc(fmt.Sprintf("%s %s, using %s.", name, doc, strings.ToUpper(l.name)))
		c.Pragma("noescape")
		emit()
		funcs = append(funcs, Func{Name: name, Kind: kind, Level: l.name, Shape: k.Suffix, Variant: k.Cache})
	}
	{
		counts := []struct {
			kind  string
			count int
		}{{"", k.HeadDim}}
		if k.ShiftValues != k.HeadDim {
			counts = append(counts, struct {
				kind  string
				count int
			}{"Shift", k.ShiftValues})
		}
		for _, n := range counts {
			add("cacheStore"+n.kind+tag+sfx, "store"+n.kind,
				fmt.Sprintf("func(dst []%s, dstStride int, src []float32, srcStride, n int%s)", cc.goType, scale),
				fmt.Sprintf("stores the first %d values of n float32 heads of src, srcStride apart, as %s in the heads of dst, dstStride apart", n.count, k.Cache),
				func() { emitCacheConvert(c, l, k, true, n.count) })
			add("cacheLoad"+n.kind+tag+sfx, "load"+n.kind,
				fmt.Sprintf("func(dst []float32, dstStride int, src []%s, srcStride, n int%s)", cc.goType, scale),
				fmt.Sprintf("loads the first %d values of n %s heads of src, srcStride apart, as float32 into the heads of dst, dstStride apart", n.count, k.Cache),
				func() { emitCacheConvert(c, l, k, false, n.count) })
		}
		switch k.Cache {
		case "f16", "bf16":
			ik := Kernel{HeadDim: k.HeadDim, RotaryDim: k.RotaryDim, NeoX: k.NeoX, DType: k.Cache}
			for _, kind := range []string{"fwd", "inv"} {
				name, what, fk := "cacheShift"+tag+sfx, "forward (R_p·x, A = 1 in r)", "shift"
				if kind == "inv" {
					name, what, fk = "cacheShiftInverse"+tag+sfx, "backward (R_pᵀ·x)", "shiftInverse"
				}
				add(name, fk, fmt.Sprintf("func(x []uint16, stride, n int, %s)", rowSig),
					fmt.Sprintf("rotates the n %s cache heads of x, stride apart, %s in place with table row r", k.Cache, what),
					func() { emitFunc(c, l, ik, kind) })
			}
		}
		if k.RotTo {
			tk := Kernel{HeadDim: k.HeadDim, RotaryDim: k.RotaryDim, NeoX: k.NeoX, DType: "f32", out: "f32"}
			add("cacheRotTo"+sfx, "rotTo", fmt.Sprintf("func(dst []float32, dstStride int, src []float32, srcStride, n int, %s)", rowSig),
				"rotates the n heads of src, srcStride apart, forward with table row r into the float32 heads of dst, dstStride apart, values past RotaryDim copied",
				func() { emitFunc(c, l, tk, "to") })
		}
	}
	return funcs
}

// emitCacheConvert emits a store (store) or load kernel of the first count
// values of each head.
func emitCacheConvert(c *build.Context, l level, k CacheKernel, store bool, count int) {
	f32 := codecs["f32"]
	// kind "to": src and dst are heads of their own, as for a "to" kernel.
	e := &emitter{c: c, l: l, k: k.Kernel, kind: "to", in: f32, out: f32, tab: f32,
		masks: map[int]reg.OpmaskVirtual{}, consts: map[uint32]reg.VecVirtual{}}
	e.lanes = l.bytes / 4
	cc := cacheCodec[k.Cache]
	if store {
		e.out = cc
	} else {
		e.in = cc
	}
	n := c.GP64()
	c.Load(c.Param("n"), n)
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	e.dst = operand.Mem{Base: c.Load(c.Param("dst").Base(), c.GP64())}
	e.dstStep = c.Load(c.Param("dstStride"), c.GP64()).(reg.GPVirtual)
	e.src = operand.Mem{Base: c.Load(c.Param("src").Base(), c.GP64())}
	e.srcStep = c.Load(c.Param("srcStride"), c.GP64()).(reg.GPVirtual)
	if e.out.size > 1 {
		e.toBytes(e.dstStep, e.out.size)
	}
	if e.in.size > 1 {
		e.toBytes(e.srcStep, e.in.size)
	}
	var scale reg.VecVirtual
	if k.Cache == "e4m3" {
		p, err := c.Param("scale").Resolve()
		if err != nil {
			panic(err)
		}
		scale = e.reg(e.lanes)
		c.VBROADCASTSS(p.Addr, scale)
	}

	var body func()
	if k.Cache == "q8_0" {
		q := &q8{e: e}
		q.setup(store && l.masked && count%128 == 0)
		body = func() {
			if store {
				q.storeHead(count)
			} else {
				q.loadHead(count)
			}
		}
	} else {
		bs := split(0, count, e.lanes, l.masked)
		for _, b := range bs {
			e.mask(b.w)
		}
		e.in.setup(e)
		e.out.setup(e)
		if k.Cache == "e4m3" {
			e4m3Setup(e, store)
		}
		one := func(b block) {
			switch {
			case k.Cache != "e4m3":
				e.store(e.load(e.src.Offset(b.j*e.in.size), b.w), e.dst.Offset(b.j*e.out.size), b.w)
			case store:
				v := e.load(e.src.Offset(b.j*4), b.w)
				e.c.VDIVPS(e.sized(scale, v), v, v)
				e4m3Store(e, e4m3Narrow(e, v), e.dst.Offset(b.j), b.w)
			default:
				v := e4m3Widen(e, e4m3Load(e, e.src.Offset(b.j), b.w))
				e.c.VMULPS(e.sized(scale, v), v, v)
				e.store(v, e.dst.Offset(b.j*4), b.w)
			}
		}
		body = func() {
			if !e.loop(bs, "chunk", false, one) {
				for _, b := range bs {
					one(b)
				}
			}
		}
	}

	c.Label("head")
	body()
	c.ADDQ(e.srcStep, e.src.Base)
	c.ADDQ(e.dstStep, e.dst.Base)
	c.DECQ(n)
	c.JNZ(operand.LabelRef("head"))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// ---- e4m3 ---------------------------------------------------------------------------

// e4m3 constants, as 32-bit lanes.
const (
	e4m3Abs     = 0x7fffffff
	e4m3Inf     = 0x7f800000 // magnitudes above it are NaN
	e4m3Max     = 0x43e00000 // 448
	e4m3Normal  = 0x3c800000 // 2⁻⁶, the smallest normal
	e4m3Round   = 0xc407ffff // 0x7ffff − 120<<23 (mod 2³²): half the 20 dropped bits, less one, less the exponent biases' difference
	e4m3Magic   = 0x46800000 // 2¹⁴, whose float32 ulp is 2⁻⁹
	e4m3NaN     = 0x7f
	f32QuietNaN = 0x7fc00000
	e4m3Sub     = 0x3b000000 // 2⁻⁹
	e4m3Bias    = 120 << 23  // float32's exponent bias less e4m3's, at the exponent
)

// e4m3Setup makes the constants of the e4m3 conversions before the loop.
func e4m3Setup(e *emitter, store bool) {
	var cs []uint32
	if store {
		cs = []uint32{e4m3Abs, e4m3Inf, e4m3Max, e4m3Normal, e4m3Round, e4m3Magic, e4m3NaN, 1}
		if e.l.masked {
			cs = append(cs, 0x80) // VPTERNLOGD's sign mask; AVX2 shifts the sign into place
		}
	} else {
		cs = []uint32{0x7f, 0x80, 8, e4m3Bias, e4m3Sub, f32QuietNaN}
	}
	for _, v := range cs {
		e.constant(v)
	}
}

// e4m3Narrow returns, in each 32-bit lane of v (x/scale), its e4m3fn bits:
// f32toe4m3 lane by lane.
func e4m3Narrow(e *emitter, v reg.VecVirtual) reg.VecVirtual {
	c := e.c
	a := e.sameReg(v)
	sign := e.sameReg(v)
	e.pand(e.kon(e4m3Abs, v), v, a)
	if e.l.masked {
		c.VPSRLD(operand.U8(24), v, sign) // the sign at bit 7, masked below
	} else {
		c.VPXOR(a, v, sign)
		c.VPSRLD(operand.U8(24), sign, sign) // 0x80 or 0
	}
	// Normal: (a + 0x7ffff + (a>>20 & 1) − 120<<23) >> 20, with a clamped
	// at 448 (120<<23 is a multiple of 2²⁰ and a is at least 2⁻⁶'s bits,
	// 121<<23, so subtracting it first is subtracting 120<<3 after).
	m := e.sameReg(v)
	c.VPMINUD(e.kon(e4m3Max, v), a, m)
	t := e.sameReg(v)
	c.VPSRLD(operand.U8(20), m, t)
	e.pand(e.kon(1, v), t, t)
	c.VPADDD(m, t, t)
	c.VPADDD(e.kon(e4m3Round, v), t, t)
	c.VPSRLD(operand.U8(20), t, t)
	// Below 2⁻⁶: bits(a + 2¹⁴) − bits(2¹⁴).
	s := e.sameReg(v)
	c.VADDPS(e.kon(e4m3Magic, v), m, s)
	c.VPSUBD(e.kon(e4m3Magic, v), s, s)
	if e.l.masked {
		sub, nan := e.c.K(), e.c.K()
		c.VPCMPGTD(a, e.kon(e4m3Normal, v), sub) // 2⁻⁶ > a
		c.VPCMPGTD(e.kon(e4m3Inf, v), a, nan)    // a > Inf: NaN
		c.VPBLENDMD(s, t, sub, t)
		c.VPBLENDMD(e.kon(e4m3NaN, v), t, nan, t)
		c.VPTERNLOGD(operand.U8(0xf8), e.kon(0x80, v), sign, t) // t | (sign & 0x80)
		return t
	}
	sub, nan := e.sameReg(v), e.sameReg(v)
	c.VPCMPGTD(a, e.kon(e4m3Normal, v), sub)
	c.VPCMPGTD(e.kon(e4m3Inf, v), a, nan)
	c.VPBLENDVB(sub, s, t, t)
	c.VPBLENDVB(nan, e.kon(e4m3NaN, v), t, t)
	c.VPOR(sign, t, t)
	return t
}

// e4m3Store writes the low byte of each of the w 32-bit lanes of v at m.
func e4m3Store(e *emitter, v reg.VecVirtual, m operand.Mem, w int) {
	c := e.c
	if e.l.masked {
		if w < e.lanes {
			c.VPMOVDB(v, e.mask(w), m)
		} else {
			c.VPMOVDB(v, m)
		}
		return
	}
	// Pack dwords (each at most 0xff) to bytes: within each 128-bit lane,
	// then the upper lane's four bytes after the lower lane's.
	p := e.sameReg(v)
	c.VPACKUSDW(v, v, p)
	c.VPACKUSWB(p, p, p)
	x := p
	if v.Size() == 32 {
		hi := c.XMM()
		c.VEXTRACTI128(operand.U8(1), p, hi)
		x = c.XMM()
		c.VPUNPCKLDQ(hi, p.AsX(), x)
	}
	if w == 1 { // an odd count: smallStore writes 2, 4 or 8 bytes
		panic(fmt.Sprintf("amd64: e4m3 store of %d values", w))
	}
	e.smallStore(x, m, w)
}

// e4m3Load reads w bytes at m into the 32-bit lanes of a register,
// zero-extended.
func e4m3Load(e *emitter, m operand.Mem, w int) reg.VecVirtual {
	c := e.c
	d := e.reg(w)
	switch {
	case e.l.masked && w < e.lanes:
		t := c.XMM()
		c.VMOVDQU8_Z(m, e.mask(w), t)
		c.VPMOVZXBD(t, d)
	case e.l.masked || w == 8:
		c.VPMOVZXBD(m, d)
	case w == 4 || w == 2:
		c.VPMOVZXBD(e.small(m, w), d)
	default: // an odd count: small reads 2 or 4 bytes
		panic(fmt.Sprintf("amd64: e4m3 load of %d values", w))
	}
	return d
}

// e4m3Widen returns the float32 values of the e4m3fn bytes in the 32-bit
// lanes of b: e4m3to32 lane by lane.
func e4m3Widen(e *emitter, b reg.VecVirtual) reg.VecVirtual {
	c := e.c
	a := e.sameReg(b)
	sign := e.sameReg(b)
	e.pand(e.kon(0x7f, b), b, a)
	e.pand(e.kon(0x80, b), b, sign)
	c.VPSLLD(operand.U8(24), sign, sign)
	n := e.sameReg(b)
	c.VPSLLD(operand.U8(20), a, n)
	c.VPADDD(e.kon(e4m3Bias, b), n, n) // (e+120)<<23 | m<<20
	s := e.sameReg(b)
	c.VCVTDQ2PS(a, s)
	c.VMULPS(e.kon(e4m3Sub, b), s, s) // m·2⁻⁹ (a < 8 where it is used)
	if e.l.masked {
		sub, nan := c.K(), c.K()
		c.VPCMPGTD(a, e.kon(8, b), sub)
		c.VPCMPEQD(e.kon(0x7f, b), a, nan)
		c.VPBLENDMD(s, n, sub, n)
		c.VPBLENDMD(e.kon(f32QuietNaN, b), n, nan, n)
	} else {
		sub, nan := e.sameReg(b), e.sameReg(b)
		c.VPCMPGTD(a, e.kon(8, b), sub)
		c.VPCMPEQD(e.kon(0x7f, b), a, nan)
		c.VPBLENDVB(sub, s, n, n)
		c.VPBLENDVB(nan, e.kon(f32QuietNaN, b), n, n)
	}
	e.por(sign, n, n)
	return n
}

// ---- q8_0 ---------------------------------------------------------------------------

// q8 emits the q8_0 kernels' heads, one 32-value block per iteration.
type q8 struct {
	e *emitter
}

// q8 constants.
const (
	f32Sign   = 0x80000000
	f32One    = 0x3f800000
	f32Below  = 0x3effffff // the largest float32 below 1/2
	f32Max127 = 0x42fe0000 // 127
	f32Min127 = 0xc2fe0000 // −127
)

// setup makes the constants of the q8_0 kernels before the head loop; groups
// adds those of the four-block path (storeGroups).
func (q *q8) setup(groups bool) {
	cs := []uint32{e4m3Abs, f32Sign, f32One, f32Below, f32Max127, f32Min127}
	if groups {
		cs = append(cs, f32InfBits, q8Tiny-1, 1)
	}
	for _, v := range cs {
		q.e.constant(v)
	}
}

// regs is how many registers hold a block's 32 float32 values.
func (q *q8) regs() int { return 32 / q.e.lanes }

// storeHead quantizes the first count values of the head at e.src into
// count/32 blocks at e.dst: at AVX-512, when count is a whole number of
// 128 values, four blocks at a time (storeGroups), else (and for a group
// that needs it) one at a time (storeBlocks).
func (q *q8) storeHead(count int) {
	e, c := q.e, q.e.c
	src, dst := operand.Mem{Base: c.GP64()}, operand.Mem{Base: c.GP64()}
	c.MOVQ(e.src.Base, src.Base)
	c.MOVQ(e.dst.Base, dst.Base)
	blocks := c.GP64()
	if e.l.masked && count%128 == 0 {
		q.storeGroups(src, dst, blocks, count/128)
		return
	}
	c.MOVQ(operand.U32(count/32), blocks)
	q.storeBlocks(src, dst, blocks, "next")
	c.Label("next")
}

// storeBlocks quantizes blocks blocks (a count in a register) from src to
// dst, one at a time, advancing both, then jumps to exit.
func (q *q8) storeBlocks(src, dst operand.Mem, blocks reg.GPVirtual, exit string) {
	e, c := q.e, q.e.c
	c.Label("block")
	nr := q.regs()
	x := make([]reg.VecVirtual, nr) // AVX-512: the block's values, kept for round
	a := make([]reg.VecVirtual, nr)
	abs := e.constant(e4m3Abs)
	for i := range nr {
		m := src.Offset(i * e.l.bytes)
		if e.l.masked {
			x[i] = e.reg(e.lanes)
			c.VMOVUPS(m, x[i])
			a[i] = e.reg(e.lanes)
			c.VPANDD(abs, x[i], a[i])
		} else {
			a[i] = e.reg(e.lanes)
			c.VPAND(m, abs, a[i]) // round reads src again
		}
	}
	// A NaN anywhere: ggml's sequence of MAX, in scalar.
	if e.l.masked {
		k0, k1 := c.K(), c.K()
		c.VCMPPS(operand.U8(3), a[0], a[0], k0)
		c.VCMPPS(operand.U8(3), a[1], a[1], k1)
		c.KORTESTW(k0, k1)
	} else {
		u := e.reg(e.lanes)
		c.VCMPPS(operand.U8(3), a[0], a[0], u)
		for i := 1; i < nr; i++ {
			t := e.reg(e.lanes)
			c.VCMPPS(operand.U8(3), a[i], a[i], t)
			c.VORPS(t, u, u)
		}
		c.VPTEST(u, u)
	}
	c.JNE(operand.LabelRef("nan"))
	// amax: the largest |x_j|, reduced to every lane of an XMM.
	m := e.reg(e.lanes)
	c.VMAXPS(a[1], a[0], m)
	for i := 2; i < nr; i++ {
		c.VMAXPS(a[i], m, m)
	}
	if e.l.masked {
		h := c.YMM()
		c.VEXTRACTF64X4(operand.U8(1), m, h)
		c.VMAXPS(h, m.AsY(), h)
		m = h
	}
	xm := c.XMM()
	c.VEXTRACTF128(operand.U8(1), m, xm)
	c.VMAXPS(xm, m.AsX(), xm)
	t := c.XMM()
	c.VPERMILPS(operand.U8(0x4e), xm, t)
	c.VMAXPS(t, xm, xm)
	c.VPERMILPS(operand.U8(0xb1), xm, t)
	amax := c.XMM()
	c.VMAXPS(t, xm, amax)
	c.Label("join")
	// d = amax/127, id = d ≠ 0 ? 1/d : 0, d stored as f16.
	d := c.XMM()
	c.VDIVSS(e.constant(f32Max127).AsX(), amax, d)
	id := c.XMM()
	c.VDIVSS(d, e.constant(f32One).AsX(), id)
	z := c.XMM()
	c.VXORPS(z, z, z)
	eq := c.XMM()
	c.VCMPSS(operand.U8(0), z, d, eq) // d == 0
	c.VANDNPS(id, eq, id)
	h := c.XMM()
	c.VCVTPS2PH(operand.U8(0), d, h)
	e.smallStore(h, dst, 2)
	idv := e.reg(e.lanes)
	c.VBROADCASTSS(id, idv)
	if e.l.masked {
		for i := range nr {
			c.VPMOVDB(q.round(x[i], idv), dst.Offset(2+16*i))
		}
	} else {
		// Sixteen YMM registers: x is read again from memory, and each
		// two results packed at once.
		xs := func(i int) operand.Op { return src.Offset(i * e.l.bytes) }
		p01, p23 := c.YMM(), c.YMM()
		c.VPACKSSDW(q.round(xs(1), idv), q.round(xs(0), idv), p01)
		c.VPACKSSDW(q.round(xs(3), idv), q.round(xs(2), idv), p23)
		b := c.YMM()
		c.VPACKSSWB(p23, p01, b)
		hi := c.XMM()
		c.VEXTRACTI128(operand.U8(1), b, hi)
		lo, up := c.XMM(), c.XMM()
		c.VPUNPCKLDQ(hi, b.AsX(), lo)
		c.VPUNPCKHDQ(hi, b.AsX(), up)
		c.VMOVDQU(lo, dst.Offset(2))
		c.VMOVDQU(up, dst.Offset(18))
	}
	c.ADDQ(operand.U32(128), src.Base)
	c.ADDQ(operand.U32(34), dst.Base)
	c.DECQ(blocks)
	c.JNZ(operand.LabelRef("block"))
	c.JMP(operand.LabelRef(exit))

	// The block holds a NaN: amax = MAX(amax, |x_j|) for j = 0…31 from 0,
	// VMAXSS computing a > b ? a : b as ggml's MAX.
	c.Label("nan")
	c.VXORPS(amax, amax, amax)
	p := c.GP64()
	c.MOVQ(src.Base, p)
	j := c.GP64()
	c.MOVQ(operand.U32(32), j)
	c.Label("scan")
	v := c.XMM()
	c.VMOVSS(operand.Mem{Base: p}, v)
	c.VANDPS(abs.AsX(), v, v)
	c.VMAXSS(v, amax, amax)
	c.ADDQ(operand.U32(4), p)
	c.DECQ(j)
	c.JNZ(operand.LabelRef("scan"))
	c.JMP(operand.LabelRef("join"))
}

// q8 constants of the four-block path.
const (
	f32InfBits = 0x7f800000
	q8Tiny     = 0x04800000 // 2⁻¹¹⁸: from it up d = amax/127 is a normal float32
)

// storeGroups quantizes groups groups of four blocks (128 values) from src to
// dst at AVX-512, sharing the per-block work: the four maxima reduced
// together into the four 128-bit lanes of one register, one VDIVPS for the
// four d and one for the four 1/d, one VCVTPS2PH for the four f16 scales.
// This fast path holds when every block's amax is 0 or between 2⁻¹¹⁸ and
// +Inf (exclusive), which a block without NaN or infinity and not all
// subnormal has: then d is a normal float32 (or 0), |x·id| <= 127·(1 + 3u)
// < 127.5, so no product is NaN and none needs clamping, and roundf is
// trunc(x·id + copysign(h, x)) (id >= 0: the product has x's sign). A group
// outside it goes through storeBlocks, which is ggml's sequence for every
// case. The integer maximum of the magnitudes' bits is the float maximum
// for them (+0 up to +Inf), and a NaN's bits exceed +Inf's.
func (q *q8) storeGroups(src, dst operand.Mem, blocks reg.GPVirtual, groups int) {
	e, c := q.e, q.e.c
	g := c.GP64()
	c.MOVQ(operand.U32(groups), g)
	c.Label("group")
	abs := e.constant(e4m3Abs)
	x := make([]reg.VecVirtual, 8)
	for i := range x {
		x[i] = c.ZMM()
		c.VMOVUPS(src.Offset(64*i), x[i])
	}
	// m[b]: block b's magnitudes' bits, maxed into 16 lanes.
	var m [4]reg.VecVirtual
	for b := range m {
		a0, a1 := c.ZMM(), c.ZMM()
		c.VPANDD(abs, x[2*b], a0)
		c.VPANDD(abs, x[2*b+1], a1)
		m[b] = c.ZMM()
		c.VPMAXUD(a1, a0, m[b])
	}
	// Two blocks per register: 128-bit lanes 0, 1 block 2k's, 2, 3 block 2k+1's.
	var u [2]reg.VecVirtual
	for k := range u {
		lo, hi := c.ZMM(), c.ZMM()
		c.VSHUFI64X2(operand.U8(0x44), m[2*k+1], m[2*k], lo)
		c.VSHUFI64X2(operand.U8(0xee), m[2*k+1], m[2*k], hi)
		u[k] = c.ZMM()
		c.VPMAXUD(hi, lo, u[k])
	}
	// Lane k of w: block k's four partial maxima; then each lane reduced.
	lo, hi := c.ZMM(), c.ZMM()
	c.VSHUFI64X2(operand.U8(0x88), u[1], u[0], lo)
	c.VSHUFI64X2(operand.U8(0xdd), u[1], u[0], hi)
	w := c.ZMM()
	c.VPMAXUD(hi, lo, w)
	t := c.ZMM()
	c.VPSHUFD(operand.U8(0x4e), w, t)
	c.VPMAXUD(t, w, w)
	c.VPSHUFD(operand.U8(0xb1), w, t)
	c.VPMAXUD(t, w, w) // every dword of lane k: amax_k's bits
	// Outside the fast path: amax >= +Inf (or NaN), or 0 < amax < 2⁻¹¹⁸.
	big, tiny := c.K(), c.K()
	c.VPCMPUD(operand.U8(5), e.constant(f32InfBits), w, big) // w >= Inf
	w1 := c.ZMM()
	c.VPSUBD(e.constant(1), w, w1)
	c.VPCMPUD(operand.U8(1), e.constant(q8Tiny-1), w1, tiny) // w − 1 < 2⁻¹¹⁸'s bits − 1 (unsigned)
	c.KORTESTW(big, tiny)
	c.JNE(operand.LabelRef("slowgroup"))
	// d = amax/127, id = d ≠ 0 ? 1/d : 0, four of each.
	d := c.ZMM()
	c.VDIVPS(e.constant(f32Max127), w, d)
	id := c.ZMM()
	c.VDIVPS(d, e.constant(f32One), id)
	nz := c.K()
	z := c.ZMM()
	c.VPXORD(z, z, z)
	c.VCMPPS(operand.U8(4), z, d, nz) // d ≠ 0
	c.VMOVAPS_Z(id, nz, id)
	h := c.YMM()
	c.VCVTPS2PH(operand.U8(0), d, h) // half 4k: block k's d
	hx := c.XMM()
	c.VEXTRACTI32X4(operand.U8(1), h.AsZ(), hx) // EVEX: h may be Y16…Y31
	c.VPEXTRW(operand.U8(0), h.AsX(), dst)
	c.VPEXTRW(operand.U8(4), h.AsX(), dst.Offset(34))
	c.VPEXTRW(operand.U8(0), hx, dst.Offset(68))
	c.VPEXTRW(operand.U8(4), hx, dst.Offset(102))
	for b := range 4 {
		idb := c.ZMM()
		c.VSHUFF32X4(operand.U8(uint8(0x55*b)), id, id, idb) // every lane: id_b
		for i := range 2 {
			xi := x[2*b+i]
			hs := c.ZMM()
			c.VPANDD(e.constant(f32Sign), xi, hs)
			c.VPORD(e.constant(f32Below), hs, hs)
			v := c.ZMM()
			c.VMULPS(idb, xi, v)
			c.VADDPS(hs, v, v)
			c.VCVTTPS2DQ(v, v)
			c.VPMOVDB(v, dst.Offset(34*b+2+16*i))
		}
	}
	c.ADDQ(operand.U32(512), src.Base)
	c.ADDQ(operand.U32(136), dst.Base)
	c.Label("nextgroup")
	c.DECQ(g)
	c.JNZ(operand.LabelRef("group"))
	c.JMP(operand.LabelRef("next"))

	c.Label("slowgroup")
	c.MOVQ(operand.U32(4), blocks)
	q.storeBlocks(src, dst, blocks, "nextgroup")
	c.Label("next")
}

// round returns the int32 lanes of roundf(x·id), NaN lanes 0, clamped to
// ±127: q8Round lane by lane. Once clamped, v is rounded half away from
// zero as trunc(v + copysign(h, v)), h the largest float32 below 1/2: for
// every float32 |v| <= 127 that is roundf(v) (gen's TestQ8RoundTrick checks
// them all), in four instructions instead of a truncation, a fraction, a
// compare and a masked add.
func (q *q8) round(x operand.Op, id reg.VecVirtual) reg.VecVirtual {
	e, c := q.e, q.e.c
	v := e.sameReg(id)
	c.VMULPS(x, id, v)
	if e.l.masked {
		ord := c.K()
		c.VCMPPS(operand.U8(7), v, v, ord)           // not NaN
		c.VMINPS_Z(e.constant(f32Max127), v, ord, v) // NaN lanes zeroed
	} else {
		ord := e.sameReg(v)
		c.VCMPPS(operand.U8(7), v, v, ord)
		c.VANDPS(ord, v, v)
		c.VMINPS(e.constant(f32Max127), v, v)
	}
	c.VMAXPS(e.constant(f32Min127), v, v)
	h := e.sameReg(v)
	if e.l.masked {
		c.VPANDD(e.constant(f32Sign), v, h)
		c.VPORD(e.constant(f32Below), h, h)
	} else {
		c.VANDPS(e.constant(f32Sign), v, h)
		c.VORPS(e.constant(f32Below), h, h)
	}
	c.VADDPS(h, v, v)
	c.VCVTTPS2DQ(v, v) // toward zero
	return v
}

// loadHead dequantizes count/32 blocks at e.src into the head at e.dst:
// q·d, d widened from f16.
func (q *q8) loadHead(count int) {
	e, c := q.e, q.e.c
	src, dst := operand.Mem{Base: c.GP64()}, operand.Mem{Base: c.GP64()}
	c.MOVQ(e.src.Base, src.Base)
	c.MOVQ(e.dst.Base, dst.Base)
	blocks := c.GP64()
	c.MOVQ(operand.U32(count/32), blocks)
	c.Label("block")
	h := e.small(src, 2)
	c.VCVTPH2PS(h, h)
	d := e.reg(e.lanes)
	c.VBROADCASTSS(h, d)
	per := e.lanes // int8 values per register
	for i := range 32 / per {
		v := e.reg(e.lanes)
		c.VPMOVSXBD(src.Offset(2+i*per), v)
		c.VCVTDQ2PS(v, v)
		c.VMULPS(d, v, v)
		c.VMOVUPS(v, dst.Offset(i*e.l.bytes))
	}
	c.ADDQ(operand.U32(34), src.Base)
	c.ADDQ(operand.U32(128), dst.Base)
	c.DECQ(blocks)
	c.JNZ(operand.LabelRef("block"))
}
