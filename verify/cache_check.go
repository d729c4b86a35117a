package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	refcodec "github.com/ropegen/ropegen/verify/codec"
)

// ---- the reference ------------------------------------------------------------------

// cacheState is the memory of one call: the cache's bytes and the float32
// token buffer.
type cacheState struct {
	cache []byte
	x     []float32
}

func (st cacheState) clone() cacheState {
	return cacheState{slices.Clone(st.cache), slices.Clone(st.x)}
}

// head returns the first element of head h of cache row (or token) j in
// view s.
func head(s Strides, j, h int) int { return j*s.Token + h*s.Head }

// expect computes what c does to st with the suite's references, and marks
// in written what it writes: for the stores and Shift the first byte of
// every block of the cache they write (compared by the format's Same, two
// NaNs alike), for Load the token values (compared NaN-tolerantly). Every
// other byte and value must keep its bits.
func (cs *cacheSuite[C]) expect(c *cacheCall, st cacheState) (want cacheState, written []bool) {
	want = st.clone()
	if c.op == opLoad {
		written = make([]bool, len(st.x))
	} else {
		written = make([]bool, len(st.cache))
	}
	y := make([]float32, cs.s.hd)
	for j, slot := range c.slots {
		if slot < 0 || c.op == opShift && c.delta[j] == 0 {
			continue
		}
		for h := range c.cv.Heads {
			co, xo := head(c.cv, int(slot), h)*cs.ref.eb, head(c.xv, j, h)
			switch c.op {
			case opStore, opApplyStore:
				copy(y, st.x[xo:xo+cs.s.hd])
				if c.op == opApplyStore {
					cs.s.tab.Apply(y, int(c.pos[j]))
				}
				if cs.c.Hadamard {
					refcodec.Hadamard(y)
				}
				cs.encodeHead(want.cache[co:], written[co:], y, cs.s.hd, cs.scaleOf(c, h))
			case opLoad:
				cs.ref.dequantize(want.x[xo:], st.cache[co:], cs.s.hd, cs.scaleOf(c, h))
				if c.orig {
					refcodec.Hadamard(want.x[xo : xo+cs.s.hd])
				}
				for i := range cs.s.hd {
					written[xo+i] = true
				}
			case opShift:
				cs.ref.dequantize(y, st.cache[co:], cs.shiftN, cs.scaleOf(c, h))
				if cs.c.Hadamard { // shiftN = HeadDim: y is the whole head
					refcodec.Hadamard(y)
					cs.rotateExact(y, c.delta[j])
					refcodec.Hadamard(y)
				} else {
					cs.rotateExact(y, c.delta[j])
				}
				cs.encodeHead(want.cache[co:], written[co:], y, cs.shiftN, cs.scaleOf(c, h))
			}
		}
	}
	return want, written
}

// scaleOf is the scale of KV head h in the call c: c's scale, or with
// Cache.HeadScales, HeadScales(c.scale, heads)[h].
func (cs *cacheSuite[C]) scaleOf(c *cacheCall, h int) float32 {
	if cs.c.HeadScales {
		return headScale(c.scale, h)
	}
	return c.scale
}

// encodeHead encodes the first n values of y into dst and marks the first
// byte of each block it writes.
func (cs *cacheSuite[C]) encodeHead(dst []byte, written []bool, y []float32, n int, scale float32) {
	cs.ref.quantize(dst, y, n, scale)
	for b := 0; b < cs.ref.bytesOf(n); b += cs.ref.blockBytes {
		written[b] = true
	}
}

// rotateExact rotates the rotary values of the head y by delta positions
// with A = 1 as the contract's arithmetic does (§5), with c = fl32(cos φ_i)
// and s = fl32(sin φ_i) of φ_i = |delta|·Freqs[i] correctly rounded:
// forward for delta > 0, backward (R_{|delta|}ᵀ) for delta < 0.
func (cs *cacheSuite[C]) rotateExact(y []float32, delta int32) {
	p := math.Abs(float64(delta))
	for i, th := range cs.s.k.Freqs {
		sn, cn := exactSincos(float64(p * th))
		a, b := cs.s.pa[i], cs.s.pb[i]
		ya, yb := cs.s.c.canon(y[a], y[b], float64(float32(cn)), float64(float32(sn)), delta < 0)
		y[a], y[b] = ya, yb
	}
}

