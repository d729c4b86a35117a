package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Batch is the method set of a generated package's *Batch (docs/contract.md
// §12): the table rows of one step of batched decoding, token j at the
// position Set gave it.
type Batch[T Elem] interface {
	Set(pos []int32)
	Len() int
	ApplySeq(x []T)
	ApplyInverseSeq(x []T)
}

// Runtime describes a package's run-time parameters and its Batch
// (docs/contract.md §12). A 1-D package passes axis as nil; a multi-axis
// one passes RotaryDim/2 values (see Axes).
type Runtime[T Elem] struct {
	// NewTableParams builds a table from freqs (RotaryDim/2 values), attn
	// and axis for the positions [0, maxPos); NewTableRange for the
	// positions [start, start+n).
	NewTableParams func(freqs []float64, attn float64, axis []uint8, maxPos int) Table[T]
	NewTableRange  func(freqs []float64, attn float64, axis []uint8, start, n int) Table[T]
	// TableParams(n) returns the frequencies and the factor NewTable(n)
	// builds with.
	TableParams func(n int) (freqs []float64, attn float64)
	// NilTable is a nil *Table of the package, whose methods must panic
	// with a message.
	NilTable Table[T]
	// NewBatch builds a Batch for capacity tokens; when it is nil the
	// batch check fails and the cache and Prep batch checks log that and
	// do nothing.
	NewBatch func(freqs []float64, attn float64, axis []uint8, capacity int) Batch[T]
	// BatchApplyQK and BatchApplyStrided call a Batch's ApplyQK and
	// ApplyStrided, converting the Strides; when they are nil the batch
	// check leaves those forms out.
	BatchApplyQK      func(b Batch[T], q []T, qs Strides, k []T, ks Strides)
	BatchApplyStrided func(b Batch[T], x []T, s Strides)
}

// starter is the Start method of a generated *Table: its first position.
type starter interface{ Start() int }

// startOf returns tab's first position (0 for a table without Start).
func startOf[T Elem](tab Table[T]) int {
	if s, ok := tab.(starter); ok {
		return s.Start()
	}
	return 0
}

// paramsOK reports whether the kernel describes its run-time parameters.
func (s *suite[T]) paramsOK() bool {
	r := s.k.Runtime
	return r != nil && r.NewTableParams != nil && r.NewTableRange != nil && r.TableParams != nil
}

// runParams runs the run-time parameter checks (docs/contract.md §12), each
// as a subtest.
func runParams[T Elem](t *testing.T, s *suite[T]) {
	t.Helper()
	if !s.paramsOK() {
		t.Errorf("the kernel describes no run-time parameters (Runtime.NewTableParams, NewTableRange, TableParams): ropegen sets them")
		return
	}
	for _, c := range []struct {
		name string
		f    func(tb, *suite[T])
	}{
		{"default", checkParamsDefault[T]},
		{"range", checkParamsRange[T]},
		{"far", checkParamsFar[T]},
		{"custom", checkParamsCustom[T]},
		{"panics", checkParamsPanics[T]},
		{"batch", checkBatch[T]},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, s) })
	}
}

// restore makes the default backend active again.
func (s *suite[T]) restore() {
	if len(s.k.Backends) > 0 {
		s.k.Backends[0].Use()
	}
}

// paramsOf returns what TableParams(n) gives, with the kernel's axis map.
func (s *suite[T]) paramsOf(n int) (freqs []float64, attn float64, axis []uint8) {
	freqs, attn = s.k.Runtime.TableParams(n)
	return freqs, attn, s.k.axisMap()
}

