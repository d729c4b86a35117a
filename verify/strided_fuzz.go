package verify

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
)

// FuzzStrided is the body of a generated package's FuzzStrided:
//
//	func FuzzStrided(f *testing.F) { verify.FuzzStrided(f, kernel()) }
//
// Each input is decoded (its byte layout is at fuzzStridedHeader in
// strided_fuzz.go) into one valid strided call: ApplyStrided,
// ApplyInverseStrided, ApplyQK (q and k in two buffers; in one as fused QKV
// rows; k's view after q's; k's view before q's), with 1…9 heads per view, 0…4 tokens, token-major or head-major
// strides with gaps of up to 15 elements, one-head and one-token views with
// strides below HeadDim, views at offsets of up to 15 elements in their
// buffers with up to 15 elements of slack, and positions anywhere in the
// table. The values the call reads come from the input's bytes; every other
// element of the buffers is a canary. On every backend the result must be
// what copying each head out, calling Apply (ApplyInverse) and copying it
// back gives, every canary must keep its bits, and every backend must give
// the last one's bits. k must set Strided; FuzzStrided leaves Backends[0]
// active.
func FuzzStrided[T Elem](f *testing.F, k Kernel[T]) {
	s, err := newSuite(k)
	if err != nil {
		f.Fatalf("verify: invalid Kernel: %v", err)
	}
	if ok, err := s.stridedState(); err != nil || !ok {
		f.Fatalf("verify: FuzzStrided needs a Kernel with the strided entry points (Kernel.Strided): %v", err)
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	if err := s.buildTable(); err != nil {
		f.Fatalf("verify: %v", err)
	}
	ops := s.fuzzStridedOps()
	i := 0
	for op := range ops {
		for _, heads := range []int{1, 2, 3, 5, 7} {
			for _, tokens := range []int{0, 1, 2, 3} {
				if (heads+tokens)%2 == 1 && heads > 2 {
					continue
				}
				i++
				b := make([]byte, fuzzStridedHeader, fuzzStridedHeader+16)
				b[0], b[1], b[2], b[3] = byte(op), byte(heads-1), byte(i%4), byte(tokens)
				b[4] = byte(i) // head-major and edge strides in turn
				for j := 5; j < 13; j++ {
					b[j] = byte(mix(uint64(i*16+j)) % 16)
				}
				for j := range 4 {
					binary.LittleEndian.PutUint32(b[13+4*j:], uint32([]int{0, 1, s.n - 1, 17}[(i+j)%4]))
				}
				for _, v := range s.specialBits()[:16] {
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
		c, in := s.decodeFuzzStrided(data, ops)
		if msg := s.checkStridedCall(c, in, s.backendsOrOnly()); msg != "" {
			t.Fatal(msg)
		}
	})
}

// fuzzStridedHeader is the number of bytes before the values in a
// FuzzStrided input:
//
//	[0]      the call, mod the number of calls: ApplyStrided,
//	         ApplyInverseStrided, ApplyQK in two buffers, fused, k after q,
//	         k before q
//	[1], [2] heads − 1 of the first view (x, q) and of k, mod 9
//	[3]      tokens, mod 5
//	[4]      bit 0, 1: the first view, k's view is head-major;
//	         bit 2, 3: one head or one token gets strides below HeadDim
//	[5:9]    the first view's head gap, token gap, offset and slack, mod 16
//	[9:13]   the same for the second view
//	[13:29]  4 positions, uint32 little endian, mod Len()
//	[29:32]  unused
//	[32:]    the bits of the values the call reads, little endian,
//	         sizeof(T) bytes each
//
// Missing bytes read as zero; values beyond the given bytes are special
// values drawn from a hash of the whole input.
const fuzzStridedHeader = 32

// fuzzStridedOps returns the calls FuzzStrided makes: op and, for ApplyQK,
// which of qkCalls' placements.
func (s *suite[T]) fuzzStridedOps() []struct{ op, qk int } {
	return []struct{ op, qk int }{{int(opFwd), 0}, {int(opInv), 0}, {int(opQK), 0}, {int(opQK), 1}, {int(opQK), 2}, {int(opQK), 3}}
}

// fuzzLayout builds a valid view of heads heads over tokens tokens:
// token-major (Head = HeadDim + hg, Token = the heads' span + tg) or
// head-major (Token = HeadDim + tg, Head = the tokens' span + hg); with
// edge, one head gets Head 1 + hg and one token Token 1 + tg.
func (s *suite[T]) fuzzLayout(heads, tokens int, headMajor, edge bool, g []byte) slayout {
	hd := s.hd
	hg, tg := int(g[0]%16), int(g[1]%16)
	var st Strides
	name := "fuzz token-major"
	if headMajor {
		name = "fuzz head-major"
		st = Strides{heads, 0, hd + tg}
		st.Head = max(1, tokens-1)*st.Token + hd + hg
	} else {
		st = Strides{heads, hd + hg, 0}
		st.Token = (heads-1)*st.Head + hd + tg
	}
	if edge && heads == 1 {
		st.Head = 1 + hg
	}
	if edge && tokens <= 1 {
		st.Token = 1 + tg
	}
	return slayout{name, s.fit(st, tokens), tokens, int(g[2] % 16), int(g[3] % 16)}
}

// decodeFuzzStrided decodes data (see fuzzStridedHeader) into a call and
// its buffers.
func (s *suite[T]) decodeFuzzStrided(data []byte, ops []struct{ op, qk int }) (*scall, sbufs[T]) {
	c, in, _ := s.decodeFuzzCall(data, ops, false)
	return c, in
}

// decodeFuzzCall is decodeFuzzStrided, with whole: every value of every
// head from the input (the norm reads all of them), not only the rotated
// ones; it also returns a hash of the whole input.
func (s *suite[T]) decodeFuzzCall(data []byte, ops []struct{ op, qk int }, whole bool) (*scall, sbufs[T], uint64) {
	hdr := make([]byte, fuzzStridedHeader)
	copy(hdr, data)
	o := ops[int(hdr[0])%len(ops)]
	tokens := int(hdr[3]) % 5
	fl := hdr[4]
	la := s.fuzzLayout(1+int(hdr[1])%9, tokens, fl&1 != 0, fl&4 != 0, hdr[5:9])
	lb := s.fuzzLayout(1+int(hdr[2])%9, tokens, fl&2 != 0, fl&8 != 0, hdr[9:13])
	pos := make([]int32, tokens)
	for j := range pos {
		pos[j] = int32(binary.LittleEndian.Uint32(hdr[13+4*j:]) % uint32(s.n))
	}
	var c *scall
	switch sop(o.op) {
	case opFwd, opInv:
		c = s.singleCall(sop(o.op), la, pos)
	case opQK:
		c = s.qkCalls(la, lb, pos)[o.qk]
	}
	h := fnv.New64a()
	h.Write(data)
	salt := h.Sum64()
	size := int(sizeOf[T]())
	vals := data[min(len(data), fuzzStridedHeader):]
	i := 0
	in := s.fillStrided(c, salt, whole, func() uint64 {
		defer func() { i++ }()
		if (i+1)*size <= len(vals) {
			var v uint64
			for j := size - 1; j >= 0; j-- {
				v = v<<8 | uint64(vals[i*size+j])
			}
			return v
		}
		return s.c.f.special(mix(salt+uint64(i)), false)
	})
	return c, in, salt
}
