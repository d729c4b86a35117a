package verify

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"
)

// ---- a reference kernel with the strided entry points ------------------------------
//
// strideRef gives a reference kernel (verify_test.go's refKernel) the
// strided entry points, written apart from verify's own reference: it
// checks the views its own way (sorting head starts), then rotates every
// head in place through refKernel.apply on the table row, with no copy. A
// strideMutation breaks it on purpose.

type strideMutation struct {
	ignoreHead    bool // heads taken HeadDim apart whatever s.Head says
	gapWrite      bool // the element after each head gets its low bit flipped
	tailQuiet     bool // values past RotaryDim go through a float multiply (quieting signaling NaNs)
	oddBackend    bool // on backend "odd", the last rotary value of the last head is one bit off
	eager         bool // positions checked token by token, as the tokens are rotated
	noViewChecks  bool // no overlap and length checks (fields still checked)
	emptyNoChecks bool // no checks at all when len(pos) == 0
	qkNoApart     bool // ApplyQK does not check q's heads against k's
	qkUsesQs      bool // ApplyQK walks k with qs
	strayRead     bool // reads the element after each head (past the slice for the last)
}

type strideRef[T Elem] struct {
	hd     int
	m      strideMutation
	active string
}

var floatOne = float32(1)

func withStrided[T Elem](k Kernel[T], m strideMutation) Kernel[T] {
	r := &strideRef[T]{hd: k.HeadDim, m: m}
	for i, b := range k.Backends {
		use := b.Use
		k.Backends[i].Use = func() { use(); r.active = b.Name }
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	k.Strided = &Strided[T]{
		ApplyStrided: func(tab Table[T], x []T, s Strides, pos []int32) {
			r.strided("ApplyStrided", tab, x, s, pos, false)
		},
		ApplyInverseStrided: func(tab Table[T], x []T, s Strides, pos []int32) {
			r.strided("ApplyInverseStrided", tab, x, s, pos, true)
		},
		ApplyQK: r.qk,
	}
	return k
}

func (r *strideRef[T]) fail(fn, format string, a ...any) {
	panic(fmt.Sprintf("refrope.Table.%s: ", fn) + fmt.Sprintf(format, a...))
}

// starts returns the first element of every head of view s over tokens
// tokens, offset by from.
func starts(s Strides, tokens, from int) []int {
	var hs []int
	for j := range tokens {
		for h := range s.Heads {
			hs = append(hs, from+j*s.Token+h*s.Head)
		}
	}
	return hs
}

func (r *strideRef[T]) apartOK(hs []int) bool {
	hs = slices.Clone(hs)
	slices.Sort(hs)
	for i := 1; i < len(hs); i++ {
		if hs[i]-hs[i-1] < r.hd {
			return false
		}
	}
	return true
}

// checkView panics unless view s (named name) over tokens tokens fits n
// elements with its heads apart.
func (r *strideRef[T]) checkView(fn, name string, s Strides, n, tokens int) {
	if r.m.emptyNoChecks && tokens == 0 {
		return
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"Heads", s.Heads}, {"Head", s.Head}, {"Token", s.Token}} {
		if f.v <= 0 {
			r.fail(fn, "%s.%s = %d: want %s.%s > 0", name, f.field, f.v, name, f.field)
		}
	}
	if tokens == 0 || r.m.noViewChecks {
		return
	}
	if end := extent(s, tokens, r.hd); end > n {
		r.fail(fn, "%s = %+v over %d tokens ends at element %d: want at most len = %d", name, s, tokens, end, n)
	}
	if !r.apartOK(starts(s, tokens, 0)) {
		r.fail(fn, "%s = %+v over %d tokens: heads overlap: want %s.Head >= HeadDim = %d and %s.Token past the last head of a token, or the same with %s.Head and %s.Token swapped", name, s, tokens, name, r.hd, name, name, name)
	}
}

func (r *strideRef[T]) checkPos(fn string, tab Table[T], pos []int32) {
	if t, ok := tab.(*refTable[T]); ok && t == nil {
		r.fail(fn, "nil table")
	}
	for j, p := range pos {
		if lo := startOf(tab); int(p) < lo || int(p) >= lo+tab.Len() {
			r.fail(fn, "pos[%d] = %d: want %d <= pos < %d", j, p, lo, lo+tab.Len())
		}
	}
}