// tablesAgree compares tables a and b, which must hold the same rows at the
// positions pos (absolute, sorted or not), through every entry point the
// kernel has, on every backend: a special-mix input turned at each position
// by Apply and ApplyInverse, and by the sequence, strided, QK and multi-axis
// forms at those positions (head-major views walk runs of consecutive
// positions, the rows kernels). It returns a description of the first
// difference, or "".
func (s *suite[T]) tablesAgree(a, b Table[T], pos []int32, rng *rand.Rand) string {
	bs := s.backendsOrOnly()
	for _, f := range s.agreeForms(pos, rng) {
		x := s.specialsOf(f.n, rng.Uint64())
		var ref []T
		for i, be := range bs {
			be.Use()
			ya, yb := slices.Clone(x), slices.Clone(x)
			f.call(a, ya)
			f.call(b, yb)
			if i := s.firstDiff(ya, yb); i >= 0 {
				return fmt.Sprintf("%s (backend %s) at positions %v: index %d: %s vs %s", f.name, be.Name, short(pos), i, s.c.show(ya[i]), s.c.show(yb[i]))
			}
			if i == 0 {
				ref = ya
			} else if j := s.firstDiff(ya, ref); j >= 0 {
				return fmt.Sprintf("%s: backend %s differs from %s at index %d", f.name, be.Name, bs[0].Name, j)
			}
		}
	}
	s.restore()
	return ""
}

// agreeForm is one way tablesAgree calls a table: on n values of x.
type agreeForm[T Elem] struct {
	name string
	n    int
	call func(tab Table[T], x []T)
}

// agreeForms are the calls tablesAgree makes at the positions pos: Apply
// and ApplyInverse at each of the first 8, ApplySeq and ApplyInverseSeq on
// 3 heads per token, and those the kernel has of ApplyStrided
// (token-major with a gap; head-major, where runs of consecutive positions
// go to the rows kernels), ApplyInverseStrided, ApplyQK (a fused row;
// head-major) and the multi-axis forms (every third token a text token).
func (s *suite[T]) agreeForms(pos []int32, rng *rand.Rand) []agreeForm[T] {
	hd, tokens, heads := s.hd, len(pos), 3
	var forms []agreeForm[T]
	for _, p := range pos[:min(len(pos), 8)] {
		p := int(p)
		forms = append(forms,
			agreeForm[T]{"Apply", 2 * hd, func(tab Table[T], x []T) { tab.Apply(x, p) }},
			agreeForm[T]{"ApplyInverse", 2 * hd, func(tab Table[T], x []T) { tab.ApplyInverse(x, p) }})
	}
	forms = append(forms,
		agreeForm[T]{"ApplySeq", tokens * heads * hd, func(tab Table[T], x []T) { tab.ApplySeq(x, pos) }},
		agreeForm[T]{"ApplyInverseSeq", tokens * heads * hd, func(tab Table[T], x []T) { tab.ApplyInverseSeq(x, pos) }})
	if st := s.k.Strided; st != nil {
		tm := Strides{Heads: heads, Head: hd + 2, Token: heads*(hd+2) + 1}
		hm := Strides{Heads: heads, Head: tokens*hd + 3, Token: hd}
		nt, nh := extent(tm, tokens, hd), extent(hm, tokens, hd)
		row := (4 + 2*2) * hd
		qs := Strides{Heads: 4, Head: hd, Token: row}
		ks := Strides{Heads: 2, Head: hd, Token: row}
		forms = append(forms,
			agreeForm[T]{"ApplyStrided token-major", nt, func(tab Table[T], x []T) { st.ApplyStrided(tab, x, tm, pos) }},
			agreeForm[T]{"ApplyStrided head-major", nh, func(tab Table[T], x []T) { st.ApplyStrided(tab, x, hm, pos) }},
			agreeForm[T]{"ApplyInverseStrided head-major", nh, func(tab Table[T], x []T) { st.ApplyInverseStrided(tab, x, hm, pos) }},
			agreeForm[T]{"ApplyQK fused", tokens * row, func(tab Table[T], x []T) { st.ApplyQK(tab, x, qs, x[4*hd:], ks, pos) }},
			agreeForm[T]{"ApplyQK head-major", 2 * nh, func(tab Table[T], x []T) { st.ApplyQK(tab, x[:nh], hm, x[nh:], hm, pos) }})
	}
	if ax := s.k.Axes; ax != nil {
		ap := make([]int32, tokens*ax.N)
		for j := range tokens {
			for a := range ax.N {
				ap[j*ax.N+a] = pos[rng.IntN(tokens)]
				if j%3 == 0 { // a text token
					ap[j*ax.N+a] = pos[j]
				}
			}
		}
		forms = append(forms,
			agreeForm[T]{"ApplyAxes", tokens * 2 * hd, func(tab Table[T], x []T) { ax.ApplySeq(tab, x, ap) }},
			agreeForm[T]{"ApplyInverseAxes", tokens * 2 * hd, func(tab Table[T], x []T) { ax.ApplyInverseSeq(tab, x, ap) }})
	}
	return forms
}