// invoke runs c with the table on the cache elements cache and the float32
// tokens x.
func (cs *cacheSuite[C]) invoke(c *cacheCall, cache []C, x []float32) {
	switch c.op {
	case opStore:
		cs.c.Store(cache, c.scale, c.cv, c.slots, x, c.xv)
	case opApplyStore:
		cs.c.ApplyStore(cs.s.tab, cache, c.scale, c.cv, c.slots, x, c.xv, c.pos)
	case opLoad:
		if c.orig {
			cs.c.LoadOriginal(x, c.scale, c.xv, cache, c.cv, c.slots)
			return
		}
		cs.c.Load(x, c.scale, c.xv, cache, c.cv, c.slots)
	case opShift:
		cs.c.Shift(cs.s.tab, cache, c.scale, c.cv, c.slots, c.delta)
	}
}

// run makes c on a copy of st and returns the memory it leaves.
func (cs *cacheSuite[C]) run(c *cacheCall, st cacheState) cacheState {
	cache, x := elemsOf[C](st.cache), slices.Clone(st.x)
	cs.invoke(c, cache, x)
	return cacheState{memOf(cache), x}
}

// state draws the memory of c: random cache bytes (any bits: NaNs,
// infinities, any block scale), one element in four of a one-value format
// the code of a special float32 (zeros, subnormals, infinities, NaNs with
// payloads, extremes), and float32 values rich in special ones (with a
// scale per call, half of them near the scaled range).
func (cs *cacheSuite[C]) state(r *rand.Rand, c *cacheCall) cacheState {
	st := cacheState{cache: make([]byte, c.nc*cs.ref.eb), x: make([]float32, c.nx)}
	cs.fillCache(r, st.cache)
	for i := range st.x {
		st.x[i] = cs.s.c.fromBits(cs.s.c.f.special(r.Uint64(), false))
		if cs.ref.scaled && r.IntN(2) == 0 {
			st.x[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(20)-10)) * c.scale
		}
	}
	return st
}

// fillCache fills b, cache bytes, with random bits, and one element in four
// of a one-value format with the code of a special float32.
func (cs *cacheSuite[C]) fillCache(r *rand.Rand, b []byte) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
	if cs.ref.blocks {
		return
	}
	eb := cs.ref.eb
	for i := 0; i+eb <= len(b); i += eb {
		if r.IntN(4) == 0 {
			v := math.Float32frombits(uint32(formats[kF32].special(r.Uint64(), false)))
			cs.ref.f.Encode(b[i:i+eb], []float32{v}, 1)
		}
	}
}

// compare checks got against want: what written marks with the format's
// Same or NaN-tolerantly, every other byte and value bit for bit. It
// returns "" or what differs.
func (cs *cacheSuite[C]) compare(c *cacheCall, got, want cacheState, written []bool) string {
	if c.op == opLoad {
		for i := range got.x {
			g, w := got.x[i], want.x[i]
			if math.Float32bits(g) == math.Float32bits(w) || written[i] && g != g && w != w {
				continue
			}
			return fmt.Sprintf("dst[%d] = %v (%#08x), want %v (%#08x)%s", i, g, math.Float32bits(g), w, math.Float32bits(w), map[bool]string{true: "", false: ": outside the rows it reads into"}[written[i]])
		}
		if !slices.Equal(got.cache, want.cache) {
			return "changed the cache it reads"
		}
		return ""
	}
	if d := cs.compareCache(got.cache, want.cache, written); d != "" {
		return d
	}
	for i := range got.x {
		if math.Float32bits(got.x[i]) != math.Float32bits(want.x[i]) {
			return fmt.Sprintf("changed src[%d]", i)
		}
	}
	return ""
}

// compareCache compares the cache bytes got with want: the blocks whose
// first byte blocks marks by the format's Same, every other byte bit for
// bit. It returns "" or the first difference, as the cache element it lies
// in.
func (cs *cacheSuite[C]) compareCache(got, want []byte, blocks []bool) string {
	eb, bb := cs.ref.eb, cs.ref.blockBytes
	elem := func(b []byte, i int) uint64 {
		var v uint64
		for k := eb - 1; k >= 0; k-- {
			v = v<<8 | uint64(b[i/eb*eb+k])
		}
		return v
	}
	for i := 0; i < len(got); {
		if blocks != nil && blocks[i] {
			if d := cs.ref.sameBlocks(got[i:i+bb], want[i:i+bb]); d >= 0 {
				return fmt.Sprintf("cache element %d (byte %d of its block) = %#x, want %#x", (i+d)/eb, d, elem(got, i+d), elem(want, i+d))
			}
			i += bb
			continue
		}
		if got[i] != want[i] {
			return fmt.Sprintf("cache element %d = %#x, want %#x (not part of a row it writes)", i/eb, elem(got, i), elem(want, i))
		}
		i++
	}
	return ""
}