// rotate rotates the heads of view s in place.
func (r *strideRef[T]) rotate(tab Table[T], x []T, s Strides, pos []int32, inverse bool) {
	t := tab.(*refTable[T])
	k := t.k
	head := s.Head
	if r.m.ignoreHead {
		head = r.hd
	}
	for j, p := range pos {
		for h := range s.Heads {
			at := j*s.Token + h*head
			v := x[at : at+r.hd]
			k.apply(v, t.row(int(p)), inverse)
			if r.m.tailQuiet && k.dt == kF32 {
				for d := k.rd; d < r.hd; d++ {
					v[d] = T(float32(v[d]) * floatOne)
				}
			}
			if r.m.gapWrite && at+r.hd < len(x) {
				x[at+r.hd] = k.fromBits(k.bits(x[at+r.hd]) ^ 1)
			}
			if r.m.strayRead {
				sink += *(*byte)(unsafe.Pointer(elemAt(x, at+r.hd)))
			}
			if r.m.oddBackend && r.active == "odd" && j == len(pos)-1 && h == s.Heads-1 {
				a, _ := k.pair(k.half - 1)
				v[a] = k.fromBits(k.bits(v[a]) ^ 1)
			}
		}
	}
}

func (r *strideRef[T]) strided(name string, tab Table[T], x []T, s Strides, pos []int32, inverse bool) {
	r.checkView(name, "s", s, len(x), len(pos))
	if t, ok := tab.(*refTable[T]); ok && t == nil {
		r.fail(name, "nil table")
	}
	if r.m.eager {
		for j, p := range pos {
			if lo := startOf(tab); int(p) < lo || int(p) >= lo+tab.Len() {
				r.fail(name, "pos[%d] = %d: want %d <= pos < %d", j, p, lo, lo+tab.Len())
			}
			r.rotate(tab, x[j*s.Token:], Strides{s.Heads, s.Head, 1}, pos[j:j+1], inverse)
		}
		return
	}
	r.checkPos(name, tab, pos)
	r.rotate(tab, x, s, pos, inverse)
}

func (r *strideRef[T]) qk(tab Table[T], q []T, qs Strides, k []T, ks Strides, pos []int32) {
	const fn = "ApplyQK"
	r.checkView(fn, "qs", qs, len(q), len(pos))
	r.checkView(fn, "ks", ks, len(k), len(pos))
	if len(pos) > 0 && len(q) > 0 && len(k) > 0 && !r.m.qkNoApart {
		size := int(unsafe.Sizeof(q[0]))
		pq, pk := uintptr(unsafe.Pointer(&q[0])), uintptr(unsafe.Pointer(&k[0]))
		if pq < pk+uintptr(len(k)*size) && pk < pq+uintptr(len(q)*size) {
			d := (int(pk) - int(pq)) / size
			if !r.apartOK(append(starts(qs, len(pos), 0), starts(ks, len(pos), d)...)) {
				r.fail(fn, "qs = %+v and ks = %+v with k %d elements after q: a q head overlaps a k head: want disjoint heads", qs, ks, d)
			}
		}
	}
	r.checkPos(fn, tab, pos)
	r.rotate(tab, q, qs, pos, false)
	if r.m.qkUsesQs {
		ks.Head, ks.Token = qs.Head, qs.Token
	}
	r.rotate(tab, k, ks, pos, false)
}

// ---- the strided checks pass correct kernels ---------------------------------------

func TestRunReferenceStrided(t *testing.T) {
	t.Run("f32/hd8/interleaved", func(t *testing.T) {
		Run(t, withStrided(newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}), strideMutation{}))
	})
	t.Run("f32/hd2/neox", func(t *testing.T) {
		Run(t, withStrided(newRef[float32]("f32", 2, 2, "neox", 1, mutation{}), strideMutation{}))
	})
	t.Run("bf16/hd6/neox", func(t *testing.T) {
		Run(t, withStrided(newRef[uint16]("bf16", 6, 4, "neox", 1, mutation{}), strideMutation{}))
	})
	t.Run("f64/hd4/interleaved/A=0.8", func(t *testing.T) {
		Run(t, withStrided(newRef[float64]("f64", 4, 4, "interleaved", 0.8, mutation{}), strideMutation{}))
	})
}