// short shows at most 12 positions.
func short(pos []int32) []int32 {
	if len(pos) > 12 {
		return pos[:12]
	}
	return pos
}

// rangePositions draws n positions in [start, start+m): runs of consecutive
// positions longer than any walk's run (so the rows kernels see them), then
// scattered ones, the range's first and last included.
func rangePositions(rng *rand.Rand, start, m, n int) []int32 {
	pos := make([]int32, 0, n)
	run := min(m, 20)
	first := start + rng.IntN(m-run+1)
	for i := range run {
		pos = append(pos, int32(first+i))
	}
	pos = append(pos, int32(start), int32(start+m-1))
	for len(pos) < n {
		pos = append(pos, int32(start+rng.IntN(m)))
	}
	return pos
}

// checkParamsDefault: NewTableParams(TableParams(n), n) is NewTable(n), bit
// for bit through every entry point, for n below and (longrope, dynamic NTK)
// above OrigCtx.
func checkParamsDefault[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed(), 12))
	ns := []int{1, 97}
	if s.k.OrigCtx > 0 {
		ns = append(ns, min(s.k.OrigCtx, tableRows), s.k.OrigCtx+1)
	}
	for _, n := range ns {
		if n > 1<<17 {
			continue // a table past 128Ki positions is too big to build twice here
		}
		f, a, ax := s.paramsOf(n)
		tp := s.k.Runtime.NewTableParams(f, a, ax, n)
		tn := s.k.NewTable(n)
		if tp.Len() != n || startOf(tp) != 0 {
			t.Fatalf("NewTableParams(TableParams(%d), %d): Len %d, Start %d", n, n, tp.Len(), startOf(tp))
		}
		if d := s.tablesAgree(tp, tn, rangePositions(rng, 0, n, 40), rng); d != "" {
			t.Fatalf("NewTableParams(TableParams(%d), %d) and NewTable(%d) differ: %s", n, n, n, d)
		}
	}
	if f, a, _ := s.paramsOf(1); !slices.Equal(f, s.k.Freqs) || a != s.k.AttentionFactor {
		t.Fatalf("TableParams(1) = %v, A %v: want the package's Freqs and AttentionFactor", short32(f), a)
	}
}

// short32 shows at most 4 frequencies.
func short32(f []float64) []float64 { return f[:min(len(f), 4)] }

// checkParamsRange: a range table answers every entry point with a full
// table's bits at the same absolute positions, for ranges from position 0
// to a few thousand, and panics just outside its range.
func checkParamsRange[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed(), 13))
	for _, c := range []struct{ start, n int }{{0, 5}, {1, 1}, {7, 33}, {1000, 64}, {tableRows - 40, 40}} {
		full := c.start + c.n
		f, a, ax := s.paramsOf(full)
		r := s.k.Runtime.NewTableRange(f, a, ax, c.start, c.n)
		if r.Len() != c.n || startOf(r) != c.start {
			t.Fatalf("NewTableRange(…, %d, %d): Len %d, Start %d", c.start, c.n, r.Len(), startOf(r))
		}
		b := s.k.NewTable(full)
		if d := s.tablesAgree(r, b, rangePositions(rng, c.start, c.n, 48), rng); d != "" {
			t.Fatalf("NewTableRange(…, %d, %d) and NewTable(%d) differ: %s", c.start, c.n, full, d)
		}
		for _, p := range []int{c.start - 1, c.start + c.n} {
			if p < 0 {
				continue
			}
			if d := s.rangeEdges(r, c.start, c.n, p); d != "" {
				t.Fatalf("%s", d)
			}
		}
	}
}