// ---- the checks ---------------------------------------------------------------------

// checkCacheBits draws calls of every form on every backend and compares
// each with the suite's references (cached values bit for bit, two NaNs
// alike; every element outside the rows written unchanged), and every
// backend's bits with the previous one's (NaN payloads aside, as
// docs/contract.md §5 has it).
func checkCacheBits[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x63616368))
	calls := 400
	if testing.Short() {
		calls = 60
		if cs.c.Hadamard {
			calls = 32 // under qemu: eight of each form
		}
	}
	counts := map[cacheOp]int{}
	for n := range calls {
		c := cs.drawCall(r, cacheOp(n%4))
		st := cs.state(r, c)
		want, written := cs.expect(c, st)
		var last cacheState
		for bi, b := range bs {
			b.Use()
			var got cacheState
			if msg, panicked := catch(func() { got = cs.run(c, st) }); panicked {
				t.Fatalf("backend %s: %v: panicked: %s (seed %d)", b.Name, c, msg, sd)
			}
			if d := cs.compare(c, got, want, written); d != "" {
				t.Fatalf("backend %s: %v: %s (seed %d)", b.Name, c, d, sd)
			}
			if bi > 0 {
				if d := cs.compare(c, got, last, written); d != "" {
					t.Fatalf("backend %s against %s: %v: %s (seed %d)", b.Name, bs[bi-1].Name, c, d, sd)
				}
			}
			last = got
		}
		counts[c.op]++
	}
	t.Logf("%d calls (Store %d, ApplyStore %d, Load %d, Shift %d) on %d backends equal the references and each other (seed %d)",
		calls, counts[opStore], counts[opApplyStore], counts[opLoad], counts[opShift], len(bs), sd)
}

// everyCode returns cached heads that hold every value the format can
// store, the last head padded by repeating the start: every code of a
// format of one value of at most 2 bytes; for a block format 2¹⁶ blocks
// whose first two bytes take every value (the scale of ggml's blocks) and
// whose byte j ≥ 2 of block k is k·7 + (j−2)·37. A 4-byte format (f32)
// has none: its values load as they are.
func (cs *cacheSuite[C]) everyCode() []byte {
	var cache []byte
	switch {
	case cs.ref.blocks:
		for k := range 1 << 16 {
			blk := make([]byte, cs.ref.blockBytes)
			blk[0], blk[1] = byte(k), byte(k>>8)
			for j := 2; j < len(blk); j++ {
				blk[j] = byte(k*7 + (j-2)*37)
			}
			cache = append(cache, blk...)
		}
	case cs.ref.eb <= 2:
		for u := range 1 << (8 * cs.ref.eb) {
			cache = append(cache, byte(u))
			if cs.ref.eb == 2 {
				cache = append(cache, byte(u>>8))
			}
		}
	}
	hb := cs.ref.cacheHead * cs.ref.eb
	for n0 := len(cache); n0 > 0 && len(cache)%hb != 0; {
		cache = append(cache, cache[len(cache)%n0])
	}
	return cache
}

// checkCacheLoadAll loads every cache element value there is (everyCode;
// with a scale per call at several scales) on every backend and compares
// it with the reference.
func checkCacheLoadAll[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	hd, e := cs.s.hd, cs.ref.cacheHead
	cache := cs.everyCode()
	rows := len(cache) / (e * cs.ref.eb)
	slots := make([]int64, rows)
	for j := range slots {
		slots[j] = int64(j)
	}
	scales := []float32{1}
	if cs.ref.scaled {
		scales = append(scales, 0.375, 3e-3, 7e30, math.MaxFloat32)
	}
	for _, scale := range scales {
		c := &cacheCall{op: opLoad, layout: "every element value", cv: Strides{1, e, e}, nc: rows * e, rows: rows, xv: Strides{1, hd, hd}, nx: rows * hd, slots: slots, scale: scale}
		st := cacheState{cache: cache, x: make([]float32, rows*hd)}
		want, written := cs.expect(c, st)
		for _, b := range bs {
			b.Use()
			if d := cs.compare(c, cs.run(c, st), want, written); d != "" {
				t.Fatalf("backend %s: Load of every %s value, scale %v: %s", b.Name, cs.ref.dtype, scale, d)
			}
		}
	}
	t.Logf("every %s value (%d heads) loads as the reference widens it on %d backends", cs.ref.dtype, rows, len(bs))
}

