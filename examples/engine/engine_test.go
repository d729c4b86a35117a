package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/generated/llama31"
	"github.com/ropegen/ropegen/generated/mistral7b"
	"github.com/ropegen/ropegen/generated/qwen25"
	"github.com/ropegen/ropegen/generated/rope128neox"
	"github.com/ropegen/ropegen/spec"
)

// load returns the Rotary of a checked-in model config.
func load(t *testing.T, model string) *Rotary {
	t.Helper()
	s, err := spec.LoadHFConfig(filepath.Join("..", "..", "generated", model, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// input is a random vector of n float32 values, some of them tiny, huge, zero.
func input(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch i % 11 {
		case 3:
			x[i] = 0
		case 5:
			x[i] = float32(rng.NormFloat64()) * 1e-30
		case 7:
			x[i] = float32(rng.NormFloat64()) * 1e30
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	return x
}

// generatedTable is the table side of a package ropegen generated for one
// model: what the engine's run-time tables must equal.
type generatedTable interface {
	Apply(x []float32, pos int)
	ApplySeq(x []float32, pos []int32)
	ApplyInverse(x []float32, pos int)
}

// A table built at run time from a model's config gives, bit for bit, the
// table of the package generated for that model, through the same rope128neox
// kernels: Llama 3.1 (llama3 scaling), Mistral (no scaling), Qwen2.5 with
// YaRN (attention factor 1.1386). So do a window far into the context and a
// decode Batch, against the generated package's tableless Rotate.
func TestRunTimeTablesMatchGeneratedPackages(t *testing.T) {
	const n = 4096
	for _, c := range []struct {
		model  string
		table  generatedTable
		rotate func(x []float32, pos int)
		attn   float64
	}{
		{"llama31", llama31.NewTable(n), llama31.Rotate, llama31.AttentionFactor},
		{"mistral7b", mistral7b.NewTable(n), mistral7b.Rotate, mistral7b.AttentionFactor},
		{"qwen25", qwen25.NewTable(n), qwen25.Rotate, qwen25.AttentionFactor},
	} {
		t.Run(c.model, func(t *testing.T) {
			r := load(t, c.model)
			if a := r.R.Params().Attn; a != c.attn {
				t.Fatalf("A = %v, the generated package's %v", a, c.attn)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(c.model))))
			tab := r.Table(n)
			for range 200 {
				p := rng.IntN(n)
				x := input(rng, 3*rope128neox.HeadDim)
				got, want := slices.Clone(x), slices.Clone(x)
				tab.Apply(got, p)
				c.table.Apply(want, p)
				same(t, fmt.Sprintf("Apply at %d", p), got, want)
				tab.ApplyInverse(got, p)
				c.table.ApplyInverse(want, p)
				same(t, fmt.Sprintf("ApplyInverse at %d", p), got, want)
			}
			// A window at 10⁶ against Rotate (a full table would take 1 GiB).
			const start = 1_000_000
			win := r.Window(start, 512)
			pos := make([]int32, 64)
			for j := range pos {
				pos[j] = int32(start + 100 + j) // a run: the rows kernels' walk
			}
			x := input(rng, len(pos)*2*rope128neox.HeadDim)
			got, want := slices.Clone(x), slices.Clone(x)
			win.ApplySeq(got, pos)
			for j, p := range pos {
				c.rotate(want[j*2*rope128neox.HeadDim:(j+1)*2*rope128neox.HeadDim], int(p))
			}
			same(t, "a window at 10⁶", got, want)
			// A decode step: four sequences at scattered positions.
			b := r.Batch(8)
			steps := []int32{3, 900_000, 131_071, 40}
			b.Set(steps)
			x = input(rng, len(steps)*rope128neox.HeadDim)
			got, want = slices.Clone(x), slices.Clone(x)
			b.ApplySeq(got)
			for j, p := range steps {
				c.rotate(want[j*rope128neox.HeadDim:(j+1)*rope128neox.HeadDim], int(p))
			}
			same(t, "a decode Batch", got, want)
		})
	}
}

func same(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: index %d: %v (%#x), generated package %v (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// A model of another shape is refused, naming the field; a model of the
// same shape with three axes is served (its tokens' rows are assembled from
// the rows of their positions).
func TestOtherShapesRefused(t *testing.T) {
	for _, c := range []struct{ model, want string }{
		{"phi2", "HeadDim = 80"},
		{"gptj", "HeadDim = 256"},
		{"rope128", `Layout = "interleaved"`},
		{"qwen25vl7b", ""},
	} {
		path := filepath.Join("..", "..", "generated", c.model, "config.json")
		var s spec.Spec
		var err error
		if c.model == "rope128" {
			s = spec.DefaultSpec()
		} else if s, err = spec.LoadHFConfig(path); err != nil {
			t.Fatal(err)
		}
		_, err = New(s)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: New: %v, want an error saying %q", c.model, err, c.want)
		}
	}
}

// The engine loads Llama 3.1's config and rotates a query head by position
// 1,000,005 with a window, without a table from position 0.
func Example() {
	s, err := spec.LoadHFConfig("../../generated/llama31/config.json")
	if err != nil {
		panic(err)
	}
	r, err := New(s)
	if err != nil {
		panic(err)
	}
	win := r.Window(1_000_000, 64) // 64 rows, not a million
	q := make([]float32, rope128neox.HeadDim)
	q[0] = 1
	win.Apply(q, 1_000_005)
	want := make([]float32, rope128neox.HeadDim)
	want[0] = 1
	llama31.Rotate(want, 1_000_005)
	fmt.Println("window rows:", win.Len(), "from", win.Start(), "- same bits as llama31:", slices.Equal(q, want))
	// Output: window rows: 64 from 1000000 - same bits as llama31: true
}