// rangeEdges returns "" if Apply and ApplySeq at p, outside the range
// table r of [start, start+n), panic naming the method, p and (Apply) the
// range's start, with x unchanged; else what is wrong.
func (s *suite[T]) rangeEdges(r Table[T], start, n, p int) string {
	x := newBuf("x", s.specialsOf(s.hd, 5), inPlace)
	one := &call{what: fmt.Sprintf("Apply on a range table [%d, %d)", start, start+n), args: []arg{x}, run: func() { r.Apply(x.cur, p) }}
	if d := bad(one, fmt.Sprintf("pos %d", p), panicWant{fn: "Apply", values: []int{p}, numbers: []int{start}}).check(); d != "" {
		return d
	}
	x2 := newBuf("x", s.specialsOf(2*s.hd, 6), inPlace)
	seq := &call{what: fmt.Sprintf("ApplySeq on a range table [%d, %d)", start, start+n), args: []arg{x2},
		run: func() { r.ApplySeq(x2.cur, []int32{int32(start), int32(p)}) }}
	return bad(seq, fmt.Sprintf("%s = %d", s.posAt(1), p), panicWant{fn: "ApplySeq", words: []string{s.posAt(1)}, values: []int{p}}).check()
}

// checkParamsFar: a range table far out (10⁶, and past 2³⁰) gives Rotate's
// bits, which are a full table's (consistency/bigtable), through Apply,
// ApplyInverse, ApplySeq and the head-major strided walk, on every backend.
func checkParamsFar[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed(), 14))
	bs := s.backendsOrOnly()
	defer s.restore()
	for _, start := range []int{1_000_000, 1<<30 + 12345} {
		n := 64
		r := s.k.Runtime.NewTableRange(s.k.Freqs, s.k.AttentionFactor, s.k.axisMap(), start, n)
		pos := rangePositions(rng, start, n, 40)
		for _, be := range bs {
			be.Use()
			for _, p := range pos {
				x := make([]T, 2*s.hd)
				for i := range x {
					x[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
				}
				for _, inverse := range []bool{false, true} {
					yt, yr := slices.Clone(x), slices.Clone(x)
					if inverse {
						r.ApplyInverse(yt, int(p))
						s.k.RotateInverse(yr, int(p))
					} else {
						r.Apply(yt, int(p))
						s.k.Rotate(yr, int(p))
					}
					if i := s.firstDiff(yt, yr); i >= 0 {
						t.Fatalf("backend %s: range table at %d, inverse %v: index %d: %s, Rotate %s", be.Name, p, inverse, i, s.c.show(yt[i]), s.c.show(yr[i]))
					}
				}
			}
			if s.k.Strided == nil || s.k.Strided.ApplyStrided == nil {
				continue
			}
			// Head-major, consecutive positions: the rows kernels.
			hm := Strides{Heads: 2, Head: len(pos)*s.hd + 1, Token: s.hd}
			x := make([]T, extent(hm, len(pos), s.hd))
			for i := range x {
				x[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
			}
			y := slices.Clone(x)
			s.k.Strided.ApplyStrided(r, y, hm, pos)
			for j, p := range pos {
				for h := range hm.Heads {
					at := j*hm.Token + h*hm.Head
					want := slices.Clone(x[at : at+s.hd])
					s.k.Rotate(want, int(p))
					if i := s.firstDiff(y[at:at+s.hd], want); i >= 0 {
						t.Fatalf("backend %s: head-major ApplyStrided on a range table at %d (token %d, head %d): index %d differs from Rotate", be.Name, p, j, h, i)
					}
				}
			}
		}
	}
}

// checkParamsCustom: a table from other params (random frequencies, factor
// and, multi-axis, axis map) is accurate against the float64 reference for
// those params, and every backend gives the same bits.
func checkParamsCustom[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed(), 15))
	defer s.restore()
	for round := range 6 {
		cs := s.customParams(round, rng)
		freqs, attn, axis := cs.k.Freqs, cs.attn, cs.k.axisMap()
		start, n := rng.IntN(1<<20), 50
		tab := s.k.Runtime.NewTableRange(freqs, attn, axis, start, n)
		for _, be := range s.backendsOrOnly() {
			be.Use()
			if d := cs.customAccurate(tab, start, n, rng); d != "" {
				t.Fatalf("backend %s, custom params (round %d, A %v, axis map %v): %s", be.Name, round, attn, axis, d)
			}
		}
		// Every backend the same bits, through every entry point: a range
		// table of these params nearer 0 against a full one.
		start = rng.IntN(2000)
		tab = s.k.Runtime.NewTableRange(freqs, attn, axis, start, n)
		twin := s.k.Runtime.NewTableParams(freqs, attn, axis, start+n)
		if d := s.tablesAgree(tab, twin, rangePositions(rng, start, n, 30), rng); d != "" {
			t.Fatalf("custom params (round %d): range table and NewTableParams differ: %s", round, d)
		}
	}
}

