package attention

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/generated/kv128f16"
	"github.com/ropegen/ropegen/generated/kv128q8"
	"github.com/x448/float16"
)

// TestPagedF16MatchesCache runs the same tokens through the contiguous
// Cache (ApplyStore, one slot a token) and a PagedCache of f16 (ApplyStore into scattered
// blocks, Load back): every score of every step has the same bits, and the
// slots are really paged (the first block is the last one of the cache, and
// a sequence's blocks are not consecutive rows).
func TestPagedF16MatchesCache(t *testing.T) {
	const heads, tokens = 2, 40
	r := rand.New(rand.NewPCG(11, 12))
	n := heads * HeadDim
	q, k, v := randVec(r, tokens*n, 1), randVec(r, tokens*n, 1), randVec(r, tokens*n, 1)
	tab := kv128f16.NewTable(tokens)
	c := NewCache(tab, heads, 0)
	p := NewPagedF16(tab, heads, 4)
	for s := range tokens {
		c.Step(q[s*n:(s+1)*n], k[s*n:(s+1)*n], v[s*n:(s+1)*n])
		p.Step(q[s*n:(s+1)*n], k[s*n:(s+1)*n], v[s*n:(s+1)*n])
		for h := range heads {
			a, b := c.Scores(h), p.Scores(h)
			for j := range a {
				if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
					t.Fatalf("step %d head %d key %d: Cache %v, PagedCache %v", s, h, j, a[j], b[j])
				}
			}
		}
	}
	slots := p.Slots()
	if slots[0] != 3*BlockSize || slots[BlockSize] != 2*BlockSize || slots[BlockSize-1]+1 == slots[BlockSize] {
		t.Errorf("slots %v: want the blocks 3, 2, 1, … of the cache", slots)
	}
}

// ulp16 is the spacing of binary16 values at magnitude v: 2⁻²⁴ below the
// smallest normal, else 2^(⌊log₂ v⌋ − 10).
func ulp16(v float64) float64 {
	if v < 0x1p-14 {
		return 0x1p-24
	}
	_, e := math.Frexp(v)
	return math.Ldexp(1, e-11)
}

// q8Err is the largest error of a value stored in a q8_0 block whose scale
// is d16 (f16), as ggml's reference quantizes it: with d = amax/127 in
// float32 and id = 1/d, q = roundf(x·id) is within 1/2 + 127·2⁻²³ of x/d
// (the products and the quotient each rounded once, |x/d| <= 127), so
// |q·d − x| <= d·(1/2 + 2⁻¹⁶); d16 is d rounded to f16, within 2⁻¹¹·d, and
// q·d16 is exact in float32 (8 by 11 bits), so the stored value is within
// |q|·2⁻¹¹·d + d·(1/2 + 2⁻¹⁶) <= 0.5621·d <= 0.563·d16 of x (for d16 a
// normal f16: values around 1 here).
func q8Err(d16 float64) float64 { return 0.563 * d16 }

// q8Scales returns, for each value of a key's heads (heads·HeadDim bytes
// of a PagedCache[uint8] row at slot), the scale d16 of its block.
func q8Scales(c *PagedCache[uint8], slot int64) []float64 {
	row := c.keys[int(slot)*c.cv.token:][:c.cv.token]
	d := make([]float64, c.heads*HeadDim)
	for h := range c.heads {
		for b := range HeadDim / 32 {
			o := h*c.f.cacheHead + b*34
			s := float64(float16.Frombits(uint16(row[o]) | uint16(row[o+1])<<8).Float32())
			for j := range 32 {
				d[h*HeadDim+b*32+j] = s
			}
		}
	}
	return d
}

