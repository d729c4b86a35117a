package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/x448/float16"
)

// ---- a plainly correct cache, and its mutants ------------------------------------------
//
// refCache gives a reference kernel (refKernel, verify_test.go) the cache
// forms: it checks its arguments by brute force, rotates keys with the
// reference table's Apply, quantizes with quantizers of its own (x448/float16
// for f16, a carry-free nearest-even for bf16, a search by float64
// rounding for e4m3, ggml's q8_0 written again) and shifts with float64
// sin and cos rounded to float32. A cacheMutation breaks it on purpose.

type cacheMutation struct {
	q8TiesEven    bool // q8_0 rounds halves to even
	noSaturate    bool // e4m3: magnitudes past 464 store as NaN (0x7f) instead of 448; e5m2: from 61440 up as Inf (0x7c) instead of 57344
	attnTwice     bool // Shift turns by A·R_delta: the attention factor applied again
	writeSkipped  bool // a token with slot −1 is written to row 0
	oneMore       bool // the stores write one cache element past each head
	noDupCheck    bool // a slot listed twice goes unnoticed (the later token wins)
	eager         bool // each slot is checked as its token is written
	loadSkipped   bool // Load zeroes the rows of tokens with slot −1
	shiftTail     bool // Shift rotates the values past RotaryDim too, as pairs (RotaryDim taken as HeadDim)
	wrongAngle    bool // Shift turns by delta+1
	noScaleCheck  bool // e4m3: a bad scale is not refused
	oddBackend    bool // on backend "odd", ApplyStore's first cached element is one bit off
	strayRead     bool // Load reads the cache element after each head (past the slice for the last)
	loadNoScale   bool // e4m3: Load leaves out the scale
	skipZeroDelta bool // Shift rotates a delta of 0 too (through a round trip)
}

// strayCache keeps the strayRead mutant's reads from being optimised away.
var strayCache uint64

type refCache[C CacheElem] struct {
	dtype   string
	hd, rd  int
	e       int // elements of a cached head
	shiftN  int
	pa, pb  []int
	freqs   []float64
	attn    float64
	m       cacheMutation
	backend string
}