// TestStridedPartialKernel: a Kernel that sets only some of the strided
// fields is refused.
func TestStridedPartialKernel(t *testing.T) {
	k := withStrided(newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}), strideMutation{})
	k.Strided.ApplyQK = nil
	if _, err := mustSuite(t, k).stridedState(); err == nil {
		t.Error("a Kernel whose Strided has ApplyStrided but no ApplyQK was accepted")
	}
	none := newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{})
	if ok, err := mustSuite(t, none).stridedState(); ok || err != nil {
		t.Errorf("a Kernel without Strided: %v, %v; want false, nil", ok, err)
	}
}

// ---- the strided checks fail broken kernels ----------------------------------------

func TestStridedMutants(t *testing.T) {
	quietRapid(t)
	const hd, rd = 8, 6
	mut := func(m strideMutation, backends ...string) *suite[float32] {
		return mustSuite(t, withStrided(newRef[float32]("f32", hd, rd, "interleaved", 1, mutation{}, backends...), m))
	}
	bits := func(s *suite[float32]) func(tb) { return func(t tb) { checkStridedBits(t, s, 20) } }
	panics := func(s *suite[float32]) func(tb) { return func(t tb) { checkStridedPanics(t, s) } }

	expectFail(t, "ignore-head/bits", "backend generic: ", bits(mut(strideMutation{ignoreHead: true})))
	expectFail(t, "gap-write/bits", "backend generic: ", bits(mut(strideMutation{gapWrite: true})))
	expectFail(t, "tail-quiet/bits", ">= RotaryDim 6), which the call must leave alone", bits(mut(strideMutation{tailQuiet: true})))
	expectFail(t, "qk-uses-qs/bits", "k's", bits(mut(strideMutation{qkUsesQs: true})))
	// The odd backend's strided result differs from its own per-head Apply
	// and from the pure Go backend's.
	expectFail(t, "odd-backend/bits", "backend odd", bits(mut(strideMutation{oddBackend: true}, "odd", "generic")))

	expectFail(t, "no-view-checks/panics", "did not panic", panics(mut(strideMutation{noViewChecks: true})))
	expectFail(t, "empty-no-checks/panics", "no positions did not panic", panics(mut(strideMutation{emptyNoChecks: true})))
	expectFail(t, "qk-no-apart/panics", "one buffer did not panic", panics(mut(strideMutation{qkNoApart: true})))
	expectFail(t, "eager/panics", "changed: ", panics(mut(strideMutation{eager: true})))

	expectPass(t, "correct/bits", bits(mut(strideMutation{}, "odd", "generic")))
	expectPass(t, "correct/panics", panics(mut(strideMutation{})))
}

// TestStridedPanicsVague: panics that do not name the field, or the value,
// or what is wanted, fail.
func TestStridedPanicsVague(t *testing.T) {
	quietRapid(t)
	for _, c := range []struct {
		name, msg, want string
	}{
		{"no-field", "refrope.Table.ApplyStrided: bad strides: want better", "does not name s.Heads"},
		{"no-method", "refrope: s.Heads = 0: want s.Heads > 0", "does not name Table.ApplyStrided"},
		{"no-want", "refrope.Table.ApplyStrided: s.Heads = 0", "does not say what was expected"},
	} {
		k := withStrided(newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}), strideMutation{})
		inner := k.Strided.ApplyStrided
		k.Strided.ApplyStrided = func(tab Table[float32], x []float32, s Strides, pos []int32) {
			if s.Heads == 0 {
				panic(c.msg)
			}
			inner(tab, x, s, pos)
		}
		s := mustSuite(t, k)
		expectFail(t, c.name, c.want, func(t tb) { checkStridedPanics(t, s) })
	}
}

