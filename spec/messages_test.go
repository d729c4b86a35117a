package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestSpecErrorQuotesStrings checks that a string value in a validation
// error is Go-quoted, so that a trailing space or tab is visible, and that
// the accepted strings are quoted too, while numbers and lists are not.
func TestSpecErrorQuotesStrings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  func(*Spec)
		field string
		value string // SpecError.Value
		msg   string // the whole message
	}{
		{"layout", func(s *Spec) { s.Layout = "neox " }, "layout", `"neox "`,
			`-layout "neox ": layout must be "interleaved" or "neox"`},
		{"layout tab", func(s *Spec) { s.Layout = "neox\t" }, "layout", `"neox\t"`,
			`-layout "neox\t": layout must be "interleaved" or "neox"`},
		{"dtype", func(s *Spec) { s.DType = "f32 " }, "dtype", `"f32 "`,
			`-dtype "f32 ": dtype must be one of "f32", "f64", "f16", "bf16"`},
		{"dtype empty", func(s *Spec) { s.DType = "" }, "dtype", `""`,
			`-dtype "": dtype must be one of "f32", "f64", "f16", "bf16"`},
		{"out-dtype", func(s *Spec) { s.Caches = []CacheType{"f16 "} }, "out-dtype", `"f16 "`,
			`-out-dtype "f16 ": "f16 " is not a cache type: want a comma-separated list of "f32", "f16", "bf16", "e4m3", "e5m2", "q8_0"`},
		{"out-dtype list", func(s *Spec) { s.Caches = []CacheType{CacheF16, "fp8"} }, "out-dtype", `"f16,fp8"`,
			`-out-dtype "f16,fp8": "fp8" is not a cache type`},
		{"out-dtype twice", func(s *Spec) { s.Caches = []CacheType{CacheF16, CacheQ8_0, CacheF16} }, "out-dtype", `"f16,q8_0,f16"`,
			`-out-dtype "f16,q8_0,f16": "f16" listed twice: want each cache type once`},
		{"out-dtype empty entry", func(s *Spec) { s.Caches = ParseCaches("f16,") }, "out-dtype", `"f16,"`,
			`-out-dtype "f16,": "" is not a cache type`},
		{"q8_0 dim", func(s *Spec) { s.Caches, s.HeadDim = []CacheType{CacheF16, CacheQ8_0}, 80 }, "out-dtype", `"f16,q8_0"`,
			`-out-dtype "f16,q8_0": "q8_0" stores blocks of 32 values: want a head dim that is a multiple of 32, not -dim 80`},
		{"out-dtype needs f32", func(s *Spec) { s.DType, s.Caches = "f64", []CacheType{CacheF16} }, "out-dtype", `"f16"`,
			`-out-dtype "f16": caches take float32 elements: want -dtype "f32", not -dtype "f64"`},
		{"pkg", func(s *Spec) { s.Package = "rope " }, "pkg", `"rope "`,
			`-pkg "rope ": package name must be a Go identifier, not a keyword, _ or main`},
		{"scaling", func(s *Spec) { s.Scaling.Type = "yarn " }, "scaling", `"yarn "`,
			`-scaling "yarn ": scaling must be one of "none", "linear", "ntk", "yarn", "llama3", "longrope", "dynamic"`},
		{"axes", func(s *Spec) { s.Axes = "mrope " }, "axes", `"mrope "`,
			`-axes "mrope ": axes must be one of "none", "mrope", "mrope-interleaved", "mrope-ernie", "vision", "pixtral"`},
		// Numbers and lists keep their plain form.
		{"dim", func(s *Spec) { s.HeadDim = 7 }, "dim", "7", "-dim 7: head dim must be even, 2…4096"},
		{"unused factor", func(s *Spec) { s.Scaling.Factor = 2 }, "factor", "2", "-factor 2: scaling none does not use -factor"},
		{"list", func(s *Spec) { s.Scaling.FreqFactors = []float64{1, 2} }, "freq-factors", "2 values", "-freq-factors 2 values: want 64"},
		{"sections", func(s *Spec) { s.Axes, s.Sections = AxesMRoPE, []int{1, 2} }, "mrope-section", "1,2", "-mrope-section 1,2: want three pair counts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			tc.spec(&s)
			err := s.Validate()
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Validate() = %v (%T), want a *SpecError", err, err)
			}
			if se.Field != tc.field || se.Value != tc.value {
				t.Errorf("field %q value %s, want %q %s", se.Field, se.Value, tc.field, tc.value)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.msg) {
				t.Errorf("message\n\t%s\nwant it to begin\n\t%s", msg, tc.msg)
			}
		})
	}
}
