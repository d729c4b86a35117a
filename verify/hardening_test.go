package verify

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// ---- guarded memory ----------------------------------------------------------------

// TestGuardedMemory: one value past a slice that ends at the guard faults,
// one value before a slice that starts at it faults, and the canary sees a
// write on the inner side.
func TestGuardedMemory(t *testing.T) {
	if !guardSupported {
		t.Skip("SKIPPED: no guard pages on this OS")
	}
	for _, atEnd := range []bool{true, false} {
		g, err := newGuarded(5*8, atEnd)
		if err != nil {
			t.Fatal(err)
		}
		defer g.free()
		for n := 1; n <= 5; n++ { // (an empty slice's pointer is its array's start, not the guard's)
			x := guardSlice[float64](g, n)
			if len(x) != n || cap(x) != n {
				t.Fatalf("atEnd %v: slice(%d) has len %d, cap %d", atEnd, n, len(x), cap(x))
			}
			for i := range x {
				x[i] = float64(i) // the slice itself is writable
			}
			outer, inner := n, -1 // the element indices just past each end
			if !atEnd {
				outer, inner = -1, n
			}
			addr, faulted, msg, _ := faultCall(func() { sinkF += *elemAt(x, outer) })
			if !faulted {
				t.Errorf("atEnd %v, n %d: reading element %d did not fault (%s)", atEnd, n, outer, msg)
			} else if w := g.where(addr); w != "byte 1 past the end of the slice" && w != "byte 8 before the slice" {
				t.Errorf("atEnd %v, n %d: fault at %#x described as %q", atEnd, n, addr, w)
			}
			if _, faulted, msg, _ := faultCall(func() { sinkF += *elemAt(x, inner) }); faulted {
				t.Errorf("atEnd %v, n %d: reading the canary side faulted: %s", atEnd, n, msg)
			}
			if c := g.checkCanary(); c != "" {
				t.Errorf("atEnd %v, n %d: canary changed with no stray write: %s", atEnd, n, c)
			}
			low := (*byte)(unsafe.Pointer(elemAt(x, inner))) // the low byte, little endian
			*low ^= 1
			c := g.checkCanary()
			want := "byte 1 past the end"
			if atEnd {
				want = "byte 8 before the slice"
			}
			if !strings.Contains(c, want) {
				t.Errorf("atEnd %v, n %d: a write to element %d: canary check %q, want %q", atEnd, n, inner, c, want)
			}
			*low ^= 1
			g.reset()
			guardSlice[float64](g, 0)
			if c := g.checkCanary(); c != "" {
				t.Errorf("atEnd %v: canary not restored: %s", atEnd, c)
			}
		}
	}
}

var sinkF float64

// elemAt returns a pointer to element i of x, which may lie outside it.
func elemAt[T any](x []T, i int) *T {
	var z T
	return (*T)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(x)), i*int(unsafe.Sizeof(z))))
}

// strayTable is a Table that, after a correct Apply, reads or writes one
// value outside x: element off (len(x) when off is 0, i.e. one past the end).
type strayTable[T Elem] struct {
	Table[T]
	off   int
	write bool
}

func (w strayTable[T]) Apply(x []T, pos int) {
	w.Table.Apply(x, pos)
	if len(x) == 0 {
		return
	}
	off := w.off
	if off == 0 {
		off = len(x)
	}
	p := (*byte)(unsafe.Pointer(elemAt(x, off)))
	if w.write {
		*p ^= 0x5a
	} else {
		sink += *p
	}
}

var sink byte

func strayKernel(off int, write bool) Kernel[float32] {
	k := newRef[float32]("f32", 8, 8, "neox", 1, mutation{})
	inner := k.NewTable
	k.NewTable = func(n int) Table[float32] { return strayTable[float32]{inner(n), off, write} }
	return k
}