// customParams returns s with the params of round: random frequencies
// (round 0: all zero, no rotation at all; every seventh tiny), a factor
// (from round 2 on) and, multi-axis, an axis map.
func (s *suite[T]) customParams(round int, rng *rand.Rand) *suite[T] {
	freqs := make([]float64, s.hf)
	for i := range freqs {
		switch {
		case round == 0:
			freqs[i] = 0
		case i%7 == 3:
			freqs[i] = rng.Float64() * 1e-6
		default:
			freqs[i] = rng.Float64() * 1.5
		}
	}
	attn := 1.0
	if round > 1 {
		attn = 0.5 + rng.Float64()
	}
	cs := *s
	cs.k.Freqs, cs.k.AttentionFactor, cs.attn = freqs, attn, attn
	if s.k.Axes != nil {
		ax := *s.k.Axes
		ax.Axis = make([]uint8, s.hf)
		for i := range ax.Axis {
			ax.Axis[i] = uint8(rng.IntN(s.k.Axes.N))
		}
		cs.k.Axes = &ax
	}
	return &cs
}

// customAccurate returns "" if the range table tab of [start, start+n),
// made with cs's params, is accurate against the float64 reference for
// them at 8 positions (forward and inverse) and, multi-axis, for 8 tokens
// with a position per axis; else what is off.
func (cs *suite[T]) customAccurate(tab Table[T], start, n int, rng *rand.Rand) string {
	normals := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = cs.normal(rng.Uint64())
		}
		return x
	}
	for range 8 {
		p, x := start+rng.IntN(n), normals(2*cs.hd)
		for _, inverse := range []bool{false, true} {
			if msg := cs.offReference(tab, x, p, inverse, cs.k.Freqs, nil); msg != "" {
				return msg
			}
		}
	}
	for i := 0; cs.k.Axes != nil && i < 8; i++ {
		ps, ap := make([]int, cs.k.Axes.N), make([]int32, cs.k.Axes.N)
		for a := range ps {
			ps[a] = start + rng.IntN(n)
			ap[a] = int32(ps[a])
		}
		x := normals(cs.hd)
		y := slices.Clone(x)
		cs.k.Axes.ApplySeq(tab, y, ap)
		ref, bound := cs.axesRef(x, ps, false)
		for i := range y {
			if d := math.Abs(cs.c.toF64(y[i]) - ref[i]); !(d <= bound[i]) {
				return fmt.Sprintf("positions %v: index %d: %s, reference %g, error %g > bound %g", ps, i, cs.c.show(y[i]), ref[i], d, bound[i])
			}
		}
	}
	return ""
}