// The context shift's bound.
//
// A key x stored at position p and shifted by −D is, per value i of pair
// (a, b), k_A,i; the same key stored by a fresh prefill at p − D is k_B,i;
// the exact key is k*_i = (R_{p−D}·x)_i. With E = ropeEps·(|x_a| + |x_b|),
// the contract's per-pair bound (docs/contract.md §6):
//
//   - fresh: |k_B,i − k*_i| <= E + ρ_B,i, ρ the cache type's rounding of
//     the stored value: one f16 ulp of it, or q8Err of its block's scale.
//   - shifted: ApplyStore's rotation leaves y within E of R_p·x per value,
//     and its rounding (ρ₁) adds at most one more unit per value: half an
//     f16 ulp at the pair's norm r = √(x_a²+x_b²) (no value of the pair
//     exceeds it, by more than E), or q8Err of the block. Shift widens y
//     exactly and turns it by R_{−D} with A = 1: the exact rotation of the
//     error vector (e_a, e_b) is within |e_a| + |e_b| per value, which is
//     2E + ρ₁,a + ρ₁,b, and Shift's own float32 rotation adds its §6
//     bound, E·(1 + 2⁻⁶) (the stored pair's norm is within a few units of
//     the first rounding of x's); the second rounding adds ρ₂,i, of the
//     stored k_A,i. So |k_A,i − k*_i| <= 3E·(1 + 2⁻⁶) + ρ₁,a + ρ₁,b + ρ₂,i.
//
// For q8_0, ρ₁ is q8Err of a block scale from before the shift, which the
// cache no longer holds: amax of that block was at most the largest pair
// norm r_max among its values (plus E), so d16 <= (r_max + E)/127 ·
// (1 + 2⁻¹¹)·(1 + 2⁻²³), q8Err of that. Each score's bound is then
// scoreBound's with these per-value errors in place of its kULP, B_A + B_B
// bounding |s_A − s_B| as in bound_test.go.

// keyErr returns the per-value error bounds of a key x (heads·HeadDim
// values) beyond scoreBound's own E: for the fresh key (shifted false)
// ρ_B,i, for the shifted key 2E·(1+2⁻⁶) + E·2⁻⁶ + ρ₁,a + ρ₁,b + ρ₂,i; stored
// is the key as Load reads it, scales (q8_0) its blocks' d16.
func keyErr(x, stored []float32, scales []float64, shifted bool) []float64 {
	e := make([]float64, len(x))
	for h := 0; h < len(x); h += HeadDim {
		// ρ₁ per value for the shifted key: of the pair norm (f16), or of
		// the block's largest pair norm (q8_0).
		r1 := make([]float64, HeadDim)
		norm := make([]float64, HeadDim)
		for i := range HeadDim {
			a := i &^ 1
			xa, xb := float64(x[h+a]), float64(x[h+a+1])
			norm[i] = math.Hypot(xa, xb) + ropeEps*(math.Abs(xa)+math.Abs(xb))
		}
		for i := range HeadDim {
			if scales == nil {
				r1[i] = ulp16(norm[i]) / 2
				continue
			}
			b := i / 32 * 32
			rmax := slices.Max(norm[b : b+32])
			r1[i] = q8Err(rmax / 127 * (1 + 0x1p-11) * (1 + 0x1p-23))
		}
		for i := range HeadDim {
			a := i &^ 1
			E := ropeEps * (math.Abs(float64(x[h+a])) + math.Abs(float64(x[h+a+1])))
			rho := ulp16(math.Abs(float64(stored[h+i])))
			if scales != nil {
				rho = q8Err(scales[h+i])
			}
			if !shifted {
				e[h+i] = rho
				continue
			}
			e[h+i] = 2*E*(1+0x1p-6) + E*0x1p-6 + r1[a] + r1[a+1] + rho
		}
	}
	return e
}

