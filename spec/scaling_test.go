package spec

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// filled returns n copies of v.
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

// Valid specs of every type, on DefaultSpec (head dim 128, 64 pairs).
func validScaling(typ string) Scaling {
	sc := DefaultSpec().Scaling
	sc.Type = typ
	switch typ {
	case ScalingLinear, ScalingNTK:
		sc.Factor = 4
	case ScalingYaRN:
		sc.Factor, sc.OrigCtx = 4, 32768
	case ScalingLlama3:
		sc.Factor, sc.OrigCtx, sc.LowFreqFactor, sc.HighFreqFactor = 8, 8192, 1, 4
	case ScalingLongRoPE:
		sc.Factor, sc.OrigCtx, sc.ShortFactor, sc.LongFactor = 32, 4096, filled(64, 1.5), filled(64, 20)
	case ScalingDynamic:
		sc.Factor, sc.OrigCtx = 2, 4096
	case ScalingProportional:
		sc.RopeAngles = 16
	}
	return sc
}

func TestValidateScalingValid(t *testing.T) {
	for _, typ := range append([]string{""}, ScalingTypes...) {
		s := DefaultSpec()
		s.Scaling = validScaling(typ)
		if err := s.Validate(); err != nil {
			t.Errorf("%q: %v", typ, err)
		}
		if typ == ScalingDynamic {
			continue // its base depends on the table's length alone: no per-pair factors
		}
		s.Scaling.FreqFactors = filled(64, 2)
		if err := s.Validate(); err != nil {
			t.Errorf("%q with freq factors: %v", typ, err)
		}
	}
	for name, mod := range map[string]func(*Scaling){
		"yarn, all parameters": func(sc *Scaling) {
			*sc = validScaling(ScalingYaRN)
			sc.BetaFast, sc.BetaSlow, sc.MScale, sc.MScaleAllDim, sc.Truncate = 16, 2, 0.707, 0.707, false
		},
		"yarn, attention factor over mscale": func(sc *Scaling) {
			*sc = validScaling(ScalingYaRN)
			sc.AttnFactor, sc.MScale, sc.MScaleAllDim = 1.2, 1, 1
		},
		"yarn, β_fast = β_slow": func(sc *Scaling) { *sc = validScaling(ScalingYaRN); sc.BetaFast, sc.BetaSlow = 4, 4 },
		"yarn, factor < 1":      func(sc *Scaling) { *sc = validScaling(ScalingYaRN); sc.Factor = 0.5 },
		"yarn, L = 1":           func(sc *Scaling) { *sc = validScaling(ScalingYaRN); sc.OrigCtx = 1 },
		"longrope, attention factor without factor": func(sc *Scaling) {
			*sc = validScaling(ScalingLongRoPE)
			sc.Factor, sc.AttnFactor = 0, 1.19
		},
		"longrope, factor ≤ 1 with L = 1": func(sc *Scaling) {
			*sc = validScaling(ScalingLongRoPE)
			sc.Factor, sc.OrigCtx = 1, 1
		},
		"none, truncate false": func(sc *Scaling) { sc.Type, sc.Truncate = ScalingNone, false },
	} {
		s := DefaultSpec()
		mod(&s.Scaling)
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidateScalingErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		spec  func(*Spec)
		field string
		value string
		msg   string // the whole Error() when it starts with "-", else a part of it
	}{
		{"unknown type", func(s *Spec) { s.Scaling.Type = "foo" }, "scaling", `"foo"`,
			`-scaling "foo": scaling must be one of "none", "linear", "ntk", "yarn", "llama3", "longrope", "dynamic", "proportional"`},
		{"type case", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.Type = "YaRN" }, "scaling", `"YaRN"`, "must be one of"},
		{"dynamic-ntk", func(s *Spec) { s.Scaling.Type, s.Scaling.Factor = "dynamic-ntk", 2 }, "scaling", `"dynamic-ntk"`, "must be one of"},
		{"dynamic without orig-ctx", func(s *Spec) { s.Scaling.Type, s.Scaling.Factor = "dynamic", 2 }, "scaling", `"dynamic"`, "needs -orig-ctx, the original context length"},
		{"dynamic below 1", func(s *Spec) { s.Scaling.Type, s.Scaling.Factor, s.Scaling.OrigCtx = "dynamic", 0.5, 4096 }, "factor", "0.5", "factor >= 1"},
		{"dynamic with freq factors", func(s *Spec) {
			s.Scaling.Type, s.Scaling.Factor, s.Scaling.OrigCtx, s.Scaling.FreqFactors = "dynamic", 2, 4096, filled(64, 2)
		}, "freq-factors", "64 values", "takes no per-pair factors"},

		// Parameters the type does not use.
		{"none with factor", func(s *Spec) { s.Scaling.Factor = 2 }, "factor", "2",
			"-factor 2: scaling none does not use -factor (it is for linear, ntk, yarn, llama3, longrope, dynamic, proportional)"},
		{"empty type with factor", func(s *Spec) { s.Scaling.Type, s.Scaling.Factor = "", 2 }, "factor", "2", "scaling none does not use -factor"},
		{"linear with orig-ctx", func(s *Spec) { s.Scaling = validScaling(ScalingLinear); s.Scaling.OrigCtx = 4096 }, "orig-ctx", "4096",
			"-orig-ctx 4096: scaling linear does not use -orig-ctx (it is for yarn, llama3, longrope, dynamic)"},
		{"ntk with attn-factor", func(s *Spec) { s.Scaling = validScaling(ScalingNTK); s.Scaling.AttnFactor = 1.1 }, "attn-factor", "1.1", "scaling ntk does not use -attn-factor (it is for yarn, longrope)"},
		{"llama3 with attn-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.AttnFactor = 1.1 }, "attn-factor", "1.1", "scaling llama3 does not use -attn-factor"},
		{"llama3 with beta-fast", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.BetaFast = 32 }, "beta-fast", "32", "scaling llama3 does not use -beta-fast (it is for yarn)"},
		{"llama3 with mscale", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.MScale = 1 }, "mscale", "1", "does not use -mscale"},
		{"yarn with low-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.LowFreqFactor = 1 }, "low-freq-factor", "1", "scaling yarn does not use -low-freq-factor (it is for llama3)"},
		{"yarn with high-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.HighFreqFactor = 4 }, "high-freq-factor", "4", "does not use -high-freq-factor"},
		{"yarn with short-factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.ShortFactor = filled(64, 1) }, "short-factor", "64 values",
			"-short-factor 64 values: scaling yarn does not use -short-factor (it is for longrope)"},
		{"linear with long-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLinear); s.Scaling.LongFactor = filled(3, 1) }, "long-factor", "3 values", "does not use -long-factor"},
		{"longrope with mscale-all-dim", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.MScaleAllDim = 1 }, "mscale-all-dim", "1", "scaling longrope does not use -mscale-all-dim"},
		{"none with NaN factor", func(s *Spec) { s.Scaling.Factor = nan }, "factor", "NaN", "scaling none does not use -factor"},

		// The factor.
		{"linear without factor", func(s *Spec) { s.Scaling.Type = ScalingLinear }, "scaling", `"linear"`,
			`-scaling "linear": needs -factor, the scaling factor s: finite, > 0`},
		{"ntk without factor", func(s *Spec) { s.Scaling.Type = ScalingNTK }, "scaling", `"ntk"`, "needs -factor"},
		{"yarn without factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.Factor = 0 }, "scaling", `"yarn"`, "needs -factor"},
		{"llama3 without factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.Factor = 0 }, "scaling", `"llama3"`, "needs -factor"},
		{"negative factor", func(s *Spec) { s.Scaling = validScaling(ScalingLinear); s.Scaling.Factor = -2 }, "factor", "-2",
			"-factor -2: factor must be finite and > 0"},
		{"NaN factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.Factor = nan }, "factor", "NaN", "factor must be finite and > 0"},
		{"infinite factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.Factor = inf }, "factor", "+Inf", "factor must be finite and > 0"},
		{"longrope negative factor", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.Factor = -1 }, "factor", "-1", "factor must be finite and > 0"},
		{"longrope without factor or attn-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.Factor = 0 }, "factor", "0",
			"scaling longrope needs a factor (extended / original context, for the attention factor) or -attn-factor"},

		// The original context.
		{"yarn without orig-ctx", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.OrigCtx = 0 }, "scaling", `"yarn"`,
			`-scaling "yarn": needs -orig-ctx, the original context length L: > 0`},
		{"llama3 negative orig-ctx", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.OrigCtx = -8192 }, "orig-ctx", "-8192", "the original context length must be > 0"},
		{"longrope without orig-ctx", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.OrigCtx = 0 }, "scaling", `"longrope"`, "needs -orig-ctx"},
		{"longrope L = 1", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.OrigCtx = 1 }, "orig-ctx", "1",
			"longrope's attention factor sqrt(1 + ln s/ln L) needs L ≥ 2 (or give -attn-factor)"},

		// yarn.
		{"negative beta-fast", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaFast = -1 }, "beta-fast", "-1",
			"-beta-fast -1: β_fast must be finite and > 0 (0 means 32)"},
		{"NaN beta-slow", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaSlow = nan }, "beta-slow", "NaN", "β_slow must be finite and > 0 (0 means 1)"},
		{"infinite beta-slow", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaSlow = inf }, "beta-slow", "+Inf", "β_slow must be finite"},
		{"beta-fast below beta-slow", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaFast, s.Scaling.BetaSlow = 2, 4 }, "beta-fast", "2",
			"-beta-fast 2: β_fast must be ≥ β_slow (4)"},
		{"beta-slow above default beta-fast", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaSlow = 33 }, "beta-slow", "33",
			"-beta-slow 33: β_slow must be ≤ β_fast (32, the default)"},
		{"beta-fast below default beta-slow", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.BetaFast = 0.5 }, "beta-fast", "0.5",
			"-beta-fast 0.5: β_fast must be ≥ β_slow (1)"},
		{"negative attn-factor", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.AttnFactor = -1 }, "attn-factor", "-1",
			"-attn-factor -1: attention factor must be finite and > 0 (0 means derived)"},
		{"longrope NaN attn-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.AttnFactor = nan }, "attn-factor", "NaN", "attention factor must be finite and > 0"},
		{"negative mscale", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.MScale, s.Scaling.MScaleAllDim = -1, 1 }, "mscale", "-1", "mscale must be finite and > 0 (0 means unset)"},
		{"infinite mscale-all-dim", func(s *Spec) {
			s.Scaling = validScaling(ScalingYaRN)
			s.Scaling.MScale, s.Scaling.MScaleAllDim = 1, inf
		}, "mscale-all-dim", "+Inf", "mscale_all_dim must be finite"},
		{"mscale alone", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.MScale = 0.707 }, "mscale", "0.707",
			"-mscale 0.707: needs -mscale-all-dim too: A = g(s, mscale)/g(s, mscale_all_dim)"},
		{"mscale-all-dim alone", func(s *Spec) { s.Scaling = validScaling(ScalingYaRN); s.Scaling.MScaleAllDim = 1 }, "mscale-all-dim", "1", "needs -mscale too"},

		// llama3.
		{"llama3 without low-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.LowFreqFactor = 0 }, "scaling", `"llama3"`,
			`-scaling "llama3": needs -low-freq-factor (low_freq_factor): finite, > 0`},
		{"llama3 without high-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.HighFreqFactor = 0 }, "scaling", `"llama3"`, "needs -high-freq-factor (high_freq_factor)"},
		{"llama3 negative low-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.LowFreqFactor = -1 }, "low-freq-factor", "-1", "needs low_freq_factor: finite, > 0"},
		{"llama3 NaN high-freq-factor", func(s *Spec) { s.Scaling = validScaling(ScalingLlama3); s.Scaling.HighFreqFactor = nan }, "high-freq-factor", "NaN", "finite, > 0"},
		{"llama3 low > high", func(s *Spec) {
			s.Scaling = validScaling(ScalingLlama3)
			s.Scaling.LowFreqFactor, s.Scaling.HighFreqFactor = 4, 1
		}, "low-freq-factor", "4", "-low-freq-factor 4: must be at most -high-freq-factor (1): equal factors (Llama 4) leave no smoothed band, a lower one smooths between them"},

		// Lists.
		{"short-factor too short", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.ShortFactor = filled(3, 1) }, "short-factor", "3 values",
			"-short-factor 3 values: want 64 (rotary dim / 2)"},
		{"short-factor missing", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.ShortFactor = nil }, "short-factor", "0 values", "want 64 (rotary dim / 2)"},
		{"long-factor missing", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.LongFactor = nil }, "long-factor", "0 values", "want 64 (rotary dim / 2)"},
		{"long-factor too long", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.Scaling.LongFactor = filled(128, 1) }, "long-factor", "128 values", "want 64"},
		{"short-factor vs rotary dim", func(s *Spec) { s.Scaling = validScaling(ScalingLongRoPE); s.RotaryDim = 64 }, "short-factor", "64 values", "want 32 (rotary dim / 2)"},
		{"negative short-factor", func(s *Spec) {
			s.Scaling = validScaling(ScalingLongRoPE)
			s.Scaling.ShortFactor = replaced(filled(64, 1), 5, -1)
		}, "short-factor", "-1",
			"-short-factor -1: value 6 of 64 must be finite and > 0"},
		{"zero long-factor", func(s *Spec) {
			s.Scaling = validScaling(ScalingLongRoPE)
			s.Scaling.LongFactor = replaced(filled(64, 1), 63, 0)
		}, "long-factor", "0", "value 64 of 64 must be finite and > 0"},
		{"NaN long-factor", func(s *Spec) {
			s.Scaling = validScaling(ScalingLongRoPE)
			s.Scaling.LongFactor = replaced(filled(64, 1), 0, nan)
		}, "long-factor", "NaN", "value 1 of 64"},
		{"freq-factors wrong length", func(s *Spec) { s.Scaling.FreqFactors = filled(3, 1) }, "freq-factors", "3 values",
			"-freq-factors 3 values: want 64 (rotary dim / 2)"},
		{"freq-factors infinite", func(s *Spec) {
			s.Scaling = validScaling(ScalingYaRN)
			s.Scaling.FreqFactors = replaced(filled(64, 1), 2, inf)
		}, "freq-factors", "+Inf", "value 3 of 64 must be finite and > 0"},
		{"freq-factors zero", func(s *Spec) {
			s.Scaling = validScaling(ScalingLlama3)
			s.Scaling.FreqFactors = replaced(filled(64, 1), 2, 0)
		}, "freq-factors", "0", "value 3 of 64"},

		// ntk.
		{"ntk rotary dim 2", func(s *Spec) { s.Scaling = validScaling(ScalingNTK); s.RotaryDim = 2 }, "scaling", `"ntk"`,
			`-scaling "ntk": ntk needs a rotary dim of at least 4: base·s^(R/(R−2)) with R = 2`},
		{"ntk base below 1", func(s *Spec) { s.Scaling = validScaling(ScalingNTK); s.Scaling.Factor = 1e-9 }, "factor", "1e-09", "ntk base 10000·s^(128/126) ="},
		{"ntk base overflows", func(s *Spec) { s.Base = 1e300; s.Scaling = validScaling(ScalingNTK); s.Scaling.Factor = 1e10 }, "factor", "1e+10", "= +Inf must be finite and > 1"},

		// Frequencies that leave the finite positive numbers.
		{"linear underflow", func(s *Spec) { s.Base = 1e300; s.Scaling = validScaling(ScalingLinear); s.Scaling.Factor = 1e30 }, "factor", "1e+30",
			"makes θ_63 = 0; frequencies must stay finite and > 0"},
		{"freq-factors overflow", func(s *Spec) { s.Scaling.FreqFactors = replaced(filled(64, 1), 0, 1e-310) }, "freq-factors", "1e-310",
			"-freq-factors 1e-310: value 1 makes θ_0 = +Inf; frequencies must stay finite and > 0"},
		{"long-factor overflow", func(s *Spec) {
			s.Scaling = validScaling(ScalingLongRoPE)
			s.Scaling.LongFactor = replaced(filled(64, 1), 0, 1e-320)
		}, "long-factor", "1e-320",
			"value 1 makes θ_0 = +Inf"},
		{"short-factor overflow", func(s *Spec) {
			s.Scaling = validScaling(ScalingLongRoPE)
			s.Scaling.ShortFactor = replaced(filled(64, 1), 0, 1e-320)
		}, "short-factor", "1e-320",
			"value 1 makes θ_0 = +Inf"},
		{"yarn underflow", func(s *Spec) { s.Base = 1e300; s.Scaling = validScaling(ScalingYaRN); s.Scaling.Factor = 1e30 }, "factor", "1e+30", "makes θ_63 = 0"},
		{"llama3 underflow", func(s *Spec) { s.Base = 1e300; s.Scaling = validScaling(ScalingLlama3); s.Scaling.Factor = 1e30 }, "factor", "1e+30", "makes θ_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSpec()
			tt.spec(&s)
			for _, call := range []struct {
				name string
				err  error
			}{
				{"Validate", s.Validate()},
				{"Frequencies", func() error { _, _, _, err := Frequencies(s); return err }()},
			} {
				err := call.err
				var se *SpecError
				if !errors.As(err, &se) {
					t.Fatalf("%s: error %v (%T), want a *SpecError", call.name, err, err)
				}
				if se.Field != tt.field || se.Value != tt.value {
					t.Errorf("%s: error %q: field %q value %q, want %q %q", call.name, err, se.Field, se.Value, tt.field, tt.value)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "-"+tt.field+" "+tt.value+": ") {
					t.Errorf("%s: error %q does not start with the flag and value", call.name, msg)
				}
				if strings.HasPrefix(tt.msg, "-") && msg != tt.msg || !strings.Contains(msg, tt.msg) {
					t.Errorf("%s: error\n\t%q\nwant\n\t%q", call.name, msg, tt.msg)
				}
			}
		})
	}
}