// checkParamsPanics: invalid params, ranges and a nil table panic, naming
// the function and the value.
func checkParamsPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	k := &s.k
	good := slices.Clone(k.Freqs)
	with := func(i int, v float64) []float64 { f := slices.Clone(good); f[i] = v; return f }
	type pcase struct {
		name  string
		call  func()
		words []string
	}
	last := s.hf - 1
	cases := []pcase{
		// New(Params) refuses bad numbers with an error naming the field;
		// NewTableParams and NewTableRange panic with it.
		{"NaN θ", func() { k.Runtime.NewTableParams(with(last, math.NaN()), 1, k.axisMap(), 4) }, []string{"New", fmt.Sprintf("Freqs[%d]", last), "NaN"}},
		{"negative θ", func() { k.Runtime.NewTableParams(with(0, -0.5), 1, k.axisMap(), 4) }, []string{"New", "Freqs[0]", "-0.5"}},
		{"infinite θ", func() { k.Runtime.NewTableRange(with(0, math.Inf(1)), 1, k.axisMap(), 0, 4) }, []string{"New", "Freqs[0]", "+Inf"}},
		{"overflowing angle", func() { k.Runtime.NewTableRange(with(0, 1e300), 1, k.axisMap(), 1<<30, 2) }, []string{"NewTableRange", "Freqs[0]", "1e+300"}},
		{"zero A", func() { k.Runtime.NewTableParams(good, 0, k.axisMap(), 4) }, []string{"New", "Attn", "0"}},
		{"NaN A", func() { k.Runtime.NewTableRange(good, math.NaN(), k.axisMap(), 3, 4) }, []string{"New", "Attn", "NaN"}},
		{"negative maxPos", func() { k.Runtime.NewTableParams(good, 1, k.axisMap(), -1) }, []string{"NewTable", "-1"}},
		{"negative start", func() { k.Runtime.NewTableRange(good, 1, k.axisMap(), -2, 4) }, []string{"NewTableRange", "start", "-2"}},
		{"negative n", func() { k.Runtime.NewTableRange(good, 1, k.axisMap(), 2, -4) }, []string{"NewTableRange", "-4"}},
		{"overflowing range", func() { k.Runtime.NewTableRange(good, 1, k.axisMap(), math.MaxInt-1, 4) }, []string{"NewTableRange", "start"}},
	}
	if k.Axes != nil {
		bad := slices.Clone(k.axisMap())
		bad[2] = uint8(k.Axes.N)
		cases = append(cases, pcase{"axis out of range", func() { k.Runtime.NewTableParams(good, 1, bad, 4) }, []string{"New", "Axis[2]", "want < Axes"}})
	}
	if k.Runtime.NilTable != nil {
		x := make([]T, s.hd)
		cases = append(cases,
			pcase{"nil Apply", func() { k.Runtime.NilTable.Apply(x, 0) }, []string{"Apply", "nil"}},
			pcase{"nil ApplySeq", func() { k.Runtime.NilTable.ApplySeq(x, []int32{0}) }, []string{"ApplySeq", "nil"}},
			pcase{"nil Len", func() { k.Runtime.NilTable.Len() }, []string{"Len", "nil"}})
		if k.Strided != nil && k.Strided.ApplyStrided != nil {
			cases = append(cases, pcase{"nil ApplyStrided", func() {
				k.Strided.ApplyStrided(k.Runtime.NilTable, x, Strides{Heads: 1, Head: s.hd, Token: s.hd}, []int32{0})
			}, []string{"ApplyStrided", "nil"}})
		}
	} else {
		t.Errorf("the kernel has no NilTable: a nil *Table's panic is unchecked")
	}
	for _, c := range cases {
		// The words that name an entry point must name it as a word.
		var want panicWant
		for _, w := range c.words {
			if strings.Contains(w, "Apply") {
				want.fields = append(want.fields, w)
			} else {
				want.words = append(want.words, w)
			}
		}
		if d := bad(&call{what: c.name, run: c.call}, "", want).check(); d != "" {
			t.Errorf("%s", d)
		}
	}
}

