package rt

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The entry points of a multi-axis Rotary take each token's positions on
// every axis. These tests turn tokens whose axes differ (an image patch's
// t, h and w) through every entry point, on every backend, and compare the
// bits with ApplySeq on each head copied out (which verify's axes checks
// hold to their reference), and a text token (every axis at p) with a
// one-axis model at p.

// mrope is a three-axis model of the 64/64/neox reference shape (sections
// 11, 11, 10), with an rms/head QK-norm of ε 0.25.
func mrope(t *testing.T) *Rotary {
	p := refParams(refShapes[2], 10000)
	p.Axes, p.Axis = 3, make([]uint8, 32)
	for i := range p.Axis {
		p.Axis[i] = uint8(min(2, i/11))
	}
	p.NormKind, p.NormScope, p.NormEps = "rms", "head", 0.25
	return mustNew(t, p)
}

// patchPos draws n tokens' positions on 3 axes below max: in turn three
// different ones, two equal in each of the three ways (the first and the
// second, the first and the last, the last two), and text tokens (all three
// equal) two at consecutive positions, which the run-time may turn as one
// run of table rows.
func patchPos(rng *rand.Rand, n, max int) []int32 {
	pos := make([]int32, 0, 3*n)
	for j := range n {
		a, b, c := rng.IntN(max-1), rng.IntN(max-1), rng.IntN(max-1)
		for b == a {
			b = rng.IntN(max - 1)
		}
		for c == a || c == b {
			c = rng.IntN(max - 1)
		}
		switch j % 6 {
		case 1:
			b = a
		case 2:
			c = a
		case 3:
			b = c
		case 4:
			b, c = a, a
		case 5:
			a = int(pos[len(pos)-1]) + 1
			b, c = a, a
		}
		pos = append(pos, int32(a), int32(b), int32(c))
	}
	return pos
}

