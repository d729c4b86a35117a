package verify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkTo checks the rotate-and-narrow forms: on every backend, ApplyTo
// stores exactly what Apply computes, narrowed by the suite's own reference
// conversion (x448/float16 for f16, an independent round-to-nearest-even for
// bf16), and ApplySeqTo what ApplySeq computes; src is left unchanged, and a
// dst whose length differs from src's panics naming the function.
func checkTo[T Elem](t tb, s *suite[T]) {
	t.Helper()
	k := s.k
	if k.ApplyTo == nil && k.ApplySeqTo == nil && k.OutDType == "" {
		t.Skip("no -out-dtype forms")
	}
	if k.ApplyTo == nil || k.ApplySeqTo == nil || s.c.kind != kF32 {
		t.Fatalf("OutDType %q needs ApplyTo, ApplySeqTo and DType f32 (have %q)", k.OutDType, k.DType)
	}
	out, err := newCodec[uint16](k.OutDType)
	if err != nil || out.kind == kF32 || out.kind == kF64 {
		t.Fatalf("OutDType %q: want f16 or bf16", k.OutDType)
	}
	backends := k.Backends
	if len(backends) == 0 {
		backends = []Backend{{Name: "default", Use: func() {}}}
	}
	defer backends[0].Use()
	sd := seed()
	rng := rand.New(rand.NewPCG(sd, 0x6b76))
	calls := 4000
	if testing.Short() {
		calls = 200
	}
	for _, b := range backends {
		b.Use()
		for c := range calls {
			seqForm := c%2 == 1
			perTok, tokens := 1+rng.IntN(9), 1
			if seqForm {
				tokens = 1 + rng.IntN(8)
			}
			n := perTok * tokens * s.hd
			src := make([]T, n)
			for i := range src {
				src[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
			}
			orig := slices.Clone(src)
			ref := slices.Clone(src)
			dst := make([]uint16, n)
			var where string
			if seqForm {
				pos := make([]int32, tokens)
				for i := range pos {
					pos[i] = int32(rng.IntN(s.n))
				}
				s.tab.ApplySeq(ref, pos)
				k.ApplySeqTo(s.tab, dst, src, pos)
				where = fmt.Sprintf("ApplySeqTo(%d tokens of %d heads, pos %v)", tokens, perTok, pos)
			} else {
				pos := rng.IntN(s.n)
				s.tab.Apply(ref, pos)
				k.ApplyTo(s.tab, dst, src, pos)
				where = fmt.Sprintf("ApplyTo(%d heads, pos %d)", perTok, pos)
			}
			if i := s.firstDiff(src, orig); i >= 0 {
				t.Fatalf("backend %s: %s changed src[%d]", b.Name, where, i)
			}
			for i, y := range ref {
				want := out.fromF32(float32(y))
				if dst[i] != want && !(out.isNaN(dst[i]) && out.isNaN(want)) {
					t.Fatalf("backend %s: %s: dst[%d] = %#04x, want %s narrowed = %#04x (seed %d)",
						b.Name, where, i, dst[i], s.c.show(y), want, sd)
				}
			}
		}
		t.Logf("backend %s: %d ApplyTo/ApplySeqTo calls equal Apply/ApplySeq then %s narrowing", b.Name, calls, k.OutDType)
	}
	msg, ok := catch(func() { k.ApplyTo(s.tab, make([]uint16, s.hd+1), make([]T, s.hd), 0) })
	if !ok || !wordRE("ApplyTo").MatchString(msg) {
		t.Errorf("ApplyTo with len(dst) != len(src): panicked %v with %q, want a panic naming ApplyTo", ok, msg)
	}
}