// TestGuardCatches: checkGuard fails a kernel that reads or writes one value
// outside its slice, and passes a correct one.
func TestGuardCatches(t *testing.T) {
	if !guardSupported {
		t.Skip("SKIPPED: no guard pages on this OS")
	}
	quietRapid(t)
	for _, c := range []struct {
		name  string
		off   int
		write bool
		want  string
	}{
		{"read-past-end", 0, false, "memory fault"},
		{"write-past-end", 0, true, "memory fault"},
		{"read-before-start", -1, false, "byte 4 before the slice)"},
		{"write-before-start", -1, true, "byte 4 before the slice was overwritten"},
	} {
		s := mustSuite(t, strayKernel(c.off, c.write))
		expectFail(t, c.name, c.want, func(t tb) { checkGuard(t, s) })
	}
	good := mustSuite(t, newRef[float32]("f32", 8, 8, "neox", 1, mutation{}))
	expectPass(t, "correct", func(t tb) { checkGuard(t, good) })
}

// ---- bad input -----------------------------------------------------------------------

// eagerTable rotates each token of a Seq call as soon as its position checks
// out, so a bad later position panics after x has changed.
type eagerTable[T Elem] struct {
	Table[T]
	hd int
}

func (e eagerTable[T]) ApplySeq(x []T, pos []int32) {
	if len(pos) == 0 || len(x)%(len(pos)*e.hd) != 0 {
		e.Table.ApplySeq(x, pos) // its own checks
		return
	}
	tok := len(x) / len(pos)
	for j, p := range pos {
		if p < 0 || int(p) >= e.Len() {
			panic(fmt.Sprintf("eager: ApplySeq: pos[%d] = %d: want 0 <= pos < %d", j, p, e.Len()))
		}
		e.Table.Apply(x[j*tok:(j+1)*tok], int(p))
	}
}

// TestInputPanicsCatch: the extended checks fail kernels that get the edge
// cases wrong.
func TestInputPanicsCatch(t *testing.T) {
	quietRapid(t)
	eager := newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{})
	inner := eager.NewTable
	eager.NewTable = func(n int) Table[float32] { return eagerTable[float32]{inner(n), 8} }
	se := mustSuite(t, eager)
	expectFail(t, "eager-seq", "after writing: x changed", func(t tb) { checkPanics(t, se) })

	vague := newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{})
	inner2 := vague.NewTable
	vague.NewTable = func(n int) Table[float32] {
		if n < 0 {
			panic(fmt.Sprintf("NewTable: %d", n))
		}
		return inner2(n)
	}
	sv := mustSuite(t, vague)
	expectFail(t, "vague-NewTable", "does not say what was expected", func(t tb) { checkPanics(t, sv) })

	for name, k := range map[string]Kernel[float32]{
		"ref":      newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}),
		"ref/neox": newRef[float32]("f32", 8, 6, "neox", 1, mutation{}),
	} {
		sk := mustSuite(t, k)
		expectPass(t, name, func(t tb) { checkPanics(t, sk) })
	}
}

// ---- fuzzing -------------------------------------------------------------------------

// FuzzReference runs Fuzz on the reference kernel (its seed corpus runs as
// part of go test).
func FuzzReference(f *testing.F) {
	Fuzz(f, newRef[float32]("f32", 8, 6, "neox", 1, mutation{}))
}

// FuzzReferenceF16 runs Fuzz on an f16 reference kernel.
func FuzzReferenceF16(f *testing.F) {
	Fuzz(f, newRef[uint16]("f16", 6, 4, "interleaved", 1, mutation{}))
}