func randVec(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// seqHeads returns x with every head of view s over the tokens of pos
// turned by ApplySeq (ApplyInverseSeq) at its token's positions.
func seqHeads(tab *Table, x []float32, s Strides, pos []int32, inverse bool) []float32 {
	y := slices.Clone(x)
	hd, axes := tab.r.hd, tab.r.axes
	for j := range len(pos) / axes {
		for h := range s.Heads {
			o := j*s.Token + h*s.Head
			v := slices.Clone(y[o : o+hd])
			if inverse {
				tab.ApplyInverseSeq(v, pos[j*axes:(j+1)*axes])
			} else {
				tab.ApplySeq(v, pos[j*axes:(j+1)*axes])
			}
			copy(y[o:], v)
		}
	}
	return y
}

// normHeads returns x with every head of view s normalized by r's QK-norm
// alone (its normOnly kernel) with weights w.
func normHeads(r *Rotary, x []float32, s Strides, tokens int, w []float32) []float32 {
	y := slices.Clone(x)
	for j := range tokens {
		r.kern().normOnly[r.nv](y[j*s.Token:], s.Head, s.Heads, nil, w, r.p.NormEps)
	}
	return y
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// eachBackend runs f with each backend active.
func eachBackend(t *testing.T, f func(t *testing.T, name string)) {
	defer func() { active = &backends[0] }()
	for i := range backends {
		active = &backends[i]
		f(t, backends[i].name)
	}
}

func TestAxesEntryPoints(t *testing.T) {
	r := mrope(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const tokens, n = 12, 300
	tab := r.NewTable(n)
	hd := r.hd
	qs := Strides{Heads: 4, Head: hd + 3, Token: 4*(hd+3) + 5}
	ks := Strides{Heads: 2, Head: hd, Token: 2 * hd}
	pos := patchPos(rng, tokens, n)
	q0, k0 := randVec(rng, tokens*qs.Token), randVec(rng, tokens*ks.Token)
	qw, kw := randVec(rng, hd), randVec(rng, hd)
	b := r.NewBatch(tokens)
	b.Set(pos)
	eachBackend(t, func(t *testing.T, be string) {
		check := func(what string, got, want []float32) {
			t.Helper()
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("backend %s: %s: value %d = %v, want %v", be, what, i, got[i], want[i])
			}
		}
		wantQ, wantK := seqHeads(tab, q0, qs, pos, false), seqHeads(tab, k0, ks, pos, false)

		x := slices.Clone(q0)
		tab.ApplyStrided(x, qs, pos)
		check("Table.ApplyStrided", x, wantQ)
		x = slices.Clone(q0)
		b.ApplyStrided(x, qs, pos)
		check("Batch.ApplyStrided", x, wantQ)
		x = slices.Clone(q0)
		tab.ApplyInverseStrided(x, qs, pos)
		check("Table.ApplyInverseStrided", x, seqHeads(tab, q0, qs, pos, true))
		x = slices.Clone(q0)
		b.ApplyInverseStrided(x, qs, pos)
		check("Batch.ApplyInverseStrided", x, seqHeads(tab, q0, qs, pos, true))

		q, k := slices.Clone(q0), slices.Clone(k0)
		tab.ApplyQK(q, qs, k, ks, pos)
		check("Table.ApplyQK q", q, wantQ)
		check("Table.ApplyQK k", k, wantK)
		q, k = slices.Clone(q0), slices.Clone(k0)
		b.ApplyQK(q, qs, k, ks, pos)
		check("Batch.ApplyQK q", q, wantQ)
		check("Batch.ApplyQK k", k, wantK)

		// The norm alone, then the rotation: a float32 norm's bits are the
		// fused ApplyNormQK's.
		nq := seqHeads(tab, normHeads(r, q0, qs, tokens, qw), qs, pos, false)
		nk := seqHeads(tab, normHeads(r, k0, ks, tokens, kw), ks, pos, false)
		q, k = slices.Clone(q0), slices.Clone(k0)
		tab.ApplyNormQK(q, qs, qw, k, ks, kw, pos)
		check("Table.ApplyNormQK q", q, nq)
		check("Table.ApplyNormQK k", k, nk)
		q, k = slices.Clone(q0), slices.Clone(k0)
		b.ApplyNormQK(q, qs, qw, k, ks, kw, pos)
		check("Batch.ApplyNormQK q", q, nq)
		check("Batch.ApplyNormQK k", k, nk)

		// ApplyStore: the turned keys, stored.
		cs := Strides{Heads: 2, Head: hd, Token: 2 * hd}
		slots := []int64{4, -1, 0, 7, 2, 11, 9, -1, 1, 3, 12, 13}
		want := make([]uint16, 14*2*hd)
		r.Store(F16Cache(want, cs), slots, wantK, ks)
		got := make([]uint16, len(want))
		tab.ApplyStore(F16Cache(got, cs), slots, k0, ks, pos)
		if !slices.Equal(got, want) {
			t.Fatalf("backend %s: Table.ApplyStore of patch tokens differs from ApplySeq then Store", be)
		}
		clear(got)
		b.ApplyStore(F16Cache(got, cs), slots, k0, ks, pos)
		if !slices.Equal(got, want) {
			t.Fatalf("backend %s: Batch.ApplyStore of patch tokens differs from ApplySeq then Store", be)
		}

		// Prep into caches of two types: f16 keys, q8_0 values.
		v0 := randVec(rng, tokens*ks.Token)
		qc := Strides{Heads: 2, Head: r.CacheHead("q8_0"), Token: 2 * r.CacheHead("q8_0")}
		wantKC, wantVC := make([]uint16, 14*2*hd), make([]byte, 14*qc.Token)
		r.Store(F16Cache(wantKC, cs), slots, nk, ks)
		r.Store(Q80Cache(wantVC, qc), slots, v0, ks)
		for _, viaBatch := range []bool{false, true} {
			q, k, v := slices.Clone(q0), slices.Clone(k0), slices.Clone(v0)
			kc, vc := make([]uint16, len(wantKC)), make([]byte, len(wantVC))
			s := Step{Q: q, QS: qs, QW: qw, K: k, KS: ks, KW: kw, V: v, VS: ks,
				KCache: F16Cache(kc, cs), VCache: Q80Cache(vc, qc), Slots: slots}
			what := "Table.Prep"
			if viaBatch {
				what = "Batch.Prep"
				b.Prep(s, pos)
			} else {
				tab.Prep(s, pos)
			}
			check(what+" q", q, nq)
			check(what+" k (untouched)", k, k0)
			check(what+" v (untouched)", v, v0)
			if !slices.Equal(kc, wantKC) || !slices.Equal(vc, wantVC) {
				t.Fatalf("backend %s: %s of patch tokens: the caches differ from ApplyNormQK then Store", be, what)
			}
		}
	})
}

// TestAxesTextToken: a token at p on every axis has a one-axis model's bits
// at p, through every entry point that takes positions.
func TestAxesTextToken(t *testing.T) {
	r := mrope(t)
	p := r.Params()
	p.Axes, p.Axis = 1, nil
	text := mustNew(t, p)
	rng := rand.New(rand.NewPCG(3, 4))
	const tokens, n = 4, 5000
	hd := r.hd
	tab, ttab := r.NewTable(n), text.NewTable(n)
	qs := Strides{Heads: 3, Head: hd, Token: 3 * hd}
	ks := Strides{Heads: 1, Head: hd, Token: hd}
	pos1 := []int32{0, 4999, 17, 1234}
	pos3 := make([]int32, 0, 3*tokens)
	for _, p := range pos1 {
		pos3 = append(pos3, p, p, p)
	}
	q0, k0 := randVec(rng, tokens*qs.Token), randVec(rng, tokens*ks.Token)
	qw, kw := randVec(rng, hd), randVec(rng, hd)
	b, tb := r.NewBatch(tokens), text.NewBatch(tokens)
	b.Set(pos3)
	tb.Set(pos1)
	eachBackend(t, func(t *testing.T, be string) {
		q, k := slices.Clone(q0), slices.Clone(k0)
		tab.ApplyNormQK(q, qs, qw, k, ks, kw, pos3)
		wq, wk := slices.Clone(q0), slices.Clone(k0)
		ttab.ApplyNormQK(wq, qs, qw, wk, ks, kw, pos1)
		if sameBits(q, wq) >= 0 || sameBits(k, wk) >= 0 {
			t.Fatalf("backend %s: Table.ApplyNormQK: a text token of a three-axis model differs from the one-axis model", be)
		}
		q, k = slices.Clone(q0), slices.Clone(k0)
		b.ApplyQK(q, qs, k, ks, pos3)
		wq, wk = slices.Clone(q0), slices.Clone(k0)
		tb.ApplyQK(wq, qs, wk, ks, pos1)
		if sameBits(q, wq) >= 0 || sameBits(k, wk) >= 0 {
			t.Fatalf("backend %s: Batch.ApplyQK: a text token of a three-axis model differs from the one-axis model", be)
		}
		slots := []int64{0, 1, 2, 3}
		got, want := make([]byte, 4*r.CacheHead("e4m3")), make([]byte, 4*r.CacheHead("e4m3"))
		cs := Strides{Heads: 1, Head: hd, Token: hd}
		tab.ApplyStore(E4M3Cache(got, cs, 0.5), slots, k0, ks, pos3)
		ttab.ApplyStore(E4M3Cache(want, cs, 0.5), slots, k0, ks, pos1)
		if !slices.Equal(got, want) {
			t.Fatalf("backend %s: Table.ApplyStore: a text token of a three-axis model differs from the one-axis model", be)
		}
	})
}

// TestBatchPanicsName: a Batch's methods panic naming the method the caller
// called (not the Table form behind it) and the caller's values, before
// writing anything.
func TestBatchPanicsName(t *testing.T) {
	r := mrope(t)
	hd := r.hd
	b := r.NewBatch(4)
	b.Set([]int32{1, 2, 3, 4, 5, 6})
	s := Strides{Heads: 2, Head: hd, Token: 2 * hd}
	short := make([]float32, 2*s.Token-1)
	full := make([]float32, 2*s.Token)
	w := make([]float32, hd)
	cache := make([]uint16, 4*s.Token)
	for _, c := range []struct {
		fn    string
		call  func()
		words []string
	}{
		{"Batch.ApplyStrided", func() { b.ApplyStrided(short, s, b.Pos()) }, []string{"len = 255", "b.Len() = 2"}},
		{"Batch.ApplyInverseStrided", func() { b.ApplyInverseStrided(short, s, b.Pos()) }, []string{"len = 255"}},
		{"Batch.ApplyQK", func() { b.ApplyQK(slices.Clone(full), s, short, s, b.Pos()) }, []string{"ks", "len = 255"}},
		{"Batch.ApplyNormQK", func() { b.ApplyNormQK(slices.Clone(full), s, w[:hd-1], slices.Clone(full), s, w, b.Pos()) }, []string{"qw", "63"}},
		{"Batch.ApplyStore", func() { b.ApplyStore(F16Cache(cache, s), []int64{0, 4}, full, s, b.Pos()) }, []string{"slots[1] = 4"}},
		{"Batch.ApplySeq", func() { b.ApplySeq(short[:hd], b.Pos()) }, []string{"len(x) = 64"}},
		{"Batch.Prep", func() {
			b.Prep(Step{Q: slices.Clone(full), QS: s, QW: w, K: full, KS: s, KW: w, KCache: F16Cache(cache, s), Slots: []int64{0}}, b.Pos())
		}, []string{"len(s.Slots) = 1", "b.Len() = 2"}},
		{"Batch.Set", func() { b.Set([]int32{1, 2}) }, []string{"len(pos) = 2", "Axes = 3"}},
		{"Batch.ApplySeq", func() { b.ApplySeq(full, []int32{1, 2, 3}) }, []string{"len(pos) = 3", "b.Pos()", "6 of them"}},
		{"Batch.ApplyQK", func() { b.ApplyQK(slices.Clone(full), s, slices.Clone(full), s, []int32{1, 2, 3, 4, 6, 6}) }, []string{"pos[4] = 6", "pos[4] = 5", "b.Pos()"}},
	} {
		before := slices.Clone(cache)
		msg, panicked := catchPanic(c.call)
		if !panicked {
			t.Errorf("%s: no panic", c.fn)
			continue
		}
		if !strings.HasPrefix(msg, pkgName+"."+c.fn+": ") {
			t.Errorf("%s: panic %q does not begin with %q", c.fn, msg, pkgName+"."+c.fn+": ")
		}
		for _, wd := range c.words {
			if !strings.Contains(msg, wd) {
				t.Errorf("%s: panic %q does not say %q", c.fn, msg, wd)
			}
		}
		if !slices.Equal(cache, before) {
			t.Errorf("%s: panicked after writing the cache", c.fn)
		}
	}
	if b.Len() != 2 {
		t.Errorf("a Set that panicked changed the Batch: Len() = %d", b.Len())
	}
}