// blockClasses are the classes of blocks checkBlocks stores, after the
// format's own hard ones (hardBlocks).
var blockClasses = []string{"random", "all-zero", "subnormal", "tiny", "huge", "NaN", "Inf", "mixed"}

// drawBlock fills x (one block) with a block of the named class.
func drawBlock(r *rand.Rand, class string, x []float32) {
	switch class {
	case "random":
		sc := math.Ldexp(1, r.IntN(60)-30)
		for j := range x {
			x[j] = float32(r.NormFloat64() * sc)
		}
	case "all-zero":
		for j := range x {
			x[j] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		}
	case "subnormal":
		for j := range x {
			x[j] = math.Float32frombits(uint32(r.IntN(1<<23)) | uint32(r.IntN(2))<<31)
		}
	case "tiny":
		// amax around 127·2⁻¹²⁶…2⁻¹¹⁵: a block scale amax/127 is subnormal or barely normal and its inverse may overflow.
		sc := math.Ldexp(1, r.IntN(14)-129)
		for j := range x {
			x[j] = float32(r.NormFloat64() * sc * 127)
		}
	case "huge":
		for j := range x {
			x[j] = float32(math.Ldexp(r.Float64()*2-1, 100+r.IntN(28)))
		}
	case "mixed": // one block in four NaN, Inf or subnormal: a fast group next to a slow one
		drawBlock(r, []string{"random", "random", "random", "NaN", "Inf", "subnormal", "tiny"}[r.IntN(7)], x)
	case "NaN", "Inf":
		drawBlock(r, "random", x)
		for range 1 + r.IntN(3) {
			j := r.IntN(len(x))
			if r.IntN(3) == 0 {
				j = len(x) - 1
			}
			if class == "NaN" {
				x[j] = math.Float32frombits(0x7f800001 | uint32(r.IntN(1<<22))<<1 | uint32(r.IntN(2))<<31)
			} else {
				x[j] = float32(math.Inf(1 - 2*r.IntN(2)))
			}
		}
	}
}

// checkBlocks stores blocks of every class (the format's hard cases, such
// as q8_0's ties where x·id is exactly k + 1/2; random values, all zeros,
// subnormals, scales too small to invert, huge values whose scale
// overflows, NaNs and infinities) with Store on every backend, each against
// the format's reference.
func checkBlocks[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x7138))
	hd, e, v := cs.s.hd, cs.ref.cacheHead, cs.ref.values
	const heads = 64
	classes := blockClasses
	hard, _ := cs.ref.f.(hardBlocks)
	if hard != nil {
		classes = append([]string{"hard"}, classes...)
	}
	var names []string
	for _, class := range classes {
		x := make([]float32, heads*hd)
		name := class
		for b := 0; b < len(x); b += v {
			if class == "hard" {
				name = hard.HardBlock(x[b:b+v], r.Uint64())
			} else {
				drawBlock(r, class, x[b:b+v])
			}
		}
		names = append(names, name)
		c := &cacheCall{op: opStore, layout: name + " blocks", cv: Strides{heads, e, heads * e}, nc: heads * e, rows: 1, xv: Strides{heads, hd, heads * hd}, nx: len(x), slots: []int64{0}, scale: 1}
		st := cacheState{cache: make([]byte, heads*e*cs.ref.eb), x: x}
		want, written := cs.expect(c, st)
		for _, b := range bs {
			b.Use()
			if d := cs.compare(c, cs.run(c, st), want, written); d != "" {
				t.Fatalf("backend %s: Store of %s %s blocks: %s (seed %d)", b.Name, name, cs.ref.dtype, d, sd)
			}
		}
	}
	t.Logf("%s blocks of every class (%v) store as the reference on %d backends (seed %d)", cs.ref.dtype, names, len(bs), sd)
}

