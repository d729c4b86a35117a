package gen

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"github.com/ropegen/ropegen/spec"
)

// hfTestdata holds the published configs package spec's tests check; gen's
// tests generate packages from some of them.
var hfTestdata = filepath.Join("..", "spec", "testdata", "hf")

// For a few configs the generated package itself: cos and sin of every
// pair at several positions, from a table and from Rotate, against
// Hugging Face's angle.
func TestHFConfigsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated packages")
	}
	type pkgCase struct {
		file  string
		local bool
	}
	cases := []pkgCase{{"llama-3.1-8b.json", false}, {"deepseek-v3.json", false}, {"gemma-3-4b-it.json", true}}
	var specs []spec.Spec
	var wants [][]float64
	var attns []float64
	var pairs [][][2]int
	for _, c := range cases {
		s, _, err := spec.LoadHFConfigWith(filepath.Join(hfTestdata, c.file), spec.HFOptions{Local: c.local})
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	// The expectations, by hand as above.
	wantLlama, _, _ := hfref.Reference(hfref.Rope{Dim: 128, Base: 500000, RopeType: "llama3", Factor: 8, LowFreq: 1, HighFreq: 4, OrigMax: 8192})
	wantDS, _, attnDS := hfref.Reference(hfref.Rope{Dim: 64, Base: 10000, RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true})
	wantGemma, _, _ := hfref.Reference(hfref.Rope{Dim: 256, Base: 1e4, RopeType: "default"})
	wants = [][]float64{wantLlama, wantDS, wantGemma}
	attns = []float64{1, attnDS}
	attns = append(attns, 1)
	pairs = [][][2]int{hfref.Pairs("neox", 128), hfref.Pairs("interleaved", 64), hfref.Pairs("neox", 256)}

	dir := writeModule(t, specs, false)
	must(t, os.Mkdir(filepath.Join(dir, "probe"), 0o755))
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"encoding/json\"\n\t\"os\"\n")
	for i := range specs {
		fmt.Fprintf(&src, "\t\"example.com/gentest/p%c\"\n", 'a'+i)
	}
	src.WriteString(")\n\n// unit returns the rotated unit vector e_j of a head of n values at pos.\n")
	src.WriteString("func main() {\n\tout := map[string]map[string][]float32{}\n")
	for i := range specs {
		p := fmt.Sprintf("p%c", 'a'+i)
		fmt.Fprintf(&src, `	{
		m := map[string][]float32{}
		tab := %[1]s.NewTable(5000)
		one := %[1]s.NewTable(1)
		for _, pos := range []int{0, 1, 7, 4095, 4999, 131071} {
			for j := 0; j < %[1]s.HeadDim; j++ {
				x := make([]float32, %[1]s.HeadDim)
				x[j] = 1
				switch {
				case pos == 131071:
					%[1]s.Rotate(x, pos)
				case pos == 0:
					one.Apply(x, pos)
				default:
					tab.Apply(x, pos)
				}
				m[string(rune('0'+j%%10))+"/"+itoa(pos)+"/"+itoa(j)] = x
			}
		}
		out[%[2]q] = m
	}
`, p, p)
	}
	src.WriteString("\tjson.NewEncoder(os.Stdout).Encode(out)\n}\n\nfunc itoa(n int) string {\n\tif n == 0 {\n\t\treturn \"0\"\n\t}\n\ts := \"\"\n\tfor ; n > 0; n /= 10 {\n\t\ts = string(rune('0'+n%10)) + s\n\t}\n\treturn s\n}\n")
	must(t, os.WriteFile(filepath.Join(dir, "probe", "main.go"), []byte(src.String()), 0o644))
	out := goCmd(t, dir, nil, "run", "./probe")
	var got map[string]map[string][]float32
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("probe output: %v", err)
	}
	// A float32 table value is A·cos φ rounded once (half an ulp, 2^−24
	// relative), and e_a·c is exact; the angle itself agrees with Hugging
	// Face's to hfref.AngleTol·φ (φ ≤ 131071·θ_0 here, θ_0 = 1).
	for k, c := range cases {
		m := got[fmt.Sprintf("p%c", 'a'+k)]
		for _, pos := range []int{0, 1, 7, 4095, 4999, 131071} {
			for i, pr := range pairs[k] {
				phi := float64(pos) * wants[k][i]
				cs, sn := attns[k]*math.Cos(phi), attns[k]*math.Sin(phi)
				tol := attns[k]*(math.Pow(2, -24)) + attns[k]*hfref.AngleTol*math.Abs(phi)
				key := func(j int) string { return fmt.Sprintf("%c/%d/%d", '0'+j%10, pos, j) }
				ya, yb := m[key(pr[0])], m[key(pr[1])]
				if ya == nil || yb == nil {
					t.Fatalf("%s: no output for position %d pair %d", c.file, pos, i)
				}
				// e_a turns into (cos, sin) on (a, b); e_b into (−sin, cos).
				checks := []struct {
					got, want float64
				}{{float64(ya[pr[0]]), cs}, {float64(ya[pr[1]]), sn}, {float64(yb[pr[0]]), -sn}, {float64(yb[pr[1]]), cs}}
				for _, ch := range checks {
					if math.Abs(ch.got-ch.want) > tol {
						t.Fatalf("%s position %d pair %d (%d, %d): %v, Hugging Face %v (tol %g)", c.file, pos, i, pr[0], pr[1], ch.got, ch.want, tol)
					}
				}
			}
		}
	}
}
