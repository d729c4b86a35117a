package spec

import (
	"fmt"
	"math"
	"strings"
)

// Scaling types: the values of Scaling.Type (docs/contract.md §3). The empty string
// means ScalingNone.
const (
	ScalingNone     = "none"
	ScalingLinear   = "linear"   // position interpolation: θ_i/s
	ScalingNTK      = "ntk"      // static NTK-aware: base·s^(R/(R−2))
	ScalingYaRN     = "yarn"     // YaRN ramp between θ_i and θ_i/s, attention factor
	ScalingLlama3   = "llama3"   // Llama 3.1 wavelength bands
	ScalingLongRoPE = "longrope" // per-pair short and long factors (Phi-3)
	ScalingDynamic  = "dynamic"  // Hugging Face's dynamic NTK: the base grows with the table's length
	// ScalingProportional is Gemma 4's proportional RoPE: the whole head
	// turns, with θ_i = base^(−2i/R)/s for the first RopeAngles pairs and
	// θ_i = 0 (no rotation) for the rest.
	ScalingProportional = "proportional"
)

// ScalingTypes lists the scaling types in the order the -scaling flag
// documents them.
var ScalingTypes = []string{ScalingNone, ScalingLinear, ScalingNTK, ScalingYaRN, ScalingLlama3, ScalingLongRoPE, ScalingDynamic, ScalingProportional}

// Defaults of the YaRN ramp's rotation counts, used when BetaFast or
// BetaSlow is 0 (as in the YaRN paper and Hugging Face transformers).
const (
	DefaultBetaFast = 32
	DefaultBetaSlow = 1
)

// scalingParam describes one Scaling field: its flag, whether it is set and
// how to show its value, and the scaling types that use it.
type scalingParam struct {
	flag  string
	value func(*Scaling) (v string, set bool)
	users []string // nil: every type
}

func floatParam(p func(*Scaling) float64) func(*Scaling) (string, bool) {
	return func(sc *Scaling) (string, bool) {
		f := p(sc)
		return fmt.Sprint(f), f != 0
	}
}

func listParam(p func(*Scaling) []float64) func(*Scaling) (string, bool) {
	return func(sc *Scaling) (string, bool) {
		l := p(sc)
		return string(listValue(l)), len(l) != 0
	}
}

// listValue is how a SpecError shows a list: by its length.
func listValue(l []float64) shown { return shown(fmt.Sprintf("%d values", len(l))) }

// scalingParams are the Scaling fields other than Type, in flag order.
// Truncate is missing: its zero value false is not "unset" (DefaultSpec has
// true), so it cannot be told apart from a choice; only yarn reads it.
var scalingParams = []scalingParam{
	{"factor", floatParam(func(sc *Scaling) float64 { return sc.Factor }),
		[]string{ScalingLinear, ScalingNTK, ScalingYaRN, ScalingLlama3, ScalingLongRoPE, ScalingDynamic, ScalingProportional}},
	{"orig-ctx", func(sc *Scaling) (string, bool) { return fmt.Sprint(sc.OrigCtx), sc.OrigCtx != 0 },
		[]string{ScalingYaRN, ScalingLlama3, ScalingLongRoPE, ScalingDynamic}},
	{"beta-fast", floatParam(func(sc *Scaling) float64 { return sc.BetaFast }), []string{ScalingYaRN}},
	{"beta-slow", floatParam(func(sc *Scaling) float64 { return sc.BetaSlow }), []string{ScalingYaRN}},
	{"attn-factor", floatParam(func(sc *Scaling) float64 { return sc.AttnFactor }), []string{ScalingYaRN, ScalingLongRoPE}},
	{"mscale", floatParam(func(sc *Scaling) float64 { return sc.MScale }), []string{ScalingYaRN}},
	{"mscale-all-dim", floatParam(func(sc *Scaling) float64 { return sc.MScaleAllDim }), []string{ScalingYaRN}},
	{"low-freq-factor", floatParam(func(sc *Scaling) float64 { return sc.LowFreqFactor }), []string{ScalingLlama3}},
	{"high-freq-factor", floatParam(func(sc *Scaling) float64 { return sc.HighFreqFactor }), []string{ScalingLlama3}},
	{"short-factor", listParam(func(sc *Scaling) []float64 { return sc.ShortFactor }), []string{ScalingLongRoPE}},
	{"long-factor", listParam(func(sc *Scaling) []float64 { return sc.LongFactor }), []string{ScalingLongRoPE}},
	{"freq-factors", listParam(func(sc *Scaling) []float64 { return sc.FreqFactors }), nil},
	{"rope-angles", func(sc *Scaling) (string, bool) { return fmt.Sprint(sc.RopeAngles), sc.RopeAngles != 0 }, []string{ScalingProportional}},
}