// TestFuzzDecode: seeds decode to what they encode, with the special values
// first, and short or empty inputs decode to valid calls.
func TestFuzzDecode(t *testing.T) {
	s := mustSuite(t, newRef[float32]("f32", 8, 6, "neox", 1, mutation{}))
	forms := s.forms()
	if len(forms) != 6 {
		t.Fatalf("%d forms, want 6", len(forms))
	}
	for fi, f := range forms {
		for heads := 1; heads <= 9; heads++ {
			data := s.fuzzSeed(fi, heads, 2, uint64(s.n-1))
			in := s.decodeFuzz(data, forms)
			wantTok := 1
			if f.seq {
				wantTok = 2
			}
			if in.f.name != f.name || in.heads != heads || in.tokens != wantTok || in.bad || in.pos != s.n-1 || len(in.x) != heads*wantTok*s.hd {
				t.Fatalf("seed %s/%d decodes to %v (tokens %d, bad %v, %d values)", f.name, heads, in, in.tokens, in.bad, len(in.x))
			}
			if f.seq && !slices.Equal(in.seq, []int32{int32(s.n - 1), 0}) {
				t.Fatalf("seed %s/%d: positions %v", f.name, heads, in.seq)
			}
			specials := s.specialBits()
			for i := range min(len(in.x), 64) {
				if got := s.c.bits(in.x[i]); got != specials[i]&0xffffffff {
					t.Fatalf("seed %s/%d: value %d has bits %#x, want %#x", f.name, heads, i, got, specials[i])
				}
			}
		}
	}
	for _, data := range [][]byte{nil, {0x80}, {5, 200, 255}, make([]byte, 1000)} {
		in := s.decodeFuzz(data, forms)
		if in.heads < 1 || in.heads > 9 || in.tokens < 1 || in.tokens > 3 || len(in.seq) != map[bool]int{true: in.tokens}[in.f.seq] {
			t.Errorf("%x decodes to %v", data, in)
		}
	}
	// Rotate takes any non-negative position, far past 2^24 too.
	data := s.fuzzSeed(4, 1, 1, 1<<62|1<<63)
	if in := s.decodeFuzz(data, forms); in.f.name != "Rotate" || in.pos != 1<<62 {
		t.Errorf("Rotate seed with pos 2^63+2^62 decodes to %v", in)
	}
}

// TestFuzzCatches: the fuzz body fails a backend that is one ulp off, and a
// kernel whose panics do not name the entry point.
func TestFuzzCatches(t *testing.T) {
	quietRapid(t)
	s := mustSuite(t, newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{ulp: 1}, "ulp", "generic"))
	forms := s.forms()
	expectFail(t, "ulp", "differs from generic", func(t tb) {
		for fi := range forms {
			for heads := 1; heads <= 3; heads++ {
				s.fuzzValid(t, s.decodeFuzz(s.fuzzSeed(fi, heads, 1, 17), forms))
			}
		}
	})
	good := mustSuite(t, newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}))
	gforms := good.forms()
	expectPass(t, "correct", func(t tb) {
		for fi := range gforms {
			for heads := 1; heads <= 3; heads++ {
				data := good.fuzzSeed(fi, heads, heads, 5)
				good.fuzzValid(t, good.decodeFuzz(data, gforms))
				for how := range 6 {
					data[0] |= 0x80
					data[2] = byte(how<<2) | data[2]&3
					good.fuzzBad(t, good.decodeFuzz(data, gforms))
				}
			}
		}
	})
	unchecked := mustSuite(t, newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{noChecks: true}))
	expectFail(t, "no-checks", "did not panic", func(t tb) {
		data := make([]byte, fuzzHeader)
		data[0] = 0x80 | 4 // Rotate, malformed: a negative position
		data[2] = 1 << 2
		binary.LittleEndian.PutUint64(data[3:], 3)
		unchecked.fuzzBad(t, unchecked.decodeFuzz(data, unchecked.forms()))
	})
}

// ---- concurrency -----------------------------------------------------------------------

// TestRace runs the concurrency check on the reference kernels; make test
// runs it under -race.
func TestRace(t *testing.T) {
	for name, k := range map[string]Kernel[float32]{
		"ref":             newRef[float32]("f32", 16, 12, "neox", 1, mutation{}),
		"ref/interleaved": newRef[float32]("f32", 8, 8, "interleaved", 1, mutation{}),
	} {
		t.Run(name, func(t *testing.T) { checkConcurrent(t, mustSuite(t, k)) })
	}
}
