package rt

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A Rotary without a QK-norm turns q and k in ApplyNormQK as ApplyQK does,
// Table and Batch alike, and refuses weights before writing anything.
func TestApplyNormQKWithoutNorm(t *testing.T) {
	for _, s := range refShapes {
		r := mustNew(t, refParams(s, 10000))
		rng := rand.New(rand.NewPCG(5, uint64(s.HeadDim)))
		hd := s.HeadDim
		const hq, hkv, tokens = 4, 2, 3
		row := (hq + 2*hkv) * hd
		qs, ks := Strides{Heads: hq, Head: hd, Token: row}, Strides{Heads: hkv, Head: hd, Token: row}
		x0 := randVec(rng, tokens*row)
		pos := []int32{7, 3, 90}
		tab := r.NewTable(100)
		b := r.NewBatch(tokens)
		b.Set(pos)
		eachBackend(t, func(t *testing.T, be string) {
			want := slices.Clone(x0)
			tab.ApplyQK(want, qs, want[hq*hd:], ks, pos)
			for _, rows := range []Rows{tab, b} {
				got := slices.Clone(x0)
				rows.ApplyNormQK(got, qs, nil, got[hq*hd:], ks, nil, pos)
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("%v, backend %s, %T: ApplyNormQK without a norm: value %d = %v, ApplyQK gives %v", s, be, rows, i, got[i], want[i])
				}
				got = slices.Clone(x0)
				msg, panicked := catchPanic(func() { rows.ApplyNormQK(got, qs, make([]float32, hd), got[hq*hd:], ks, nil, pos) })
				if !panicked || !strings.Contains(msg, "len(qw) = "+strconv.Itoa(hd)) || !strings.Contains(msg, "no QK-norm") {
					t.Errorf("%v, %T: ApplyNormQK with weights and no norm: panic %q (%v), want one naming len(qw) and the missing norm", s, rows, msg, panicked)
				}
				if sameBits(got, x0) >= 0 {
					t.Errorf("%v, %T: ApplyNormQK wrote before it panicked", s, rows)
				}
			}
		})
	}
}

// Glue written once against CacheRows serves a prefill (a Table) and a
// decode step (a Batch): the same calls, with the same positions, give the
// same bits, and the QK-norm call serves the model with a norm and the one
// without.
func TestRowsServeTableAndBatch(t *testing.T) {
	s := refShapes[2]
	normed := refParams(s, 10000)
	normed.NormKind, normed.NormScope, normed.NormEps = "rms", "head", 1e-6
	for _, p := range []Params{refParams(s, 10000), normed} {
		r := mustNew(t, p)
		rng := rand.New(rand.NewPCG(6, 7))
		hd := s.HeadDim
		const hq, hkv, tokens, rows = 4, 2, 3, 8
		row := (hq + 2*hkv) * hd
		var qw, kw []float32
		if p.NormKind != "" {
			qw, kw = randVec(rng, hd), randVec(rng, hd)
		}
		x0 := randVec(rng, tokens*row)
		pos, slots := []int32{40, 2, 17}, []int64{5, 0, 7}
		// attend is an engine's attention prep, written once.
		attend := func(rs CacheRows, x []float32, kc, vc Cache) {
			kv := Strides{Heads: hkv, Head: hd, Token: row}
			rs.Prep(Step{
				Q: x, QS: Strides{Heads: hq, Head: hd, Token: row}, QW: qw,
				K: x[hq*hd:], KS: kv, KW: kw,
				V: x[(hq+hkv)*hd:], VS: kv,
				KCache: kc, VCache: vc, Slots: slots,
			}, pos)
		}
		cs := Strides{Heads: hkv, Head: hd, Token: hkv * hd}
		b := r.NewBatch(tokens)
		b.Set(pos)
		var qs [2][]float32
		var kcs, vcs [2][]uint16
		for i, rs := range []CacheRows{r.NewTable(64), b} {
			qs[i] = slices.Clone(x0)
			kcs[i], vcs[i] = make([]uint16, rows*cs.Token), make([]uint16, rows*cs.Token)
			attend(rs, qs[i], F16Cache(kcs[i], cs), F16Cache(vcs[i], cs))
		}
		if i := sameBits(qs[0], qs[1]); i >= 0 {
			t.Errorf("NormKind %q: value %d of the queries: a Table's Prep gives %v, a Batch's %v", p.NormKind, i, qs[0][i], qs[1][i])
		}
		if sameBits(qs[0], x0) < 0 {
			t.Errorf("NormKind %q: Prep left the queries as they were", p.NormKind)
		}
		if !slices.Equal(kcs[0], kcs[1]) || !slices.Equal(vcs[0], vcs[1]) {
			t.Errorf("NormKind %q: the caches a Table's Prep and a Batch's Prep write differ", p.NormKind)
		}
	}
}

// Batch.Set's capacity panic counts its tokens in English: "1 token".
func TestBatchSetCountsTokens(t *testing.T) {
	r := mustNew(t, refParams(refShapes[0], 10000))
	b := r.NewBatch(1)
	msg, panicked := catchPanic(func() { b.Set([]int32{1, 2}) })
	want := "Batch.Set: len(pos) = 2 (2 tokens): want at most the capacity, 1 token"
	if !panicked || !strings.Contains(msg, want) {
		t.Errorf("Batch.Set of 2 tokens into a capacity of 1: panic %q (%v), want %q", msg, panicked, want)
	}
}