// Kind returns the canonical type name of sc ("" becomes "none").
func (sc *Scaling) Kind() string {
	if sc.Type == "" {
		return ScalingNone
	}
	return sc.Type
}

func uses(users []string, typ string) bool {
	if users == nil {
		return true
	}
	for _, u := range users {
		if u == typ {
			return true
		}
	}
	return false
}

// finitePos reports whether f is finite and > 0.
func finitePos(f float64) bool { return f > 0 && !math.IsInf(f, 1) }

// validateScaling checks s.Scaling against the rest of s (docs/contract.md §3): the
// type is known; no parameter is set that the type does not use; each
// parameter is in range; the parameters the type needs are there; and the
// frequencies and attention factor they give are finite and > 0. It assumes
// the rest of s is valid. Every failure is a *SpecError naming the flag.
// It returns the frequencies it computed to check them (scale's result).
func (s Spec) validateScaling() (*Scaled, error) {
	sc := &s.Scaling
	typ := sc.Kind()
	if !uses(ScalingTypes, typ) {
		return nil, specErr("scaling", sc.Type, "scaling must be one of %s", quoteAll(ScalingTypes))
	}
	for _, p := range scalingParams {
		if v, set := p.value(sc); set && !uses(p.users, typ) {
			return nil, specErr(p.flag, shown(v), "scaling %s does not use -%s (it is for %s)", typ, p.flag, strings.Join(p.users, ", "))
		}
	}
	half := s.Rotary() / 2
	if err := checkList("freq-factors", sc.FreqFactors, half, true); err != nil {
		return nil, err
	}
	var err error
	switch typ {
	case ScalingLinear:
		err = checkFactor(sc, typ)
	case ScalingNTK:
		err = s.checkNTK()
	case ScalingYaRN:
		err = checkYaRN(sc)
	case ScalingLlama3:
		err = checkLlama3(sc)
	case ScalingLongRoPE:
		err = checkLongRoPE(sc, half)
	case ScalingDynamic:
		err = s.checkDynamic()
	case ScalingProportional:
		err = s.checkProportional()
	}
	if err != nil {
		return nil, err
	}
	return s.scale()
}

// checkFactor checks the factor s that every scaling type but none needs.
func checkFactor(sc *Scaling, typ string) error {
	if sc.Factor == 0 {
		return specErr("scaling", typ, "needs -factor, the scaling factor s: finite, > 0")
	}
	if !finitePos(sc.Factor) {
		return specErr("factor", sc.Factor, "factor must be finite and > 0")
	}
	return nil
}

// checkOrigCtx checks the original context length L.
func checkOrigCtx(sc *Scaling, typ string) error {
	if sc.OrigCtx == 0 {
		return specErr("scaling", typ, "needs -orig-ctx, the original context length L: > 0")
	}
	if sc.OrigCtx < 0 {
		return specErr("orig-ctx", sc.OrigCtx, "the original context length must be > 0")
	}
	return nil
}

// checkList checks a per-pair list: half values, each finite and > 0. An
// empty list passes when optional.
func checkList(flag string, l []float64, half int, optional bool) error {
	if len(l) == 0 && optional {
		return nil
	}
	if len(l) != half {
		return specErr(flag, listValue(l), "want %d (rotary dim / 2)", half)
	}
	for i, f := range l {
		if !finitePos(f) {
			return specErr(flag, f, "value %d of %d must be finite and > 0", i+1, half)
		}
	}
	return nil
}

// checkOptional checks a float parameter where 0 means unset or default.
func checkOptional(flag, name string, f float64, what string) error {
	if f != 0 && !finitePos(f) {
		return specErr(flag, f, "%s must be finite and > 0 (0 means %s)", name, what)
	}
	return nil
}

func (s Spec) checkNTK() error {
	sc := &s.Scaling
	if err := checkFactor(sc, ScalingNTK); err != nil {
		return err
	}
	r := s.Rotary()
	if r < 4 {
		return specErr("scaling", sc.Type, "ntk needs a rotary dim of at least 4: base·s^(R/(R−2)) with R = %d", r)
	}
	if b := ntkBase(s.Base, sc.Factor, r); !(b > 1) || math.IsInf(b, 1) {
		return specErr("factor", sc.Factor, "ntk base %g·s^(%d/%d) = %g must be finite and > 1", s.Base, r, r-2, b)
	}
	return nil
}