// TestStridedGuardCatches: a strided kernel that reads the element after
// each head faults on the last one.
func TestStridedGuardCatches(t *testing.T) {
	if !guardSupported {
		t.Skip("SKIPPED: no guard pages on this OS")
	}
	quietRapid(t)
	bad := mustSuite(t, withStrided(newRef[float32]("f32", 8, 8, "neox", 1, mutation{}), strideMutation{strayRead: true}))
	expectFail(t, "stray-read", "memory fault", func(t tb) { checkStridedGuard(t, bad) })
	good := mustSuite(t, withStrided(newRef[float32]("f32", 8, 6, "neox", 1, mutation{}), strideMutation{}))
	expectPass(t, "correct", func(t tb) { checkStridedGuard(t, good) })
}

// ---- fuzzing -----------------------------------------------------------------------

// FuzzStridedReference runs FuzzStrided on the strided reference kernel
// (its seed corpus runs as part of go test).
func FuzzStridedReference(f *testing.F) {
	FuzzStrided(f, withStrided(newRef[float32]("f32", 8, 6, "neox", 1, mutation{}), strideMutation{}))
}

// FuzzStridedReferenceBF16 runs FuzzStrided on a bf16 strided reference
// kernel with two backends.
func FuzzStridedReferenceBF16(f *testing.F) {
	FuzzStrided(f, withStrided(newRef[uint16]("bf16", 6, 4, "interleaved", 1, mutation{}), strideMutation{}))
}

// TestFuzzStridedDecode: every decoded input is a valid call whose views
// lie inside their slices and whose heads are apart, across the ops.
func TestFuzzStridedDecode(t *testing.T) {
	s := mustSuite(t, withStrided(newRef[float32]("f32", 8, 6, "neox", 1, mutation{}), strideMutation{}))
	ops := s.fuzzStridedOps()
	if len(ops) != 6 {
		t.Fatalf("%d ops, want 6", len(ops))
	}
	seen := map[string]bool{}
	for i := range 3000 {
		data := make([]byte, fuzzStridedHeader)
		for j := range data {
			data[j] = byte(mix(uint64(i*64+j)) >> 7)
		}
		c, in := s.decodeFuzzStrided(data, ops)
		seen[c.op.String()] = true
		tokens := len(c.pos)
		for _, v := range []sview{c.a, c.b} {
			if v.s.Heads == 0 && c.op != opQK {
				continue
			}
			if !s.viewOK(v.s, tokens) || extent(v.s, tokens, s.hd) > v.n {
				t.Fatalf("input %d decodes to a bad view: %v", i, c)
			}
		}
		if len(in.a) != c.na {
			t.Fatalf("input %d: a buffer of %d for %v", i, len(in.a), c)
		}
	}
	if len(seen) != 3 {
		t.Errorf("decoded ops %v, want all three", seen)
	}
	// Short inputs decode too.
	for _, data := range [][]byte{nil, {6}, {2, 8, 8, 4, 0xff}} {
		c, _ := s.decodeFuzzStrided(data, ops)
		if c == nil {
			t.Errorf("%x decodes to no call", data)
		}
	}
}

// TestFuzzStridedCatches: the fuzz body fails a backend whose strided
// result is one bit off, and a kernel that ignores s.Head.
func TestFuzzStridedCatches(t *testing.T) {
	quietRapid(t)
	for _, c := range []struct {
		name string
		m    strideMutation
		want string
	}{
		{"odd-backend", strideMutation{oddBackend: true}, "backend odd"},
		{"ignore-head", strideMutation{ignoreHead: true}, "backend generic"},
	} {
		s := mustSuite(t, withStrided(newRef[float32]("f32", 8, 6, "interleaved", 1, mutation{}, "odd", "generic"), c.m))
		ops := s.fuzzStridedOps()
		expectFail(t, c.name, c.want, func(t tb) {
			for i := range 200 {
				data := make([]byte, fuzzStridedHeader)
				for j := range data {
					data[j] = byte(mix(uint64(i*64+j)) >> 9)
				}
				cl, in := s.decodeFuzzStrided(data, ops)
				if msg := s.checkStridedCall(cl, in, s.backendsOrOnly()); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}

// BenchmarkReferenceStrided exercises Bench's strided sub-benchmarks on the
// strided reference kernel.
func BenchmarkReferenceStrided(b *testing.B) {
	Bench(b, withStrided(newRef[float32]("f32", 64, 64, "neox", 1, mutation{}), strideMutation{}))
}