func newRefCache[C CacheElem](k *Kernel[float32], dtype string, m cacheMutation) *refCache[C] {
	r := &refCache[C]{dtype: dtype, hd: k.HeadDim, rd: k.RotaryDim, e: k.HeadDim, shiftN: k.RotaryDim, freqs: k.Freqs, attn: k.AttentionFactor, m: m}
	if dtype == "q8_0" {
		r.e = k.HeadDim / 32 * 34
		r.shiftN = (k.RotaryDim + 31) / 32 * 32
	}
	r.pa, r.pb = pairIndices(k.RotaryDim, k.Layout)
	for i, b := range k.Backends {
		use := b.Use
		k.Backends[i].Use = func() { use(); r.backend = b.Name }
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	k.Caches = []CacheForms{&Cache[C]{
		DType: dtype, CacheHead: r.e,
		ApplyStore: func(tab Table[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides, pos []int32) {
			r.store("ApplyStore", tab, dst, scale, ds, slots, src, ss, pos)
		},
		Store: func(dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides) {
			r.store("Store", nil, dst, scale, ds, slots, src, ss, nil)
		},
		Load:  r.load,
		Shift: r.shift,
	}}
	return r
}

func (r *refCache[C]) fail(fn, format string, a ...any) {
	panic(fmt.Sprintf("refcache.%s: ", fn) + fmt.Sprintf(format, a...))
}

// rows is the rows a cache view gives n elements, after checking its fields.
func (r *refCache[C]) rows(fn, name string, s Strides, n int) int {
	r.fields(fn, name, s)
	rows := 0
	for (rows*s.Token+(s.Heads-1)*s.Head+r.e) <= n && rows < n+1 {
		rows++
	}
	return rows
}

func (r *refCache[C]) fields(fn, name string, s Strides) {
	for _, f := range []struct {
		field string
		v     int
	}{{"Heads", s.Heads}, {"Head", s.Head}, {"Token", s.Token}} {
		if f.v <= 0 {
			r.fail(fn, "%s.%s = %d: want > 0", name, f.field, f.v)
		}
	}
}

// apart panics if two of the heads starting at hs, size elements each,
// overlap.
func (r *refCache[C]) apart(fn, name string, s Strides, hs []int, size int) {
	hs = slices.Clone(hs)
	slices.Sort(hs)
	for i := 1; i < len(hs); i++ {
		if hs[i]-hs[i-1] < size {
			r.fail(fn, "%s = %+v: heads overlap", name, s)
		}
	}
}

// tokens checks a float32 view over n tokens of a slice of length l.
func (r *refCache[C]) tokens(fn, name string, s Strides, l, n int) {
	r.fields(fn, name, s)
	var hs []int
	for j := range n {
		for h := range s.Heads {
			o := j*s.Token + h*s.Head
			if o+r.hd > l {
				r.fail(fn, "%s = %+v: token %d ends past len %d", name, s, j, l)
			}
			hs = append(hs, o)
		}
	}
	r.apart(fn, name, s, hs, r.hd)
}

// slot checks slots[j] (for the eager mutant, one at a time).
func (r *refCache[C]) slot(fn string, slots []int64, j, rows int) {
	s := slots[j]
	if s < -1 || s >= int64(rows) {
		r.fail(fn, "slots[%d] = %d: want -1 or a row below %d", j, s, rows)
	}
	if !r.m.noDupCheck && s >= 0 {
		if i := slices.Index(slots[:j], s); i >= 0 {
			r.fail(fn, "slots[%d] = %d: slots[%d] is %d too", j, s, i, s)
		}
	}
}

func (r *refCache[C]) cacheHeads(fn, name string, s Strides, slots []int64) {
	if r.m.noDupCheck { // nor by their overlapping heads
		slots = slices.Clone(slots)
		slices.Sort(slots)
		slots = slices.Compact(slots)
	}
	var hs []int
	for _, sl := range slots {
		for h := 0; sl >= 0 && h < s.Heads; h++ {
			hs = append(hs, int(sl)*s.Token+h*s.Head)
		}
	}
	r.apart(fn, name, s, hs, r.e)
}

func (r *refCache[C]) scale(fn string, scale float32) {
	if (r.dtype == "e4m3" || r.dtype == "e5m2") && !r.m.noScaleCheck && !(scale > 0 && scale <= math.MaxFloat32) {
		r.fail(fn, "scale = %v: want finite and > 0", scale)
	}
}

func (r *refCache[C]) store(fn string, tab Table[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides, pos []int32) {
	rows := r.rows(fn, "c", ds, len(dst))
	r.tokens(fn, "ss", ss, len(src), len(slots))
	if ds.Heads != ss.Heads {
		r.fail(fn, "ds.Heads = %d: want ss.Heads = %d", ds.Heads, ss.Heads)
	}
	if tab != nil && len(pos) != len(slots) {
		r.fail(fn, "len(pos) = %d: want len(slots) = %d", len(pos), len(slots))
	}
	check := func(j int) {
		r.slot(fn, slots, j, rows)
		if tab != nil && (pos[j] < 0 || int(pos[j]) >= tab.Len()) {
			r.fail(fn, "pos[%d] = %d: want 0 <= pos < %d", j, pos[j], tab.Len())
		}
	}
	if !r.m.eager {
		for j := range slots {
			check(j)
		}
		r.cacheHeads(fn, "c", ds, slots)
		r.scale(fn, scale)
	}
	y := make([]float32, r.hd)
	q := make([]uint16, r.e+1)
	for j, sl := range slots {
		if r.m.eager {
			check(j)
		}
		if sl < 0 {
			if !r.m.writeSkipped {
				continue
			}
			sl = 0
		}
		for h := range ss.Heads {
			copy(y, src[j*ss.Token+h*ss.Head:][:r.hd])
			if tab != nil {
				tab.Apply(y, int(pos[j]))
			}
			r.quantize(q, y, r.hd, scale)
			if tab != nil && r.m.oddBackend && r.backend == "odd" {
				q[0] ^= 1
			}
			o := int(sl)*ds.Token + h*ds.Head
			n := r.e
			if r.m.oneMore && o+n < len(dst) {
				q[n] = q[n-1]
				n++
			}
			for i := range n {
				dst[o+i] = C(q[i])
			}
		}
	}
	if r.m.eager {
		r.cacheHeads(fn, "c", ds, slots)
		r.scale(fn, scale)
	}
}

func (r *refCache[C]) load(dst []float32, scale float32, ds Strides, src []C, ss Strides, slots []int64) {
	const fn = "Load"
	rows := r.rows(fn, "c", ss, len(src))
	r.tokens(fn, "ds", ds, len(dst), len(slots))
	if ds.Heads != ss.Heads {
		r.fail(fn, "ds.Heads = %d: want ss.Heads = %d", ds.Heads, ss.Heads)
	}
	for j := range slots {
		r.slot(fn, slots, j, rows)
	}
	r.cacheHeads(fn, "c", ss, slots)
	r.scale(fn, scale)
	c := make([]uint16, r.e)
	for j, sl := range slots {
		for h := range ds.Heads {
			y := dst[j*ds.Token+h*ds.Head:][:r.hd]
			if sl < 0 {
				if r.m.loadSkipped {
					clear(y)
				}
				continue
			}
			o := int(sl)*ss.Token + h*ss.Head
			for i := range c {
				c[i] = uint16(src[o+i])
			}
			if r.m.strayRead {
				var z C
				strayCache += uint64(*(*C)(unsafe.Add(unsafe.Pointer(&src[o+r.e-1]), unsafe.Sizeof(z))))
			}
			r.dequantize(y, c, r.hd, scale)
		}
	}
}

func (r *refCache[C]) shift(tab Table[float32], cache []C, scale float32, cs Strides, slots []int64, delta []int32) {
	const fn = "Shift"
	rows := r.rows(fn, "c", cs, len(cache))
	if len(delta) != len(slots) {
		r.fail(fn, "len(delta) = %d: want len(slots) = %d", len(delta), len(slots))
	}
	for j, d := range delta {
		if d == math.MinInt32 {
			r.fail(fn, "delta[%d] = %d: want |delta| < 2³¹", j, d)
		}
	}
	for j := range slots {
		r.slot(fn, slots, j, rows)
	}
	r.cacheHeads(fn, "c", cs, slots)
	r.scale(fn, scale)
	c := make([]uint16, r.e)
	y := make([]float32, r.hd)
	for j, sl := range slots {
		d := delta[j]
		if sl < 0 || d == 0 && !r.m.skipZeroDelta {
			continue
		}
		if r.m.wrongAngle {
			d++
		}
		n := r.shiftN
		if r.m.shiftTail {
			n = r.hd &^ 1
		}
		for h := range cs.Heads {
			o := int(sl)*cs.Token + h*cs.Head
			for i := range c {
				c[i] = uint16(cache[o+i])
			}
			r.dequantize(y, c, n, scale)
			r.turn(y, d)
			if r.m.shiftTail { // the pass-through values, turned as pairs of the last frequency
				for a := r.rd; a+1 < n; a += 2 {
					sn, cn := math.Sincos(float64(d) * r.freqs[len(r.freqs)-1])
					c, s := float32(cn), float32(sn)
					xa, xb := y[a], y[a+1]
					y[a], y[a+1] = float32(xa*c)-float32(xb*s), float32(xb*c)+float32(xa*s)
				}
			}
			r.quantize(c, y, n, scale)
			m := n
			if r.dtype == "q8_0" {
				m = n / 32 * 34
			}
			for i := range m {
				cache[o+i] = C(c[i])
			}
		}
	}
}

// turn rotates the rotary values of y by d positions, A = 1 (A with
// attnTwice), c and s the float32 roundings of float64 cos and sin.
func (r *refCache[C]) turn(y []float32, d int32) {
	p := math.Abs(float64(d))
	a := 1.0
	if r.m.attnTwice {
		a = r.attn
	}
	for i, th := range r.freqs {
		sn, cn := math.Sincos(p * th)
		c, s := float32(a*cn), float32(a*sn)
		if d < 0 {
			s = -s
		}
		xa, xb := y[r.pa[i]], y[r.pb[i]]
		y[r.pa[i]] = float32(xa*c) - float32(xb*s)
		y[r.pb[i]] = float32(xb*c) + float32(xa*s)
	}
}

// quantize and dequantize: the cache types, written again.
func (r *refCache[C]) quantize(out []uint16, x []float32, n int, scale float32) {
	switch r.dtype {
	case "f16":
		for i := range n {
			out[i] = float16.Fromfloat32(x[i]).Bits()
		}
	case "bf16":
		for i := range n {
			out[i] = nearestBF16(x[i])
		}
	case "e4m3":
		for i := range n {
			out[i] = uint16(r.e4m3(x[i] / scale))
		}
	case "e5m2":
		for i := range n {
			out[i] = uint16(r.e5m2(x[i] / scale))
		}
	case "q8_0":
		for b := 0; b < n/32; b++ {
			r.q8(out[b*34:], x[b*32:b*32+32])
		}
	}
}

// e4m3 rounds v in float64: scale it into [8, 16) (or the subnormal
// spacing), round the integer to even, and rebuild the code.
func (r *refCache[C]) e4m3(v float32) uint8 {
	var sign uint8
	if math.Signbit(float64(v)) {
		sign = 0x80
	}
	a := math.Abs(float64(v))
	switch {
	case v != v:
		return sign | 0x7f
	case a > 448 && r.m.noSaturate && a >= 464:
		return sign | 0x7f
	case a >= 448:
		return sign | 0x7e
	case a < 0x1p-6:
		return sign | uint8(math.RoundToEven(a*512))
	}
	e := math.Floor(math.Log2(a))
	m := math.RoundToEven(a / math.Exp2(e) * 8) // 8…16
	if m == 16 {
		m, e = 8, e+1
	}
	return sign | uint8(e+7)<<3 | uint8(m-8)
}

// e5m2 rounds v in float64 as e4m3 does: into [4, 8) (or the subnormal
// spacing 2⁻¹⁶), the integer to even; from 61440 up, ±57344.
func (r *refCache[C]) e5m2(v float32) uint8 {
	var sign uint8
	if math.Signbit(float64(v)) {
		sign = 0x80
	}
	a := math.Abs(float64(v))
	switch {
	case v != v:
		return sign | 0x7f
	case a >= 61440 && r.m.noSaturate:
		return sign | 0x7c
	case a >= 61440:
		return sign | 0x7b
	case a < 0x1p-14:
		return sign | uint8(math.RoundToEven(a*0x1p16))
	}
	e := math.Floor(math.Log2(a))
	m := math.RoundToEven(a / math.Exp2(e) * 4) // 4…8
	if m == 8 {
		m, e = 4, e+1
	}
	return sign | uint8(e+15)<<2 | uint8(m-4)
}

func (r *refCache[C]) q8(out []uint16, x []float32) {
	var amax float32
	for _, v := range x {
		if av := float32(math.Abs(float64(v))); !(amax > av) {
			amax = av
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	h := float16.Fromfloat32(d).Bits()
	out[0], out[1] = h&0xff, h>>8
	for j, v := range x {
		p := float64(float32(v * id))
		q := math.Round(p)
		if r.m.q8TiesEven {
			q = math.RoundToEven(p)
		}
		q = max(-127, min(127, q))
		if p != p {
			q = 0
		}
		out[2+j] = uint16(uint8(int8(q)))
	}
}

func (r *refCache[C]) dequantize(y []float32, c []uint16, n int, scale float32) {
	switch r.dtype {
	case "f16":
		for i := range n {
			y[i] = float16.Frombits(c[i]).Float32()
		}
	case "bf16":
		for i := range n {
			y[i] = math.Float32frombits(uint32(c[i]) << 16)
		}
	case "e4m3":
		for i := range n {
			b := uint8(c[i])
			v := float32(math.NaN())
			if b&0x7f != 0x7f {
				e, m := int(b>>3&15), float64(b&7)
				if e == 0 {
					v = float32(m * 0x1p-9)
				} else {
					v = float32((8 + m) * math.Exp2(float64(e-10)))
				}
				if b&0x80 != 0 {
					v = -v
				}
			}
			if r.m.loadNoScale {
				y[i] = v
			} else {
				y[i] = v * scale
			}
		}
	case "e5m2":
		for i := range n {
			b := uint8(c[i])
			e, m := int(b>>2&31), float64(b&3)
			var v float32
			switch {
			case e == 31 && m == 0:
				v = float32(math.Inf(1))
			case e == 31:
				v = float32(math.NaN())
			case e == 0:
				v = float32(m * 0x1p-16)
			default:
				v = float32((4 + m) * math.Exp2(float64(e-17)))
			}
			if b&0x80 != 0 {
				v = -v
			}
			y[i] = v * scale
		}
	case "q8_0":
		for b := 0; b < n/32; b++ {
			d := float16.Frombits(c[b*34] | c[b*34+1]<<8).Float32()
			for j := range 32 {
				y[b*32+j] = float32(int8(uint8(c[b*34+2+j]))) * d
			}
		}
	}
}

// refCacheSuite is the cache suite of a reference kernel of dtype with
// mutation m.
func refCacheSuite[C CacheElem](t *testing.T, dtype string, hd, rd int, layout string, attn float64, m cacheMutation, backends ...string) *cacheSuite[C] {
	t.Helper()
	k := newRef[float32]("f32", hd, rd, layout, attn, mutation{}, backends...)
	newRefCache[C](&k, dtype, m)
	s := mustSuite(t, k)
	cs, err := newCacheSuite(s, k.Caches[0].(*Cache[C]))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestCacheReferences checks verify's references against values worked out
// by hand from the formats' definitions.
func TestCacheReferences(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want uint8
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x80}, {1, 0x38}, {-1, 0xb8}, {448, 0x7e}, {449, 0x7e}, {1e9, 0x7e},
		{float32(math.Inf(-1)), 0xfe}, {float32(math.NaN()), 0x7f}, {0x1p-9, 0x01}, {0x1p-10, 0x00}, {0x3p-10, 0x02},
		{0x1p-6, 0x08}, {0x7p-9, 0x07}, {0xfp-10, 0x08}, {1.0625, 0x38}, {1.1875, 0x3a}, {240, 0x77}, {464, 0x7e}, {416, 0x7d}, {432, 0x7e},
	} {
		if got := refE4M3(c.v); got != c.want {
			t.Errorf("refE4M3(%v) = %#02x, want %#02x", c.v, got, c.want)
		}
	}
	for b := range 256 {
		if b&0x7f == 0x7f {
			if v := refE4M3Value(uint8(b)); v == v {
				t.Errorf("refE4M3Value(%#02x) = %v, want NaN", b, v)
			}
			continue
		}
		if got := refE4M3(refE4M3Value(uint8(b))); got != uint8(b) {
			t.Errorf("refE4M3(refE4M3Value(%#02x)) = %#02x", b, got)
		}
	}
	// q8_0 (verify/codec's, through q8Format): a block with amax 127·2⁻³
	// has d = 2⁻³ exactly and id = 8:
	// 0.3125·8 = 2.5 rounds away from zero to 3, −0.1875·8 = −1.5 to −2.
	refQ8 := func(x []float32) (d uint16, q [32]int8) {
		b := make([]byte, 34)
		q8Format{}.Encode(b, x, 1)
		for j := range q {
			q[j] = int8(b[2+j])
		}
		return binary.LittleEndian.Uint16(b), q
	}
	x := make([]float32, 32)
	x[0], x[1], x[2], x[31] = 127.0/8, 0.3125, -0.1875, float32(math.NaN())
	d, q := refQ8(x)
	if !formats[kF16].isNaN(uint64(d)) || q[0] != 0 {
		// the last value is NaN: amax = NaN, d NaN, every q 0
		t.Errorf("a block ending in NaN: d = %#04x, q[0] = %d: want a NaN d and 0", d, q[0])
	}
	x[31] = 1
	d, q = refQ8(x)
	if d != float16.Fromfloat32(0.125).Bits() || q[0] != 127 || q[1] != 3 || q[2] != -2 || q[31] != 8 {
		t.Errorf("refQ8 = d %#04x, q %v: want d = f16(0.125), q = 127, 3, −2, …, 8", d, q)
	}
	// A NaN before the end resets amax: MAX(NaN, 0) is 0, so amax is the
	// largest value after it.
	x[0], x[5] = 100, float32(math.NaN())
	d, q = refQ8(x)
	if d != float16.Fromfloat32(float32(1)/127).Bits() || q[0] != 127 || q[5] != 0 {
		t.Errorf("a NaN inside the block: d %#04x, q[0] %d, q[5] %d: want amax from after the NaN, q[0] saturated, q[5] 0", d, q[0], q[5])
	}
}

// TestCacheCorrect: the cache checks pass the plainly correct cache of
// every type, with A = 1.25 too.
func TestCacheCorrect(t *testing.T) {
	quietRapid(t)
	const hd, rd = 8, 6
	for _, d := range []string{"f16", "bf16"} {
		cs := refCacheSuite[uint16](t, d, hd, rd, "interleaved", 1, cacheMutation{})
		passAll(t, d, cs)
	}
	passAll(t, "e4m3", refCacheSuite[uint8](t, "e4m3", hd, rd, "interleaved", 1, cacheMutation{}))
	passAll(t, "e5m2", refCacheSuite[uint8](t, "e5m2", hd, rd, "neox", 1, cacheMutation{}))
	q8 := refCacheSuite[uint8](t, "q8_0", 64, 40, "neox", 1, cacheMutation{})
	passAll(t, "q8_0", q8)
	expectPass(t, "q8_0 blocks", func(t tb) { checkBlocks(t, q8) })
	cs := refCacheSuite[uint16](t, "f16", hd, rd, "neox", 1.25, cacheMutation{})
	expectPass(t, "A = 1.25 bits", func(t tb) { checkCacheBits(t, cs) })
	expectPass(t, "A = 1.25 shift-far", func(t tb) { checkShiftFar(t, cs) })
}

// passAll requires the cache checks to pass cs.
func passAll[C CacheElem](t *testing.T, d string, cs *cacheSuite[C]) {
	t.Helper()
	expectPass(t, d+" bits", func(t tb) { checkCacheBits(t, cs) })
	expectPass(t, d+" load-all", func(t tb) { checkCacheLoadAll(t, cs) })
	expectPass(t, d+" shift-far", func(t tb) { checkShiftFar(t, cs) })
	expectPass(t, d+" guard", func(t tb) { checkCacheGuard(t, cs) })
	expectPass(t, d+" panics", func(t tb) { checkCachePanics(t, cs) })
}

// The cache checks fail each mutant of the plainly correct cache.
func TestCacheMutants(t *testing.T) {
	quietRapid(t)
	const hd, rd = 8, 6
	per := func(dtype string, m cacheMutation, backends ...string) *cacheSuite[uint16] {
		return refCacheSuite[uint16](t, dtype, hd, rd, "interleaved", 1, m, backends...)
	}
	bytes := func(dtype string, m cacheMutation, backends ...string) *cacheSuite[uint8] {
		if dtype == "q8_0" {
			return refCacheSuite[uint8](t, dtype, 64, 40, "neox", 1, m, backends...)
		}
		return refCacheSuite[uint8](t, dtype, hd, rd, "interleaved", 1, m, backends...)
	}

	t.Run("q8-ties-to-even", func(t *testing.T) {
		cs := bytes("q8_0", cacheMutation{q8TiesEven: true})
		expectFail(t, "q8-blocks", "tied", func(t tb) { checkBlocks(t, cs) })
	})
	t.Run("e4m3-no-saturation", func(t *testing.T) {
		cs := bytes("e4m3", cacheMutation{noSaturate: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
		expectFail(t, "exhaustive", "e4m3 store of", func(t tb) { cacheExhaustive(t, cs.s.k, cs.c, 1<<16+1) })
	})
	t.Run("e5m2-no-saturation", func(t *testing.T) {
		cs := bytes("e5m2", cacheMutation{noSaturate: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
		expectFail(t, "exhaustive", "e5m2 store of", func(t tb) { cacheExhaustive(t, cs.s.k, cs.c, 1<<16+1) })
	})
	t.Run("e5m2-no-scale-check", func(t *testing.T) {
		cs := bytes("e5m2", cacheMutation{noScaleCheck: true})
		expectFail(t, "panics", "scale", func(t tb) { checkCachePanics(t, cs) })
	})
	t.Run("attention-factor-twice", func(t *testing.T) {
		cs := refCacheSuite[uint16](t, "f16", hd, rd, "neox", 1.25, cacheMutation{attnTwice: true})
		expectFail(t, "bits", "Shift", func(t tb) { checkCacheBits(t, cs) })
		expectFail(t, "shift-far", "bound", func(t tb) { checkShiftFar(t, cs) })
	})
	t.Run("wrong-angle", func(t *testing.T) {
		cs := per("f16", cacheMutation{wrongAngle: true})
		expectFail(t, "shift-far", "bound", func(t tb) { checkShiftFar(t, cs) })
	})
	t.Run("skipped-slot-written", func(t *testing.T) {
		cs := per("bf16", cacheMutation{writeSkipped: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
	})
	t.Run("one-element-too-many", func(t *testing.T) {
		cs := bytes("e4m3", cacheMutation{oneMore: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
	})
	t.Run("stray-read", func(t *testing.T) {
		cs := bytes("q8_0", cacheMutation{strayRead: true})
		expectFail(t, "guard", "memory fault", func(t tb) { checkCacheGuard(t, cs) })
	})
	t.Run("load-writes-skipped-rows", func(t *testing.T) {
		cs := per("f16", cacheMutation{loadSkipped: true})
		expectFail(t, "bits", "outside the rows it reads into", func(t tb) { checkCacheBits(t, cs) })
	})
	t.Run("load-without-scale", func(t *testing.T) {
		cs := bytes("e4m3", cacheMutation{loadNoScale: true})
		expectFail(t, "load-all", "Load", func(t tb) { checkCacheLoadAll(t, cs) })
	})
	t.Run("shift-touches-the-tail", func(t *testing.T) {
		cs := per("f16", cacheMutation{shiftTail: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
	})
	t.Run("shift-rotates-delta-0", func(t *testing.T) {
		cs := per("f16", cacheMutation{skipZeroDelta: true})
		expectFail(t, "bits", "cache element", func(t tb) { checkCacheBits(t, cs) })
	})
	t.Run("duplicate-slot-accepted", func(t *testing.T) {
		cs := per("f16", cacheMutation{noDupCheck: true})
		expectFail(t, "panics", "did not panic", func(t tb) { checkCachePanics(t, cs) })
	})
	t.Run("checks-as-it-writes", func(t *testing.T) {
		cs := per("f16", cacheMutation{eager: true})
		expectFail(t, "panics", "after writing", func(t tb) { checkCachePanics(t, cs) })
	})
	t.Run("bad-scale-accepted", func(t *testing.T) {
		cs := bytes("e4m3", cacheMutation{noScaleCheck: true})
		expectFail(t, "panics", "scale", func(t tb) { checkCachePanics(t, cs) })
	})
	t.Run("odd-backend", func(t *testing.T) {
		cs := per("f16", cacheMutation{oddBackend: true}, "unrolled", "odd", "generic")
		expectFail(t, "bits", "backend odd", func(t tb) { checkCacheBits(t, cs) })
	})
}