// runShift runs one context shift on a cache made by mk and a fresh prefill
// of what it keeps, and checks the scores of the decode steps after it: the
// scores of keys both runs stored alike (before keep, and after the shift)
// must have the same bits, every shifted key's score must be within
// B_A + B_B. It returns how many scores broke that.
func runShift[C any](t *testing.T, mk func() *PagedCache[C], scales func(*PagedCache[C], int64) []float64) (bad int) {
	const heads, tokens, keep, discard, more = 2, 40, 4, 12, 8
	r := rand.New(rand.NewPCG(13, 14))
	n := heads * HeadDim
	all := tokens + more
	q, k, v := randVec(r, all*n, 1), randVec(r, all*n, 1), randVec(r, all*n, 1)
	at := func(x []float32, s int) []float32 { return x[s*n : (s+1)*n] }

	a := mk() // prefill, shift, decode
	for s := range tokens {
		a.Step(at(q, s), at(k, s), at(v, s))
	}
	a.Shift(keep, discard)
	b := mk() // the kept tokens from scratch, then the same decode
	kept := slices.Concat(seq(0, keep), seq(keep+discard, tokens))
	for _, s := range kept {
		b.Step(at(q, s), at(k, s), at(v, s))
	}
	if a.Pos() != b.Pos() || a.Len() != b.Len() {
		t.Fatalf("after the shift: position %d, %d tokens; fresh: %d, %d", a.Pos(), a.Len(), b.Pos(), b.Len())
	}
	src := append(slices.Clone(kept), seq(tokens, all)...) // the token each cached key came from
	var worst, maxB float64
	exact := 0
	for s := tokens; s < all; s++ {
		a.Step(at(q, s), at(k, s), at(v, s))
		b.Step(at(q, s), at(k, s), at(v, s))
		for j := range a.Len() {
			shifted := j >= keep && j < len(kept)
			ka, kb := a.Key(j), b.Key(j)
			var sa, sb []float64
			if scales != nil {
				sa, sb = scales(a, a.Slots()[j]), scales(b, b.Slots()[j])
			}
			x := at(k, src[j])
			ea, eb := keyErr(x, ka, sa, shifted), keyErr(x, kb, sb, false)
			for h := range heads {
				as, bs := a.Scores(h)[j], b.Scores(h)[j]
				if !shifted {
					if math.Float64bits(as) != math.Float64bits(bs) {
						t.Logf("step %d head %d key %d (not shifted): %v, fresh %v: want the same bits", s, h, j, as, bs)
						bad++
					}
					exact++
					continue
				}
				hq, hk := at(q, s)[h*HeadDim:][:HeadDim], x[h*HeadDim:][:HeadDim]
				bound := scoreBound(hq, hk, ka[h*HeadDim:][:HeadDim], ea[h*HeadDim:][:HeadDim], 1/math.Sqrt(HeadDim)) +
					scoreBound(hq, hk, kb[h*HeadDim:][:HeadDim], eb[h*HeadDim:][:HeadDim], 1/math.Sqrt(HeadDim))
				if d := math.Abs(as - bs); !(d <= bound) {
					if bad++; bad <= 3 {
						t.Logf("step %d head %d key %d (shifted by −%d): score %.9g, fresh %.9g: moved %.3g, bound %.3g", s, h, j, discard, as, bs, d, bound)
					}
				} else {
					worst, maxB = max(worst, d/bound), max(maxB, bound)
				}
			}
		}
	}
	t.Logf("%s: %d scores of unshifted keys the same bits; shifted keys' scores within %.2f of their bounds (bounds ≤ %.3g); %d broke them", a.f.name, exact, worst, maxB, bad)
	return bad
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestPagedShiftF16 and TestPagedShiftQ8 check a context shift against a
// fresh prefill of what it keeps (runShift), within the bound derived
// above.
func TestPagedShiftF16(t *testing.T) {
	tab := kv128f16.NewTable(64)
	if bad := runShift(t, func() *PagedCache[uint16] { return NewPagedF16(tab, 2, 4) }, nil); bad > 0 {
		t.Errorf("%d scores broke the bound", bad)
	}
}

func TestPagedShiftQ8(t *testing.T) {
	tab := kv128q8.NewTable(64)
	if bad := runShift(t, func() *PagedCache[uint8] { return NewPagedQ8(tab, 2, 4) }, q8Scales); bad > 0 {
		t.Errorf("%d scores broke the bound", bad)
	}
}

// TestShiftBoundCatchesError makes sure the bound is not vacuous: a shift
// one position short (delta −discard+1), or one that turns the key twice
// as far, breaks it.
func TestShiftBoundCatchesError(t *testing.T) {
	tab := kv128f16.NewTable(64)
	for _, wrong := range []func(int32) int32{
		func(d int32) int32 { return d + 1 },
		func(d int32) int32 { return 2 * d },
	} {
		mk := func() *PagedCache[uint16] {
			p := NewPagedF16(tab, 2, 4)
			shift := p.f.shift
			p.f.shift = func(c []uint16, cs views, slots []int64, delta []int32) {
				d := slices.Clone(delta)
				for i := range d {
					d[i] = wrong(d[i])
				}
				shift(c, cs, slots, d)
			}
			return p
		}
		if bad := runShift(t, mk, nil); bad == 0 {
			t.Errorf("a wrong shift kept every score within its bound")
		}
	}
}

// TestPagedQ8Scores checks every score of a q8_0 decode loop against the
// exact float64 rotation: within scoreBound with q8Err of each value's
// block scale as the cache's rounding.
func TestPagedQ8Scores(t *testing.T) {
	const heads, tokens = 2, 24
	r := rand.New(rand.NewPCG(15, 16))
	n := heads * HeadDim
	q, k, v := randVec(r, tokens*n, 1), randVec(r, tokens*n, 1), randVec(r, tokens*n, 1)
	p := NewPagedQ8(kv128q8.NewTable(tokens), heads, 2)
	exact := func(x []float32, pos int) []float64 {
		y := make([]float64, len(x))
		for i, theta := range kv128q8.Freqs {
			s, c := math.Sincos(float64(pos) * theta)
			xa, xb := float64(x[2*i]), float64(x[2*i+1])
			y[2*i], y[2*i+1] = xa*c-xb*s, xb*c+xa*s
		}
		return y
	}
	var worst float64
	for s := range tokens {
		p.Step(q[s*n:(s+1)*n], k[s*n:(s+1)*n], v[s*n:(s+1)*n])
		for j := 0; j <= s; j++ {
			kj := p.Key(j)
			sc := q8Scales(p, p.Slots()[j])
			for h := range heads {
				hq, hk := q[s*n+h*HeadDim:][:HeadDim], k[j*n+h*HeadDim:][:HeadDim]
				qe, ke := exact(hq, s), exact(hk, j)
				var want float64
				for i := range qe {
					want += qe[i] * ke[i]
				}
				want /= math.Sqrt(HeadDim)
				rho := make([]float64, HeadDim)
				for i := range rho {
					rho[i] = q8Err(sc[h*HeadDim+i])
				}
				bound := scoreBound(hq, hk, kj[h*HeadDim:][:HeadDim], rho, 1/math.Sqrt(HeadDim))
				if d := math.Abs(p.Scores(h)[j] - want); !(d <= bound) {
					t.Fatalf("step %d head %d key %d: score %.9g, exact %.9g: off by %.3g, bound %.3g", s, h, j, p.Scores(h)[j], want, d, bound)
				} else {
					worst = max(worst, d/bound)
				}
			}
		}
	}
	t.Logf("q8_0 scores within %.2f of their bounds", worst)
}

// TestPagedPanics checks the messages of a PagedCache's bad calls.
func TestPagedPanics(t *testing.T) {
	tab := kv128f16.NewTable(BlockSize + 1)
	p := NewPagedF16(tab, 1, 1)
	x := make([]float32, HeadDim)
	for range BlockSize {
		p.Step(x, x, x)
	}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"no free block", func() { p.Step(x, x, x) }, "all 1 blocks in use"},
		{"short key", func() { p.Step(x, x[1:], x) }, "len(k) = 127"},
		{"shift past the end", func() { p.Shift(10, 7) }, "keep = 10, discard = 7 with 16 tokens"},
		{"no heads", func() { NewPagedF16(tab, 0, 1) }, "heads = 0"},
	} {
		msg, ok := catchMsg(c.f)
		if !ok || !strings.Contains(msg, c.want) {
			t.Errorf("%s: panicked %v with %q, want a message with %q", c.name, ok, msg, c.want)
		}
	}
}

func catchMsg(f func()) (msg string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok = r.(string), true
		}
	}()
	f()
	return "", false
}
