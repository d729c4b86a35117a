package rt

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteApart marks every element each head of the view covers (offset by
// from) in used and reports whether one was covered twice, or one fell
// outside [0, len(used)).
func bruteMark(used []int, s Strides, from, tokens, headDim int) (overlap, outside bool) {
	for j := range tokens {
		for h := range s.Heads {
			for e := range headDim {
				i := from + j*s.Token + h*s.Head + e
				if i < 0 || i >= len(used) {
					outside = true
					continue
				}
				used[i]++
				if used[i] > 1 {
					overlap = true
				}
			}
		}
	}
	return overlap, outside
}

func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = r.(string)
		}
	}()
	f()
	return ""
}

// panicSays reports whether f panicked, and fails t (naming what) unless
// it did with a message saying every one of words.
func panicSays(t *testing.T, what string, f func(), words ...string) bool {
	t.Helper()
	msg := panics(f)
	if msg == "" {
		t.Errorf("%s: no panic", what)
		return false
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
	return true
}

// checkView must accept exactly the views whose heads are disjoint and lie
// inside the slice: compared with marking every element, on every small view.
func TestCheckViewAgainstBruteForce(t *testing.T) {
	const n = 40
	for headDim := 1; headDim <= 4; headDim++ {
		for heads := 1; heads <= 4; heads++ {
			for head := 1; head <= 12; head++ {
				for token := 1; token <= 16; token++ {
					for tokens := 0; tokens <= 4; tokens++ {
						s := Strides{heads, head, token}
						used := make([]int, n)
						overlap, outside := bruteMark(used, s, 0, tokens, headDim)
						msg := panics(func() { checkView("F", "s", s, n, tokens, headDim, "len(pos)") })
						if want := overlap || outside; want != (msg != "") {
							t.Fatalf("checkView(%+v, tokens %d, HeadDim %d): panic %q; brute force: overlap %v, outside %v", s, tokens, headDim, msg, overlap, outside)
						}
						if outside && !strings.Contains(msg, "past len") || !outside && overlap && !strings.Contains(msg, "overlap") {
							t.Fatalf("checkView(%+v, tokens %d, HeadDim %d): message %q", s, tokens, headDim, msg)
						}
					}
				}
			}
		}
	}
}

func TestCheckViewMessages(t *testing.T) {
	for _, c := range []struct {
		s    Strides
		want string
	}{
		{Strides{0, 4, 8}, "rt.Table.F: qs.Heads = 0: want qs.Heads > 0"},
		{Strides{1, -4, 8}, "rt.Table.F: qs.Head = -4: want qs.Head > 0"},
		{Strides{1, 4, 0}, "rt.Table.F: qs.Token = 0: want qs.Token > 0"},
		{Strides{2, 3, 8}, "rt.Table.F: qs = {Heads:2 Head:3 Token:8} with len(pos) = 2: heads overlap (the heads at 0 and 3, HeadDim = 4)"},
		{Strides{2, 4, 8}, ""},
		{Strides{2, 4, 9}, "rt.Table.F: qs = {Heads:2 Head:4 Token:9} with len(pos) = 2: the last head ends at 17, past len = 16"},
		{Strides{3, 1 << 62, 8}, "the last head ends at an index beyond the int range, past len = 16"},
	} {
		msg := panics(func() { checkView("Table.F", "qs", c.s, 16, 2, 4, "len(pos)") })
		if c.want == "" && msg != "" || !strings.Contains(msg, c.want) {
			t.Errorf("checkView(%+v): panic %q, want %q", c.s, msg, c.want)
		}
	}
}

// checkApart must panic exactly when a head of one view overlaps a head of
// the other, on random views in one buffer.
func TestCheckApartAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200
	for range 20000 {
		headDim, tokens := 1+r.IntN(4), 1+r.IntN(3)
		view := func() Strides { return Strides{1 + r.IntN(3), 1 + r.IntN(10), 1 + r.IntN(30)} }
		a, b := view(), view()
		if r.IntN(2) == 0 {
			b.Token = a.Token // the fused-QKV shape takes the fast path
		}
		delta := r.IntN(60) - 20
		ua, ub := make([]int, 3*n), make([]int, 3*n)
		oa, _ := bruteMark(ua, a, n, tokens, headDim)
		ob, _ := bruteMark(ub, b, n+delta, tokens, headDim)
		if oa || ob {
			continue // checkView rejects these first
		}
		cross := false
		for i := range ua {
			cross = cross || ua[i] > 0 && ub[i] > 0
		}
		msg := panics(func() { checkApart("F", "q", "qs", a, "k", "ks", b, delta, tokens, headDim) })
		if cross != (msg != "") {
			t.Fatalf("checkApart(%+v, %+v, delta %d, tokens %d, HeadDim %d): panic %q, brute force overlap %v", a, b, delta, tokens, headDim, msg, cross)
		}
	}
}

