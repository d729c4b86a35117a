package rt

import (
	"slices"
	"testing"
)

func TestSmoke(t *testing.T) {
	for _, s := range refShapes {
		r, err := New(refParams(s, 10000))
		if err != nil {
			t.Fatal(err)
		}
		tab := r.NewTable(100)
		x := make([]float32, 3*s.HeadDim)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		for _, b := range backends {
			active = &b
			y := slices.Clone(x)
			tab.Apply(y, 42)
			z := slices.Clone(x)
			r.Rotate(z, 42)
			if !slices.Equal(y, z) {
				t.Errorf("%s %v: Apply %v != Rotate %v", b.name, s, y, z)
			}
		}
	}
	active = &backends[0]
}
