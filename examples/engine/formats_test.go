package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	rope "github.com/ropegen/ropegen/generated/engine"
	"github.com/ropegen/ropegen/verify/codec"
)

// TestCacheFormats serves a Qwen3 layer (QK-norm) and a Llama 3.1 layer
// from the one engine package, loaded at run time, and takes their keys
// and values through every cache type the package was generated with that
// an engine picks among (-out-dtype f16,q8_0,q4_0,iq4_nl,mxfp4,nvfp4,e5m2,
// and vLLM's nvfp4_gs and int8_per_token_head),
// with and without the Hadamard option, on this machine's best backend
// (generated/engine's own tests compare every backend with each other and
// with the same references; under make arm64 this runs on NEON):
//
//   - Prep, opened by name with NewCache: the queries are ApplyNormQK's
//     (times H with the option, verify/codec's Hadamard per head), the
//     cache rows byte for byte verify/codec's encoding of ApplyNormQK's keys
//     and of the values (times H first with the option), which for the
//     ggml types is byte for byte ggml's quantizers (verify/codec's
//     TestGGMLVectors); other rows untouched.
//   - Load: verify/codec's decoding of those rows; of the Original view,
//     that times H again.
//   - Shift by deltas of both signs and 0: verify/codec's decoding, (times
//     H,) turned by Rotate or RotateInverse by |delta| (A = 1 for both
//     models), (times H,) encoded; a delta of 0 leaves its row.
//
// e5m2 runs a third time with a scale per KV head (Cache.WithHeadScales,
// vLLM #30141), against verify/codec's E5M2Head head by head. nvfp4_gs
// takes the tensor scale g = 64 (NVIDIA's 448·6/amax for keys of amax
// 42); int8_per_token_head's rows hold each head's scale word (little
// endian) before its int8, the scale verify/codec's encoding returns.
func TestCacheFormats(t *testing.T) {
	formats := []string{"f16", "q8_0", "q4_0", "iq4_nl", "mxfp4", "nvfp4", "e5m2", "nvfp4_gs", "int8_per_token_head"}
	for _, c := range []struct {
		config string
		norm   bool
	}{{"qwen3-8b.json", true}, {"llama-3.1-8b.json", false}} {
		m, err := LoadHF(hfPath(c.config))
		if err != nil {
			t.Fatal(err)
		}
		r := m.Layer("").R
		if a := r.Params().Attn; a != 1 {
			t.Fatalf("%s: attention factor %v: the Shift reference below wants 1", c.config, a)
		}
		hd := r.Shape().HeadDim
		const hq, hkv, tokens, rows = 4, 2, 5, 7
		rng := rand.New(rand.NewPCG(7, uint64(hd)))
		draw := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				if rng.IntN(32) == 0 {
					x[i] *= 8 // an outlier, as activations have
				}
			}
			return x
		}
		qs, ks := rope.Strides{Heads: hq, Head: hd, Token: hq * hd}, rope.Strides{Heads: hkv, Head: hd, Token: hkv * hd}
		q, k, v := draw(tokens*hq*hd), draw(tokens*hkv*hd), draw(tokens*hkv*hd)
		var qw, kw []float32
		if c.norm {
			qw, kw = draw(hd), draw(hd)
		}
		pos := []int32{40, 41, 42, 43, 44}
		slots := []int64{3, 0, 6, -1, 2}
		delta := []int32{7, -3, 0, 5, 1000}
		tab := r.NewTable(64)
		wq, wk := slices.Clone(q), slices.Clone(k)
		tab.ApplyNormQK(wq, qs, qw, wk, ks, kw, pos)

		for _, name := range formats {
			f, ok := codec.Lookup(name)
			if !ok {
				t.Fatalf("verify/codec has no %q", name)
			}
			call := formatCall{q, k, v, qw, kw, wq, wk, qs, ks, pos, slots, delta, rows}
			for _, had := range []bool{false, true} {
				what := fmt.Sprintf("%s, %s, Hadamard %v", c.config, name, had)
				checkCacheFormat(t, what, r, tab, f, had, nil, call)
			}
			if name == "e5m2" {
				checkCacheFormat(t, c.config+", e5m2 with a scale per head", r, tab, codec.E5M2Head, false, []float32{1.0 / 1024, 3.0 / 256}, call)
			}
		}
	}
}

// formatCall is TestCacheFormats' step: the queries, keys and values, the
// norm weights, ApplyNormQK's queries and keys, the views, the positions,
// slots and Shift's deltas, and the cache's rows.
type formatCall struct {
	q, k, v, qw, kw, wq, wk []float32
	qs, ks                  rope.Strides
	pos                     []int32
	slots                   []int64
	delta                   []int32
	rows                    int
}