// checkBatch: a Batch's rows are Rotate's at the positions Set gives, through
// ApplySeq, ApplyInverseSeq and (when described) ApplyQK and ApplyStrided,
// on every backend, across Sets of different lengths; Set panics on too many
// tokens or a negative position.
func checkBatch[T Elem](t tb, s *suite[T]) {
	t.Helper()
	k := &s.k
	if k.Runtime.NewBatch == nil {
		t.Errorf("the kernel describes no Runtime.NewBatch")
		return
	}
	defer s.restore()
	rng := rand.New(rand.NewPCG(seed(), 16))
	b := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), 9)
	for _, be := range s.backendsOrOnly() {
		be.Use()
		for _, n := range []int{3, 9, 1, 0, 7} {
			pos := make([]int32, n)
			for j := range pos {
				pos[j] = int32(rng.IntN(1 << 30))
				if j%3 == 1 {
					pos[j] = int32(rng.IntN(64))
				}
			}
			b.Set(pos)
			if b.Len() != n {
				t.Fatalf("Batch.Set(%d positions): Len %d", n, b.Len())
			}
			if d := s.batchSeqAgrees(b, pos, rng); d != "" {
				t.Fatalf("backend %s: %s", be.Name, d)
			}
			if d := s.batchQKAgrees(b, pos, rng); d != "" {
				t.Fatalf("backend %s: %s", be.Name, d)
			}
		}
	}
	checkBatchSet(t, s, b)
}

// rotated returns x with token j (len(x)/len(pos) values) turned by Rotate
// (RotateInverse) at pos[j].
func (s *suite[T]) rotated(x []T, pos []int32, inverse bool) []T {
	w := slices.Clone(x)
	if len(pos) == 0 {
		return w
	}
	tok := len(x) / len(pos)
	for j, p := range pos {
		if inverse {
			s.k.RotateInverse(w[j*tok:(j+1)*tok], int(p))
		} else {
			s.k.Rotate(w[j*tok:(j+1)*tok], int(p))
		}
	}
	return w
}

// batchSeqAgrees returns "" if the Batch b, Set to pos, gives Rotate's bits
// through ApplySeq and ApplyInverseSeq on two heads per token, else what
// differs.
func (s *suite[T]) batchSeqAgrees(b Batch[T], pos []int32, rng *rand.Rand) string {
	x := s.specialsOf(len(pos)*2*s.hd, rng.Uint64())
	for _, inverse := range []bool{false, true} {
		y := slices.Clone(x)
		if inverse {
			b.ApplyInverseSeq(y)
		} else {
			b.ApplySeq(y)
		}
		if i := s.firstDiff(y, s.rotated(x, pos, inverse)); i >= 0 {
			return fmt.Sprintf("Batch at %v, inverse %v: index %d differs from Rotate", short(pos), inverse, i)
		}
	}
	return ""
}

// batchQKAgrees returns "" if, on a fused row of 2 q heads then 2 k heads
// per token, the Batch's ApplyQK, ApplyNormQK and ApplyStrided (those the
// kernel describes) give Rotate's bits (ApplyNormQK: Table.ApplyNormQK's
// on one-position tables), else what differs.
func (s *suite[T]) batchQKAgrees(b Batch[T], pos []int32, rng *rand.Rand) string {
	k := &s.k
	if k.Runtime.BatchApplyQK == nil || len(pos) == 0 {
		return ""
	}
	row := 4 * s.hd
	q := s.specialsOf(len(pos)*row, rng.Uint64())
	w := s.rotated(q, pos, false)
	y := slices.Clone(q)
	qs := Strides{Heads: 2, Head: s.hd, Token: row}
	k.Runtime.BatchApplyQK(b, y, qs, y[2*s.hd:], qs)
	if i := s.firstDiff(y, w); i >= 0 {
		return fmt.Sprintf("Batch.ApplyQK at %v: index %d differs from Rotate", short(pos), i)
	}
	if k.Norm != nil {
		if msg := s.batchNormAgrees(b, pos, q, rng); msg != "" {
			return fmt.Sprintf("Batch.ApplyNormQK at %v: %s", short(pos), msg)
		}
	}
	if k.Runtime.BatchApplyStrided != nil {
		y = slices.Clone(q)
		k.Runtime.BatchApplyStrided(b, y, Strides{Heads: 4, Head: s.hd, Token: row})
		if i := s.firstDiff(y, w); i >= 0 {
			return fmt.Sprintf("Batch.ApplyStrided at %v: index %d differs from Rotate", short(pos), i)
		}
	}
	return ""
}