func TestSharedOffset(t *testing.T) {
	buf := make([]float32, 100)
	for _, c := range []struct {
		a, b   []float32
		d      int
		shared bool
	}{
		{buf[:50], buf[50:], 0, false},
		{buf[:51], buf[50:], 50, true},
		{buf[50:], buf[:51], -50, true},
		{buf[10:20], buf[10:20], 0, true},
		{buf[:0], buf, 0, false},
		{buf, make([]float32, 5), 0, false},
	} {
		d, ok := sharedOffset("F", "q", "k", c.a, c.b)
		if d != c.d || ok != c.shared {
			t.Errorf("sharedOffset = %d, %v; want %d, %v", d, ok, c.d, c.shared)
		}
	}
}

// smallView must vouch only for views checkView accepts, and for every
// small token-major view that fits.
func TestSmallViewImpliesCheckView(t *testing.T) {
	const n = 40
	vouched := 0
	for headDim := 1; headDim <= 4; headDim++ {
		for heads := 0; heads <= 4; heads++ {
			for head := -1; head <= 12; head++ {
				for token := -1; token <= 16; token++ {
					for tokens := 0; tokens <= 4; tokens++ {
						s := Strides{heads, head, token}
						if !smallView(s, n, tokens, headDim) {
							continue
						}
						vouched++
						if msg := panics(func() { checkView("F", "s", s, n, tokens, headDim, "len(pos)") }); msg != "" {
							t.Fatalf("smallView(%+v, n %d, tokens %d, HeadDim %d) vouched for a view checkView rejects: %s", s, n, tokens, headDim, msg)
						}
					}
				}
			}
		}
	}
	if vouched == 0 {
		t.Fatal("smallView vouched for no view")
	}
	if smallView(Strides{32, 128, 6144}, 6144, 1, 128) != true {
		t.Error("smallView does not vouch for a decode step's fused QKV query view")
	}
	if smallView(Strides{1 << 40, 128, 6144}, 1<<62, 1, 128) {
		t.Error("smallView vouched for a view with a field past 2^30")
	}
}

// adjacent merges q's and k's views exactly when k's heads continue q's in
// q's memory: its merged view's heads are the heads of both, by brute force.
func TestAdjacent(t *testing.T) {
	const hd = 4
	x := make([]float32, 3*48)
	type tc struct {
		name   string
		q      []float32
		qs     Strides
		k      []float32
		ks     Strides
		tokens int
		want   bool
	}
	fused := func(hq, hk int) (Strides, Strides) {
		row := (hq + 2*hk) * hd
		return Strides{hq, hd, row}, Strides{hk, hd, row}
	}
	qs, ks := fused(6, 3) // 6 q, 3 k, 3 v heads: 48 values a token
	cases := []tc{
		{"fused QKV", x, qs, x[6*hd:], ks, 3, true},
		{"k one head later", x, qs, x[7*hd:], ks, 3, false},
		{"k before q's end", x, qs, x[5*hd:], ks, 3, false},
		{"two buffers", x[:3*48], qs, make([]float32, 3*48), ks, 3, false},
		{"k of another Head", x, qs, x[6*hd:], Strides{3, hd + 1, 48}, 2, false},
		{"k of another Token", x, qs, x[6*hd:], Strides{3, hd, 40}, 2, false},
		{"q too short for k", x[:6*hd], Strides{6, hd, 48}, x[6*hd:], ks, 1, false},
		{"merged view past a token", x, Strides{6, hd, 24}, x[6*hd:], Strides{3, hd, 24}, 2, false},
		{"no tokens", x, qs, x[6*hd:], ks, 0, false},
	}
	for _, c := range cases {
		m, ok := adjacent(c.q, c.qs, c.k, c.ks, c.tokens, hd)
		if ok != c.want {
			t.Errorf("%s: adjacent = %v, want %v", c.name, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		// The merged view must cover exactly the heads of q's and k's views.
		d := len(c.q) - len(c.k)
		a, b := make([]int, len(c.q)), make([]int, len(c.q))
		bruteMark(a, m, 0, c.tokens, hd)
		bruteMark(b, c.qs, 0, c.tokens, hd)
		bruteMark(b, c.ks, d, c.tokens, hd)
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: element %d: merged view covers it %d times, q's and k's %d", c.name, i, a[i], b[i])
				break
			}
		}
	}
}
