package spec

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Every QK-norm field is validated, and a failure names its flag, the value
// and what is accepted.
func TestValidateNorm(t *testing.T) {
	for _, tc := range []struct {
		name  string
		norm  QKNorm
		dim   int
		field string
		msg   string // the message begins with it
	}{
		{"kind", QKNorm{Kind: "rms "}, 0, "qk-norm", `-qk-norm "rms ": qk-norm must be one of "none", "rms", "gemma", "l2"`},
		{"eps negative", QKNorm{Kind: NormRMS, Eps: -1e-6}, 0, "qk-norm-eps", "-qk-norm-eps -1e-06: qk-norm-eps must be finite and ≥ 0 (0 means 1e-06)"},
		{"eps NaN", QKNorm{Kind: NormRMS, Eps: math.NaN()}, 0, "qk-norm-eps", "-qk-norm-eps NaN: qk-norm-eps must be finite"},
		{"eps Inf", QKNorm{Kind: NormL2, Eps: math.Inf(1)}, 0, "qk-norm-eps", "-qk-norm-eps +Inf: qk-norm-eps must be finite"},
		{"scope", QKNorm{Kind: NormRMS, Scope: "heads"}, 0, "qk-norm-scope", `-qk-norm-scope "heads": qk-norm-scope must be "head" or "token"`},
		{"eps without norm", QKNorm{Eps: 1e-5}, 0, "qk-norm-eps", "-qk-norm-eps 1e-05: needs -qk-norm rms, gemma, l2"},
		{"scope without norm", QKNorm{Kind: NormNone, Scope: ScopeToken}, 0, "qk-norm-scope", `-qk-norm-scope "token": needs -qk-norm`},
		{"after without norm", QKNorm{After: true}, 0, "qk-norm-after", "-qk-norm-after true: needs -qk-norm"},
		{"token scope, dim not a multiple of 8", QKNorm{Kind: NormRMS, Scope: ScopeToken}, 100, "qk-norm-scope",
			`-qk-norm-scope "token": a token-scope norm needs -dim a multiple of 8 (got 100)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			s.QKNorm = tc.norm
			if tc.dim != 0 {
				s.HeadDim = tc.dim
			}
			err := s.Validate()
			var se *SpecError
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Fatalf("Validate() = %v, want a *SpecError on %s", err, tc.field)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("message\n\t%s\nwant it to begin\n\t%s", err, tc.msg)
			}
		})
	}
	for _, n := range []QKNorm{
		{}, {Kind: NormNone}, {Kind: NormRMS}, {Kind: NormGemma, Eps: 1e-5, Scope: ScopeHead},
		{Kind: NormL2, After: true}, {Kind: NormRMS, Scope: ScopeToken}, {Kind: NormGemma, Scope: ScopeToken, After: true},
	} {
		s := DefaultSpec()
		s.QKNorm = n
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", n, err)
		}
	}
	// A head-scope norm takes any head dim; ε 0 means the default.
	s := DefaultSpec()
	s.HeadDim, s.QKNorm = 6, QKNorm{Kind: NormRMS}
	if err := s.Validate(); err != nil || s.QKNorm.Epsilon() != DefaultNormEps {
		t.Errorf("dim 6 rms: %v, ε %v", err, s.QKNorm.Epsilon())
	}
}