// checkBatchSet checks that the Batch b (capacity 9) panics on Set with
// too many tokens or a negative position, naming Set and the value.
func checkBatchSet[T Elem](t tb, s *suite[T], b Batch[T]) {
	t.Helper()
	for _, c := range []struct {
		name  string
		pos   []int32
		words []string
	}{
		{"too many positions", make([]int32, 10), []string{fmt.Sprintf("len(pos) = %d", s.posLen(10)), "9"}},
		{"a negative position", []int32{0, -3}, []string{s.posAt(1) + " = -3"}},
	} {
		set := &call{what: "Batch.Set", run: func() { b.Set(c.pos) }}
		if d := bad(set, c.name, panicWant{fn: "Set", words: c.words}).check(); d != "" {
			t.Errorf("%s", d)
		}
	}
}

// offReference turns x by tab at p (inverse: ApplyInverse) and compares it
// with the float64 reference for freqs and s's attention factor, the bound
// widened by slack when it is not nil; it returns the first index out of
// bounds, described, or "".
func (s *suite[T]) offReference(tab Table[T], x []T, p int, inverse bool, freqs []float64, slack func(bound []float64)) string {
	y := slices.Clone(x)
	if inverse {
		tab.ApplyInverse(y, p)
	} else {
		tab.Apply(y, p)
	}
	ref, bound := s.refBoundFreqs(x, p, inverse, freqs)
	if slack != nil {
		slack(bound)
	}
	for j := range y {
		if d := math.Abs(s.c.toF64(y[j]) - ref[j]); !(d <= bound[j]) {
			return fmt.Sprintf("inverse=%v at pos %d, index %d: %s, reference %.17g: error %.3g > bound %.3g",
				inverse, p, j%s.hd, s.c.show(y[j]), ref[j], d, bound[j])
		}
	}
	return ""
}

// batchNormAgrees checks Batch.ApplyNormQK on a fused row of 2 q and 2 k
// heads per token (q holds the rows) against Table.ApplyNormQK token by
// token on a one-position range table at that token's position: it returns
// a description of the first difference, or "".
func (s *suite[T]) batchNormAgrees(b Batch[T], pos []int32, q []T, rng *rand.Rand) string {
	n := s.k.Norm
	hd, row := s.hd, 4*s.hd
	qs := Strides{Heads: 2, Head: hd, Token: row}
	wn := hd
	if n.Scope == "token" {
		wn = 2 * hd
	}
	w32, w64 := make([]float32, wn), make([]float64, wn)
	for i := range w32 {
		w32[i] = float32(0.5 + rng.Float64())
		w64[i] = float64(w32[i])
	}
	if n.Kind == "l2" {
		w32, w64 = nil, nil
	}
	call := func(y []T) { // the batch
		if n.BatchApplyNormQK64 != nil {
			n.BatchApplyNormQK64(b, y, qs, w64, y[2*hd:], qs, w64)
		} else {
			n.BatchApplyNormQK32(b, y, qs, w32, y[2*hd:], qs, w32)
		}
	}
	one := func(tab Table[T], y []T, p int32) { // one token, a table
		ps := []int32{p}
		if n.ApplyNormQK64 != nil {
			n.ApplyNormQK64(tab, y, qs, w64, y[2*hd:], qs, w64, ps)
		} else {
			n.ApplyNormQK32(tab, y, qs, w32, y[2*hd:], qs, w32, ps)
		}
	}
	if n.BatchApplyNormQK32 == nil && n.BatchApplyNormQK64 == nil {
		return "the kernel's Norm describes no BatchApplyNormQK"
	}
	got, want := slices.Clone(q), slices.Clone(q)
	call(got)
	for j, p := range pos {
		tab := s.k.Runtime.NewTableRange(s.k.Freqs, s.k.AttentionFactor, s.k.axisMap(), int(p), 1)
		one(tab, want[j*row:(j+1)*row], p)
	}
	if i := s.firstDiff(got, want); i >= 0 {
		return fmt.Sprintf("token %d, index %d: %s, Table.ApplyNormQK on a range table gives %s", i/row, i%row, s.c.show(got[i]), s.c.show(want[i]))
	}
	return ""
}
