package explain

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// hfDir holds the publishers' configs spec's tests read (see its README).
var hfDir = filepath.Join("..", "..", "spec", "testdata", "hf")

// hfFiles are configs of hfDir with a scaling scheme, a partial rotary
// dim or a layout each: llama3, yarn, longrope, none.
var hfFiles = []string{
	"llama-3.1-8b.json",
	"qwen2.5-7b-instruct-yarn.json",
	"phi-2.json",
	"mistral-7b-v0.3.json",
	"gpt-j-6b.json",
	"gpt-neox-20b.json",
	"phi-3-mini-128k-instruct.json",
	"gpt-oss-20b-v5.json",
}

// relClose reports whether got is within tol of want, relatively.
func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func filled(n int, v float64) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = v
	}
	return l
}

// replaced returns l with l[i] = v.
func replaced(l []float64, i int, v float64) []float64 {
	l = append([]float64(nil), l...)
	l[i] = v
	return l
}

// validScaling returns a valid scaling of type typ on DefaultSpec (head
// dim 128, 64 pairs).
func validScaling(typ string) spec.Scaling {
	sc := spec.DefaultSpec().Scaling
	sc.Type = typ
	switch typ {
	case spec.ScalingLinear, spec.ScalingNTK:
		sc.Factor = 4
	case spec.ScalingYaRN:
		sc.Factor, sc.OrigCtx = 4, 32768
	case spec.ScalingLlama3:
		sc.Factor, sc.OrigCtx, sc.LowFreqFactor, sc.HighFreqFactor = 8, 8192, 1, 4
	case spec.ScalingLongRoPE:
		sc.Factor, sc.OrigCtx, sc.ShortFactor, sc.LongFactor = 32, 4096, filled(64, 1.5), filled(64, 20)
	case spec.ScalingDynamic:
		sc.Factor, sc.OrigCtx = 2, 4096
	case spec.ScalingProportional:
		sc.RopeAngles = 16
	}
	return sc
}