func checkYaRN(sc *Scaling) error {
	if err := checkFactor(sc, ScalingYaRN); err != nil {
		return err
	}
	if err := checkOrigCtx(sc, ScalingYaRN); err != nil {
		return err
	}
	for _, p := range []struct {
		flag, name string
		f          float64
		what       string
	}{
		{"beta-fast", "β_fast", sc.BetaFast, fmt.Sprint(DefaultBetaFast)},
		{"beta-slow", "β_slow", sc.BetaSlow, fmt.Sprint(DefaultBetaSlow)},
		{"attn-factor", "attention factor", sc.AttnFactor, "derived"},
		{"mscale", "mscale", sc.MScale, "unset"},
		{"mscale-all-dim", "mscale_all_dim", sc.MScaleAllDim, "unset"},
	} {
		if err := checkOptional(p.flag, p.name, p.f, p.what); err != nil {
			return err
		}
	}
	if bf, bs := sc.Betas(); bf < bs {
		if sc.BetaFast == 0 {
			return specErr("beta-slow", bs, "β_slow must be ≤ β_fast (%g, the default)", bf)
		}
		return specErr("beta-fast", bf, "β_fast must be ≥ β_slow (%g)", bs)
	}
	// Hugging Face uses mscale and mscale_all_dim only together and
	// silently ignores one alone; ropegen refuses rather than ignore it.
	if (sc.MScale != 0) != (sc.MScaleAllDim != 0) {
		if sc.MScale != 0 {
			return specErr("mscale", sc.MScale, "needs -mscale-all-dim too: A = g(s, mscale)/g(s, mscale_all_dim)")
		}
		return specErr("mscale-all-dim", sc.MScaleAllDim, "needs -mscale too: A = g(s, mscale)/g(s, mscale_all_dim)")
	}
	return nil
}

func checkLlama3(sc *Scaling) error {
	if err := checkFactor(sc, ScalingLlama3); err != nil {
		return err
	}
	if err := checkOrigCtx(sc, ScalingLlama3); err != nil {
		return err
	}
	for _, p := range []struct {
		flag, key string
		f         float64
	}{
		{"low-freq-factor", "low_freq_factor", sc.LowFreqFactor},
		{"high-freq-factor", "high_freq_factor", sc.HighFreqFactor},
	} {
		if p.f == 0 {
			return specErr("scaling", ScalingLlama3, "needs -%s (%s): finite, > 0", p.flag, p.key)
		}
		if !finitePos(p.f) {
			return specErr(p.flag, p.f, "scaling llama3 needs %s: finite, > 0", p.key)
		}
	}
	if sc.LowFreqFactor > sc.HighFreqFactor {
		return specErr("low-freq-factor", sc.LowFreqFactor, "must be at most -high-freq-factor (%g): equal factors (Llama 4) leave no smoothed band, a lower one smooths between them", sc.HighFreqFactor)
	}
	return nil
}

func checkLongRoPE(sc *Scaling, half int) error {
	if err := checkList("short-factor", sc.ShortFactor, half, false); err != nil {
		return err
	}
	if err := checkList("long-factor", sc.LongFactor, half, false); err != nil {
		return err
	}
	if err := checkOrigCtx(sc, ScalingLongRoPE); err != nil {
		return err
	}
	if err := checkOptional("attn-factor", "attention factor", sc.AttnFactor, "derived"); err != nil {
		return err
	}
	if sc.Factor != 0 && !finitePos(sc.Factor) {
		return specErr("factor", sc.Factor, "factor must be finite and > 0")
	}
	if sc.AttnFactor == 0 {
		if sc.Factor == 0 {
			return specErr("factor", sc.Factor, "scaling longrope needs a factor (extended / original context, for the attention factor) or -attn-factor")
		}
		if sc.Factor > 1 && sc.OrigCtx < 2 {
			return specErr("orig-ctx", sc.OrigCtx, "longrope's attention factor sqrt(1 + ln s/ln L) needs L ≥ 2 (or give -attn-factor)")
		}
	}
	return nil
}

// Betas returns β_fast and β_slow with their defaults applied.
func (sc *Scaling) Betas() (fast, slow float64) {
	fast, slow = sc.BetaFast, sc.BetaSlow
	if fast == 0 {
		fast = DefaultBetaFast
	}
	if slow == 0 {
		slow = DefaultBetaSlow
	}
	return fast, slow
}

// checkProportional checks proportional RoPE: the pairs that turn,
// 1…RotaryDim/2, and an optional factor (0 means 1, as transformers'
// rope_parameters.get("factor", 1.0)).
func (s Spec) checkProportional() error {
	sc := &s.Scaling
	half := s.Rotary() / 2
	if sc.RopeAngles < 1 || sc.RopeAngles > half {
		return specErr("rope-angles", sc.RopeAngles, "scaling proportional needs the number of pairs that turn: 1…%d (rotary dim / 2)", half)
	}
	if sc.Factor != 0 && !finitePos(sc.Factor) {
		return specErr("factor", sc.Factor, "factor must be finite and > 0 (0 means 1)")
	}
	return nil
}
