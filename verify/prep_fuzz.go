package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzNormQK is the body of a generated package's FuzzNormQK:
//
//	func FuzzNormQK(f *testing.F) { verify.FuzzNormQK(f, kernel()) }
//
// Each input is decoded as FuzzStrided decodes it (fuzzStridedHeader) into
// an ApplyNormQK call, q and k placed as ApplyQK's calls place them (two
// buffers, fused QKV rows, k's view after q's, before it), every value of
// every head from the input's bytes (special values past them), the
// weights drawn from a hash of the input. On every backend each q and k
// head must come back as docs/contract.md §10 computes it, every other
// element keep its bits, and every backend give the last one's bits. k
// must describe a Norm; FuzzNormQK leaves Backends[0] active.
func FuzzNormQK[T Elem](f *testing.F, k Kernel[T]) {
	s, err := newSuite(k)
	if err != nil {
		f.Fatalf("verify: invalid Kernel: %v", err)
	}
	if ok, err := s.normState(); err != nil || !ok {
		f.Fatalf("verify: FuzzNormQK needs a Kernel with a Norm (ApplyNormQK): %v", err)
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	if err := s.buildTable(); err != nil {
		f.Fatalf("verify: %v", err)
	}
	ops := []struct{ op, qk int }{{int(opQK), 0}, {int(opQK), 1}, {int(opQK), 2}, {int(opQK), 3}}
	i := 0
	for op := range ops {
		for _, heads := range []int{1, 2, 3, 5, 8} {
			for _, tokens := range []int{0, 1, 2, 4} {
				i++
				b := make([]byte, fuzzStridedHeader, fuzzStridedHeader+16)
				b[0], b[1], b[2], b[3] = byte(op), byte(heads-1), byte((heads+i)%4), byte(tokens)
				b[4] = byte(i)
				for j := 5; j < 13; j++ {
					b[j] = byte(mix(uint64(i*16+j)) % 16)
				}
				for j := range 4 {
					binary.LittleEndian.PutUint32(b[13+4*j:], uint32([]int{0, 1, s.n - 1, 17}[(i+j)%4]))
				}
				for _, v := range s.specialBits()[:8] {
					b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+int(sizeOf[T]())]
				}
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(k.Backends) > 0 {
			defer k.Backends[0].Use()
		}
		c, in, salt := s.decodeFuzzCall(data, ops, true)
		r := rand.New(rand.NewPCG(salt, 0x6e7771))
		qw, kw := s.drawWeights(r, s.weightsLen(c.a.s.Heads)), s.drawWeights(r, s.weightsLen(c.b.s.Heads))
		if msg := s.checkNormCall(c, in, qw, kw, s.backendsOrOnly(), map[int][]cs{}); msg != "" {
			t.Fatal(msg)
		}
	})
}

// FuzzPrep is the body of a generated package's FuzzPrep:
//
//	func FuzzPrep(f *testing.F) { verify.FuzzPrep(f, kernel()) }
//
// An input's first byte picks one of the Kernel's cache types, its next 16
// the call (as checkPrepBits draws it: query and key heads, tokens, the
// caches' and tokens' layouts, fused QKV rows, no values, the slots and
// positions, the scales, the weights of the Kernel's Norm), and the bytes
// after them are the bits of the queries', keys' and values' buffers, in
// that order (random values past them). On every backend Prep must leave
// the bits of the separate calls on that backend (ApplyNormQK, or ApplyQK,
// on the queries and a copy of the keys, then Store of both), whose
// backends Fuzz, FuzzNormQK and Run compare. Every Cache of k must
// describe Prep; FuzzPrep leaves Backends[0] active.
func FuzzPrep(f *testing.F, k Kernel[float32]) {
	s, err := newSuite(k)
	if err != nil {
		f.Fatalf("verify: invalid Kernel: %v", err)
	}
	if len(k.Caches) == 0 {
		f.Fatalf("verify: FuzzPrep needs a Kernel with cache types (Kernel.Caches)")
	}
	if s.k.Norm != nil {
		if _, err := s.normState(); err != nil {
			f.Fatalf("verify: %v", err)
		}
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	if err := s.buildTable(); err != nil {
		f.Fatalf("verify: %v", err)
	}
	for ci := range k.Caches {
		for i := range 12 {
			b := make([]byte, fuzzPrepHeader, fuzzPrepHeader+64)
			b[0] = byte(ci)
			binary.LittleEndian.PutUint64(b[1:], mix(uint64(ci*100+i)))
			binary.LittleEndian.PutUint64(b[9:], uint64(i))
			for _, v := range s.specialBits()[:16] {
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(k.Backends) > 0 {
			defer k.Backends[0].Use()
		}
		hdr := make([]byte, fuzzPrepHeader)
		copy(hdr, data)
		c := k.Caches[int(hdr[0])%len(k.Caches)]
		if msg := c.fuzzPrep(s, hdr, data[min(len(data), fuzzPrepHeader):]); msg != "" {
			t.Fatal(msg)
		}
	})
}

// fuzzPrepHeader is the number of bytes before the values in a FuzzPrep
// input: the cache type and two uint64 seeding the call's draw.
const fuzzPrepHeader = 17

func (c *Cache[C]) fuzzPrep(s *suite[float32], hdr, vals []byte) string {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		return "verify: invalid Cache: " + err.Error()
	}
	if c.Prep == nil {
		return "verify: FuzzPrep: the " + c.DType + " Cache describes no Prep"
	}
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(hdr[1:]), binary.LittleEndian.Uint64(hdr[9:])))
	call := cs.drawPrep(r)
	st := cs.prepState(r, call)
	i := 0 // the input's values, then the drawn ones
	for _, b := range [][]float32{st.q, st.k, st.v} {
		for j := range b {
			if 4*i+4 <= len(vals) {
				b[j] = math.Float32frombits(binary.LittleEndian.Uint32(vals[4*i:]))
			}
			i++
		}
	}
	for _, b := range s.backendsOrOnly() {
		b.Use()
		want := cs.separate(call, st)
		var got prepState
		if msg, panicked := catch(func() { got = cs.prep(call, st) }); panicked {
			return fmt.Sprintf("backend %s: %v: panicked on a valid call: %s", b.Name, call, msg)
		}
		if d := cs.comparePrep(got, want); d != "" {
			return fmt.Sprintf("backend %s: %v: %s, with %s", b.Name, call, d, cs.prepName())
		}
	}
	return ""
}
