package rt

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ---- the slot checks and the walk (cachewalk.go) -------------------------------------

// catchPanic returns f's panic message, if it panicked.
func catchPanic(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprint(r), true
		}
	}()
	f()
	return "", false
}

// checkSlots accepts exactly the slot lists whose slots are −1 or below
// rows and distinct: against a brute-force check on random lists, and its
// message names a repeated slot and where it first appeared.
func TestCheckSlotsAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		rows := 1 + r.IntN(40)
		n := r.IntN(30)
		slots := make([]int64, n)
		switch r.IntN(4) {
		case 0: // increasing
			s := int64(r.IntN(3))
			for j := range slots {
				slots[j] = s
				s += int64(1 + r.IntN(2))
			}
		case 1: // paged: shuffled blocks
			perm := r.Perm(rows)
			for j := range slots {
				slots[j] = int64(perm[j/4%len(perm)]*4 + j%4)
			}
		default:
			for j := range slots {
				slots[j] = int64(r.IntN(rows+2)) - 1
			}
		}
		if n > 0 && r.IntN(8) == 0 {
			slots[r.IntN(n)] = slots[r.IntN(n)]
		}
		wantErr := ""
		seen := map[int64]int{}
		for j, s := range slots {
			if s < -1 || s >= int64(rows) {
				wantErr = fmt.Sprintf("slots[%d] = %d: want -1", j, s)
				break
			}
		}
		if wantErr == "" {
			for j, s := range slots {
				if i, ok := seen[s]; ok && s >= 0 {
					wantErr = fmt.Sprintf("slots[%d] = %d: slots[%d] is %d too", j, s, i, s)
					break
				}
				seen[s] = j
			}
		}
		msg, panicked := catchPanic(func() { checkSlots("F", "slots", "dst", "ds", slots, rows, 99) })
		switch {
		case wantErr == "" && panicked:
			t.Fatalf("slots %v, rows %d: panicked %q, want no panic", slots, rows, msg)
		case wantErr != "" && !panicked:
			t.Fatalf("slots %v, rows %d: no panic, want %q", slots, rows, wantErr)
		case wantErr != "" && !strings.Contains(msg, wantErr):
			// The range check names the first bad slot; a repeat is named
			// by its second occurrence in slot order, which need not be the
			// first repeat in index order: check the parts.
			if !strings.HasPrefix(wantErr, "slots[") || !strings.Contains(msg, "rt.F: slots[") {
				t.Fatalf("slots %v, rows %d: panicked %q, want %q", slots, rows, msg, wantErr)
			}
			re := regexp.MustCompile(`slots\[(\d+)\] = (-?\d+): slots\[(\d+)\] is (-?\d+) too`)
			m := re.FindStringSubmatch(msg)
			if m == nil {
				t.Fatalf("slots %v, rows %d: panicked %q, want %q", slots, rows, msg, wantErr)
			}
			var j, i int
			var v int64
			fmt.Sscan(m[1], &j)
			fmt.Sscan(m[3], &i)
			fmt.Sscan(m[2], &v)
			if i >= j || slots[i] != v || slots[j] != v {
				t.Fatalf("slots %v: message %q names no repeat", slots, msg)
			}
		}
	}
}

// cacheWalk covers each non-skipped token's heads exactly once, at the
// elements the views give, with strides that keep each call's heads apart.
func TestCacheWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		heads, hd := 1+r.IntN(4), 2+r.IntN(6)
		rows := 1 + r.IntN(20)
		views := []Strides{
			{heads, hd, heads * hd},
			{heads, hd + 1, heads*(hd+1) + 2},
			{heads, rows * hd, hd},
		}
		c := views[r.IntN(3)]
		x := views[r.IntN(2)]
		n := r.IntN(rows + 1)
		slots := make([]int64, n)
		for j, v := range r.Perm(rows)[:n] {
			slots[j] = int64(v)
		}
		if r.IntN(2) == 0 {
			slices.Sort(slots)
		}
		for j := range slots {
			if r.IntN(5) == 0 {
				slots[j] = -1
			}
		}
		var delta []int32
		if r.IntN(2) == 0 {
			delta = make([]int32, n)
			for j := range delta {
				delta[j] = int32(r.IntN(2))
			}
		}
		type pair struct{ c, x int }
		got := map[pair]int{}
		kvHead := map[pair]int{} // the KV head the walk says each head is
		cacheWalk(slots, delta, c, x, func(j, co, cs, xo, xs, m int, hs headSeq) {
			for i := range m {
				got[pair{co + i*cs, xo + i*xs}]++
				kvHead[pair{co + i*cs, xo + i*xs}] = (hs.h0 + i*hs.step) % c.Heads
			}
			if m > 1 && (cs < hd || xs < hd) {
				t.Fatalf("a call of %d heads at strides %d, %d: want at least %d", m, cs, xs, hd)
			}
			for i := range m { // x is token-major: a head's token is its offset over x.Token
				if tok := (xo + i*xs) / x.Token; delta != nil && delta[tok] != delta[j] {
					t.Fatalf("slots %v, delta %v: a call from token %d covers token %d", slots, delta, j, tok)
				}
			}
		})
		want := map[pair]int{}
		for j, s := range slots {
			if s < 0 {
				continue
			}
			for h := range heads {
				p := pair{int(s)*c.Token + h*c.Head, j*x.Token + h*x.Head}
				want[p]++
				if kvHead[p] != h {
					t.Fatalf("slots %v, c %+v, x %+v: head %d of token %d walked as KV head %d", slots, c, x, h, j, kvHead[p])
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("slots %v, c %+v, x %+v: %d heads walked, want %d", slots, c, x, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("slots %v, c %+v, x %+v: head %v walked %d times, want %d", slots, c, x, k, got[k], v)
			}
		}
	}
}

// checkCacheView accepts a cache view exactly when no two heads of the rows
// the slots name share an element (brute force over the heads), and names
// the view when it does not.
func TestCheckCacheViewAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		hd := 1 + r.IntN(6)
		s := Strides{1 + r.IntN(4), 1 + r.IntN(12), 1 + r.IntN(24)}
		n := r.IntN(200)
		rows := cacheRows("f", "cs", s, n, hd)
		var slots []int64
		for _, v := range r.Perm(max(rows, 1))[:min(rows, 1+r.IntN(5))] {
			slots = append(slots, int64(v))
		}
		var hs []int
		for _, row := range slots {
			for h := range s.Heads {
				hs = append(hs, int(row)*s.Token+h*s.Head)
			}
		}
		slices.Sort(hs)
		bad := false
		for i := 1; i < len(hs); i++ {
			bad = bad || hs[i]-hs[i-1] < hd
		}
		msg, panicked := catchPanic(func() { checkCacheView("f", "cs", s, rows, hd, slots) })
		if bad != panicked {
			t.Fatalf("view %+v, %d rows, slots %v, head %d: panicked %v (%q), want %v", s, rows, slots, hd, panicked, msg, bad)
		}
		if panicked && !strings.Contains(msg, "cs = ") {
			t.Fatalf("message %q does not name the view", msg)
		}
		// cacheRows is the rows whose last head fits.
		want := 0
		for row := 0; (row)*s.Token+(s.Heads-1)*s.Head+hd <= n; row++ {
			want++
		}
		if rows != want {
			t.Fatalf("cacheRows(%+v, %d, %d) = %d, want %d", s, n, hd, rows, want)
		}
	}
}
