package verify

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

// Fuzz is the body of a generated package's FuzzKernel:
//
//	func FuzzKernel(f *testing.F) { verify.Fuzz(f, kernel()) }
//
// Each input is decoded (its byte layout is at fuzzHeader in fuzz.go) into
// one call: an entry point (the six of docs/contract.md §7), 1…9 heads per
// token, 1…3 tokens for the Seq forms, the position or positions (any
// position of the table; any non-negative int for Rotate and RotateInverse,
// so positions far beyond 2^24 too) and the values as raw bits. For such a
// valid call Fuzz checks that no backend panics, that every backend gives
// the last (pure Go) backend's bits exactly (NaN-ness only for NaNs), and,
// on the pure Go backend, that Apply equals Rotate and each token of a Seq
// call equals Apply at its position. An input whose first byte has its top
// bit set is a malformed call instead (a length off by one, a negative
// position, one past the table, no positions for a Seq call's values) that
// must panic with a message naming the entry point and the bad value.
//
// The seed corpus (f.Add) covers every form with 1…9 heads at positions 0, 1
// and Len()−1 (0, 1 and 2^40 for Rotate and RotateInverse), with the special
// values (±0, subnormals, the largest finite value, ±Inf, quiet and
// signaling NaNs) at the start of the vector. A call handles at most 27
// heads, so executions stay cheap. Fuzz leaves Backends[0] active.
func Fuzz[T Elem](f *testing.F, k Kernel[T]) {
	s, err := newSuite(k)
	if err != nil {
		f.Fatalf("verify: invalid Kernel: %v", err)
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	if err := s.buildTable(); err != nil {
		f.Fatalf("verify: %v", err)
	}
	forms := s.forms()
	for fi, fm := range forms {
		positions := []uint64{0, 1, uint64(s.n - 1)}
		if fm.e.tableless() {
			positions = []uint64{0, 1, 1 << 40}
		}
		for heads := 1; heads <= guardMaxHeads; heads++ {
			for pi, p := range positions {
				tokens := 1
				if fm.seq {
					tokens = 1 + (heads+pi)%guardMaxTokens
				}
				f.Add(s.fuzzSeed(fi, heads, tokens, p))
			}
		}
	}
	// Two malformed calls per form.
	for fi := range forms {
		f.Add(append([]byte{byte(fi) | 0x80, 0, 0}, make([]byte, fuzzHeader-3)...))
		f.Add(append([]byte{byte(fi) | 0x80, 2, 1 << 2}, make([]byte, fuzzHeader-3)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(k.Backends) > 0 {
			defer k.Backends[0].Use()
		}
		in := s.decodeFuzz(data, forms)
		if in.bad {
			s.fuzzBad(t, in)
			return
		}
		s.fuzzValid(t, in)
	})
}

// fuzzHeader is the number of bytes before the values in a fuzz input:
//
//	[0]      form index (mod the number of forms); top bit: a malformed call
//	[1]      heads per token − 1 (mod 9)
//	[2]      tokens − 1 (mod 3), for the Seq forms; bits 2…: which
//	         malformation, for a malformed call
//	[3:11]   pos, little endian: mod Len() for the table forms, masked to a
//	         non-negative int for Rotate and RotateInverse
//	[11:23]  the Seq forms' positions, 3 × uint32 little endian, mod Len()
//	[23:]    the values' bits, little endian, sizeof(T) bytes each
//
// Missing bytes read as zero; values beyond the given bytes are special
// values drawn from a hash of the whole input.
const fuzzHeader = 23

// fuzzInput is one decoded fuzz input.
type fuzzInput[T Elem] struct {
	f             gform
	heads, tokens int
	pos           int
	seq           []int32
	x             []T
	bad           bool
	how           int // which malformation, for bad
}

func (in fuzzInput[T]) String() string {
	w := fmt.Sprintf("%s with %d heads", in.f.name, in.heads)
	if in.f.seq {
		return w + fmt.Sprintf(" per token, %d tokens at %v", in.tokens, in.seq)
	}
	return w + fmt.Sprintf(" at pos %d", in.pos)
}

// fuzzSeed encodes a seed input: form fi, heads, tokens, pos (and Seq
// positions pos, 0, 1 mod Len), with the special values first.
func (s *suite[T]) fuzzSeed(fi, heads, tokens int, pos uint64) []byte {
	b := make([]byte, fuzzHeader, fuzzHeader+64*8)
	b[0], b[1], b[2] = byte(fi), byte(heads-1), byte(tokens-1)
	binary.LittleEndian.PutUint64(b[3:], pos)
	for j, p := range []uint32{uint32(pos % uint64(s.n)), 0, 1} {
		binary.LittleEndian.PutUint32(b[11+4*j:], p)
	}
	size := int(sizeOf[T]())
	for i, v := range s.specialBits() {
		if i >= 64 {
			break
		}
		b = binary.LittleEndian.AppendUint64(b, v)[:fuzzHeader+(i+1)*size]
	}
	return b
}

// specialBits returns the bit patterns of the special values of the dtype:
// ±0, ±smallest and ±largest subnormal, ±smallest normal, ±1, ±largest
// finite, ±Inf, a quiet and a signaling NaN of each sign, then a few mixed
// ones from format.special.
func (s *suite[T]) specialBits() []uint64 {
	f := s.c.f
	em := f.expMax()
	quiet := uint64(1) << (f.mantBits - 1)
	var out []uint64
	for _, neg := range []bool{false, true} {
		out = append(out,
			f.compose(neg, 0, 0), f.compose(neg, 0, 1), f.compose(neg, 0, f.mantMask()),
			f.compose(neg, 1, 0), f.compose(neg, uint64(f.bias()), 0), f.compose(neg, em-1, f.mantMask()),
			f.compose(neg, em, 0), f.compose(neg, em, quiet), f.compose(neg, em, 1))
	}
	for i := range uint64(46) {
		out = append(out, f.special(mix(i), false))
	}
	return out
}

// decodeFuzz decodes data (see fuzzHeader).
func (s *suite[T]) decodeFuzz(data []byte, forms []gform) fuzzInput[T] {
	hdr := make([]byte, fuzzHeader)
	copy(hdr, data)
	in := fuzzInput[T]{
		f:      forms[int(hdr[0]&0x7f)%len(forms)],
		bad:    hdr[0]&0x80 != 0,
		heads:  1 + int(hdr[1])%guardMaxHeads,
		tokens: 1,
		how:    int(hdr[2] >> 2),
	}
	p := binary.LittleEndian.Uint64(hdr[3:])
	if in.f.seq {
		in.tokens = 1 + int(hdr[2]&3)%guardMaxTokens
		for j := range in.tokens {
			in.seq = append(in.seq, int32(binary.LittleEndian.Uint32(hdr[11+4*j:])%uint32(s.n)))
		}
	}
	if in.f.e.tableless() {
		in.pos = int(p & uint64(math.MaxInt))
	} else {
		in.pos = int(p % uint64(s.n))
	}
	h := fnv.New64a()
	h.Write(data)
	salt := h.Sum64()
	size := int(sizeOf[T]())
	vals := data[min(len(data), fuzzHeader):]
	in.x = make([]T, in.heads*in.tokens*s.hd)
	for i := range in.x {
		if (i+1)*size <= len(vals) {
			var v uint64
			for j := size - 1; j >= 0; j-- {
				v = v<<8 | uint64(vals[i*size+j])
			}
			in.x[i] = s.c.fromBits(v)
		} else {
			in.x[i] = s.c.fromBits(s.c.f.special(mix(salt+uint64(i)), false))
		}
	}
	return in
}

// fuzzCall runs in on the active backend: the result of x and the panic
// message, if it panicked.
func (s *suite[T]) fuzzCall(in fuzzInput[T], form gform, pos int) (y []T, msg string, panicked bool) {
	y = slices.Clone(in.x)
	seq := slices.Clone(in.seq)
	msg, panicked = catch(func() { s.invoke(form, y, pos, seq) })
	return y, msg, panicked
}

// fuzzValid checks a valid call on every backend against the last one.
func (s *suite[T]) fuzzValid(t tb, in fuzzInput[T]) {
	t.Helper()
	bs := s.k.Backends
	if len(bs) == 0 {
		bs = []Backend{{Name: "(only)", Use: func() {}}}
	}
	ref := bs[len(bs)-1]
	ref.Use()
	want, msg, panicked := s.fuzzCall(in, in.f, in.pos)
	if panicked {
		t.Fatalf("backend %s: %v panicked on a valid call: %s", ref.Name, in, msg)
	}
	s.fuzzConsistent(t, in, want)
	for _, b := range bs[:len(bs)-1] {
		b.Use()
		y, msg, panicked := s.fuzzCall(in, in.f, in.pos)
		if panicked {
			t.Fatalf("backend %s: %v panicked on a valid call: %s", b.Name, in, msg)
		}
		if i := s.firstDiff(y, want); i >= 0 {
			t.Fatalf("backend %s differs from %s: %v: head %d, index %d: input %s (partner %s): %s gives %s, %s gives %s",
				b.Name, ref.Name, in, i/s.hd, i%s.hd, s.c.show(in.x[i]), s.partnerShow(in.x, i),
				b.Name, s.c.show(y[i]), ref.Name, s.c.show(want[i]))
		}
	}
}

// fuzzConsistent checks, on the active (pure Go) backend, Apply = Rotate and
// each Seq token = Apply at its position.
func (s *suite[T]) fuzzConsistent(t tb, in fuzzInput[T], got []T) {
	t.Helper()
	tok := in.heads * s.hd
	for j := range in.tokens {
		pos := in.pos
		if in.f.seq {
			pos = int(in.seq[j])
		}
		e := eApply
		if in.f.e.inverse() {
			e = eApplyInverse
		}
		var other []entry
		switch {
		case in.f.seq:
			other = []entry{e}
		case in.f.e == eApply:
			other = []entry{eRotate}
		case in.f.e == eApplyInverse:
			other = []entry{eRotateInverse}
		case pos < s.n: // Rotate, RotateInverse within the table
			other = []entry{e}
		}
		xt := in.x[j*tok : (j+1)*tok]
		for _, o := range other {
			y := slices.Clone(xt)
			if msg, panicked := catch(func() { s.call(o, y, pos, nil) }); panicked {
				t.Fatalf("%v at pos %d panicked on a valid call: %s", o, pos, msg)
			}
			if i := s.firstDiff(got[j*tok:(j+1)*tok], y); i >= 0 {
				t.Fatalf("%v: token %d, head %d, index %d: %s, but %v at pos %d gives %s (input %s, partner %s)",
					in, j, i/s.hd, i%s.hd, s.c.show(got[j*tok+i]), o, pos, s.c.show(y[i]), s.c.show(xt[i]), s.partnerShow(xt, i))
			}
		}
	}
}

// fuzzBad makes a malformed call out of in and requires a panic naming the
// entry point and the bad value.
func (s *suite[T]) fuzzBad(t tb, in fuzzInput[T]) {
	t.Helper()
	n := len(in.x)
	x := in.x
	pos, seq := in.pos, slices.Clone(in.seq)
	var value int
	var what string
	switch how := in.how % 3; {
	case how == 0:
		x = append(slices.Clone(x), x[0])
		value, what = n+1, "len(x) not a multiple of HeadDim"
	case how == 1 && in.f.seq:
		seq[len(seq)-1] = -1 - seq[len(seq)-1]
		value, what = int(seq[len(seq)-1]), "a negative position"
	case how == 1:
		pos = -1 - pos%(1<<20)
		value, what = pos, "a negative position"
	case in.f.seq && in.how%2 == 0:
		seq, value, what = nil, n, "no positions for len(x) > 0"
	case in.f.seq:
		seq[0] = int32(s.n) + seq[0]
		value, what = int(seq[0]), "a position >= Len()"
	case in.f.e.tableless():
		pos = math.MinInt + pos%(1<<20)
		value, what = pos, "a very negative position"
	default:
		pos = s.n + pos
		value, what = pos, "pos >= Len()"
	}
	c := s.entryCall(in.f.e, x, pos, seq)
	if d := bad(c, what, panicWant{fn: in.f.name, values: []int{value}}).check(); d != "" {
		t.Fatalf("%v: %s", in, d)
	}
}