func checkCacheFormat(t *testing.T, what string, r *rope.Rotary, tab *rope.Table, f codec.Format, had bool, scales []float32, s formatCall) {
	t.Helper()
	hd := r.Shape().HeadDim
	hkv := s.ks.Heads
	name := f.Name // the cache type: e5m2_head's is e5m2
	if f.Scale == codec.HeadScale {
		name = strings.TrimSuffix(name, "_head")
	}
	ch := r.CacheHead(name)
	headBytes := f.Size(hd)
	tokenHead := f.Scale == codec.TokenHeadScale // int8_per_token_head: the head's scale word before its bytes
	if tokenHead {
		headBytes += 4
	}
	cv := rope.Strides{Heads: hkv, Head: ch, Token: hkv * ch} // in the type's elements: uint16 for f16, bytes for the others
	scale := func(h int) float32 {                            // e5m2's per-tensor scale, or with scales head h's; nvfp4_gs's g; the others ignore it
		switch {
		case scales != nil:
			return scales[h]
		case f.Name == "nvfp4_gs":
			return 64
		}
		return 1.0 / 1024
	}
	open := func(b []byte) rope.Cache {
		c, err := rope.NewCache(name, b, cv, scale(0))
		if err != nil {
			t.Fatalf("%s: NewCache: %v", what, err)
		}
		if had {
			c = c.WithHadamard()
		}
		if scales != nil {
			c = c.WithHeadScales(scales)
		}
		return c
	}
	// encode and decode are f's for the heads of one cache row.
	encode := func(dst []byte, x []float32) {
		for h := range hkv {
			d := dst[h*headBytes:][:headBytes]
			if tokenHead {
				binary.LittleEndian.PutUint32(d, math.Float32bits(f.Encode(d[4:], x[h*hd:][:hd], 0)))
				continue
			}
			f.Encode(d, x[h*hd:][:hd], scale(h))
		}
	}
	decode := func(dst []float32, src []byte) {
		for h := range hkv {
			b := src[h*headBytes:][:headBytes]
			if tokenHead {
				f.Decode(dst[h*hd:][:hd], b[4:], math.Float32frombits(binary.LittleEndian.Uint32(b)))
				continue
			}
			f.Decode(dst[h*hd:][:hd], b, scale(h))
		}
	}
	hadamard := func(x []float32) []float32 {
		y := slices.Clone(x)
		if had {
			for h := 0; h < len(y); h += hd {
				codec.Hadamard(y[h : h+hd])
			}
		}
		return y
	}
	fill := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		return b
	}
	size := s.rows * hkv * headBytes
	kb, vb := fill(size), fill(size)

	// Prep.
	gq, gk, gv := slices.Clone(s.q), slices.Clone(s.k), slices.Clone(s.v)
	tab.Prep(rope.Step{Q: gq, QS: s.qs, QW: s.qw, K: gk, KS: s.ks, KW: s.kw, V: gv, VS: s.ks, KCache: open(kb), VCache: open(vb), Slots: s.slots}, s.pos)
	if d := firstDiff(gq, hadamard(s.wq)); d >= 0 {
		t.Fatalf("%s: Prep's queries differ at %d from ApplyNormQK's%s", what, d, map[bool]string{true: " times H"}[had])
	}
	if !slices.Equal(gk, s.k) || !slices.Equal(gv, s.v) {
		t.Fatalf("%s: Prep changed the keys or values", what)
	}
	wantK, wantV := fill(size), fill(size)
	for j, slot := range s.slots {
		if slot < 0 {
			continue
		}
		row := int(slot) * hkv * headBytes
		encode(wantK[row:row+hkv*headBytes], hadamard(s.wk[j*hkv*hd:][:hkv*hd]))
		encode(wantV[row:row+hkv*headBytes], hadamard(s.v[j*hkv*hd:][:hkv*hd]))
	}
	if d := firstDiff(kb, wantK); d >= 0 {
		t.Fatalf("%s: the key cache differs at byte %d from verify/codec's encoding", what, d)
	}
	if d := firstDiff(vb, wantV); d >= 0 {
		t.Fatalf("%s: the value cache differs at byte %d from verify/codec's encoding", what, d)
	}

	// Load, in the stored basis and (with the option) the original one.
	decoded := func(cache []byte, slot int64) []float32 {
		y := make([]float32, hkv*hd)
		row := int(slot) * hkv * headBytes
		decode(y, cache[row:row+hkv*headBytes])
		return y
	}
	for _, orig := range []bool{false, true} {
		c := open(kb)
		if orig {
			c = c.Original()
		}
		dst := make([]float32, len(s.slots)*hkv*hd)
		r.Load(dst, s.ks, c, s.slots)
		for j, slot := range s.slots {
			got := dst[j*hkv*hd:][:hkv*hd]
			want := make([]float32, hkv*hd) // a skipped token's heads keep their zeros
			if slot >= 0 {
				want = decoded(kb, slot)
				if orig {
					want = hadamard(want)
				}
			}
			if d := firstDiff(got, want); d >= 0 {
				t.Fatalf("%s: Load (Original %v), token %d: differs at %d from verify/codec's decoding", what, orig, j, d)
			}
		}
	}

	// Shift.
	want := slices.Clone(kb)
	for j, slot := range s.slots {
		d := s.delta[j]
		if slot < 0 || d == 0 {
			continue
		}
		y := hadamard(decoded(kb, slot))
		if d > 0 {
			r.Rotate(y, int(d))
		} else {
			r.RotateInverse(y, int(-d))
		}
		row := int(slot) * hkv * headBytes
		encode(want[row:row+hkv*headBytes], hadamard(y))
	}
	tab.Shift(open(kb), s.slots, s.delta)
	if d := firstDiff(kb, want); d >= 0 {
		t.Fatalf("%s: Shift: the key cache differs at byte %d from decode, turn, encode", what, d)
	}
}

// firstDiff is the first index where a and b differ (NaNs by their bits),
// −1 if none.
func firstDiff[E float32 | byte](a, b []E) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i] && math.Float32bits(float32(a[i])) == math.Float32bits(float32(b[i]))) {
			return i
		}
	}
	return -1
}