// checkShiftFar checks what a context shift promises beyond the bits: on a
// cache written by ApplyStore at positions p, Shift by delta gives the keys
// ApplyStore writes at p + delta, within the cache format's rounding. Per
// value with partner q, both encodings (before and after the shift) and
// the stored error the rotation carries over from one value of the pair to
// the other are each at most one spacing of the format (its Spacing) at
// |y_i| + |y_q| (which bounds both values of the pair at every angle), so
// the bound is 4 spacings there (q8_0: 4·d of the head's largest block),
// plus 16·2⁻²⁴ of the head's norm for the float32 rotations; values past
// RotaryDim of a one-value format must keep their bits. An attention factor
// applied a second time, or a rotation by a wrong angle, fails it.
func checkShiftFar[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x736869667466))
	worst := 0.0
	for _, b := range bs {
		b.Use()
		for range 6 {
			w, err := cs.shiftFarOnce(r)
			if err != "" {
				t.Fatalf("backend %s: %s (seed %d)", b.Name, err, sd)
			}
			worst = max(worst, w)
		}
	}
	t.Logf("Shift by δ matches ApplyStore at p+δ within at most %.2f of the bound on %d backends (seed %d)", worst, len(bs), sd)
}

// shiftFarOnce stores 16 tokens of 3 heads at random positions p with
// ApplyStore, shifts them by one random δ, and compares them loaded with
// the same tokens stored at p + δ. It returns the largest error as a
// fraction of the bound, or what exceeds it.
func (cs *cacheSuite[C]) shiftFarOnce(r *rand.Rand) (worst float64, err string) {
	s := cs.s
	hd, e := s.hd, cs.ref.cacheHead
	const heads, tokens = 3, 16
	cv := Strides{heads, e, heads * e}
	xv := Strides{heads, hd, heads * hd}
	x := make([]float32, tokens*heads*hd)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	scale := float32(1)
	if cs.ref.scaled {
		scale = 1.0 / 32 // values of a few units use e4m3's finer part
	}
	delta := int32(r.IntN(s.n/2)) + 1
	if r.IntN(2) == 0 {
		delta = -delta
	}
	pos, moved := make([]int32, tokens), make([]int32, tokens)
	slots, ds := make([]int64, tokens), make([]int32, tokens)
	for j := range pos {
		p := r.IntN(s.n)
		for p+int(delta) < 0 || p+int(delta) >= s.n {
			p = r.IntN(s.n)
		}
		pos[j], moved[j], slots[j], ds[j] = int32(p), int32(p+int(delta)), int64(j), delta
	}
	got, want := make([]C, tokens*heads*e), make([]C, tokens*heads*e)
	cs.c.ApplyStore(s.tab, got, scale, cv, slots, x, xv, pos)
	cs.c.Shift(s.tab, got, scale, cv, slots, ds)
	cs.c.ApplyStore(s.tab, want, scale, cv, slots, x, xv, moved)
	yg, yw := make([]float32, len(x)), make([]float32, len(x))
	cs.c.Load(yg, scale, xv, got, cv, slots)
	cs.c.Load(yw, scale, xv, want, cv, slots)
	for k := 0; k < len(x); k += hd {
		var norm float64
		for _, v := range x[k : k+hd] {
			norm += float64(v) * float64(v)
		}
		norm = math.Sqrt(norm) * s.attn
		hg, hw := yg[k:k+hd], yw[k:k+hd]
		// A block format's spacing is its blocks' (the value aside): once a head.
		blockSpacing := 0.0
		if cs.ref.blocks {
			blockSpacing = cs.ref.f.Spacing(0, scale, hg, hw)
		}
		for i := range hd {
			g, w := float64(hg[i]), float64(hw[i])
			bound := 0.0
			if i < s.rd || cs.ref.blocks {
				m := max(math.Abs(g), math.Abs(w))
				if q := s.partner[i]; q >= 0 {
					m = max(math.Abs(g)+math.Abs(float64(hg[q])), math.Abs(w)+math.Abs(float64(hw[q])))
				}
				sp := blockSpacing
				if !cs.ref.blocks {
					sp = cs.ref.f.Spacing(m, scale, hg, hw)
				}
				bound = 4*sp + 16*0x1p-24*norm
			}
			if d := math.Abs(g - w); !(d <= bound) {
				return 0, fmt.Sprintf("ApplyStore at pos then Shift by %d: value %d of head %d = %v, ApplyStore at pos+%d gives %v: off by %g, bound %g", delta, i, k/hd, g, delta, w, d, bound)
			} else if bound > 0 {
				worst = max(worst, d/bound)
			}
		}
	}
	return worst, ""
}
