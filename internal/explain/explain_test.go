package explain

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

func explainText(t *testing.T, s spec.Spec) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, s); err != nil {
		t.Fatalf("Write(%+v): %v", s, err)
	}
	return b.String()
}

func explainConfig(t *testing.T, name string) (spec.Spec, string) {
	t.Helper()
	s, err := spec.LoadHFConfig(filepath.Join(hfDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return s, explainText(t, s)
}

// explainRows returns the table rows of an explanation: the lines after the
// column header.
func explainRows(t *testing.T, text string) []string {
	t.Helper()
	_, table, ok := strings.Cut(text, "\n\n")
	if !ok {
		t.Fatalf("no blank line before the table:\n%s", text)
	}
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	return lines[1:]
}

// explainRow returns the row of pair i.
func explainRow(t *testing.T, text string, i int) string {
	t.Helper()
	r := explainRows(t, text)
	if i >= len(r) {
		t.Fatalf("no row %d in\n%s", i, text)
	}
	if f := strings.Fields(r[i]); len(f) == 0 || f[0] != strconv.Itoa(i) {
		t.Fatalf("row %d is %q", i, r[i])
	}
	return r[i]
}

func wantContains(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, text)
		}
	}
}

// Every row's θ_i is Frequencies' θ_i, to the printed precision, and there
// is one row per pair.
func TestExplainMatchesFrequencies(t *testing.T) {
	for _, file := range hfFiles {
		s, text := explainConfig(t, file)
		freqs, long, _, err := spec.Frequencies(s)
		if err != nil {
			t.Fatal(err)
		}
		r := explainRows(t, text)
		if len(r) != len(freqs) {
			t.Fatalf("%s: %d rows, %d pairs", file, len(r), len(freqs))
		}
		for i, line := range r {
			f := strings.Fields(line)
			theta, err := strconv.ParseFloat(f[1], 64)
			if err != nil || !relClose(theta, freqs[i], 1e-9) {
				t.Errorf("%s row %d: θ %q, want %g", file, i, f[1], freqs[i])
			}
			if long != nil {
				lt, err := strconv.ParseFloat(f[3], 64)
				if err != nil || !relClose(lt, long[i], 1e-9) {
					t.Errorf("%s row %d: long θ %q, want %g", file, i, f[3], long[i])
				}
			}
		}
		if again := explainText(t, s); again != text {
			t.Errorf("%s: Write is not deterministic", file)
		}
	}
}

func TestExplainLlama3(t *testing.T) {
	_, text := explainConfig(t, "llama-3.1-8b.json")
	wantContains(t, "llama 3.1", text,
		"spec: dim 128, rotary-dim 128, base 500000, layout neox, dtype f32, max-positions 131072, pkg rope\n",
		"pairs: 64, pair i = (i, i+64)\n",
		"scaling: llama3, factor 8, orig-ctx 8192, low-freq-factor 1, high-freq-factor 4\n",
		"where wavelength < L/high-freq-factor = 2048",
		"where wavelength > L/low-freq-factor = 8192",
		"attention factor: 1 (always 1 for scaling llama3)",
	)
	wantContains(t, "pair 0", explainRow(t, text, 0), "1.000000000e+00", "6.28319", "llama3 high: unchanged")
	wantContains(t, "pair 28", explainRow(t, text, 28), "llama3 high")
	wantContains(t, "pair 29", explainRow(t, text, 29), "llama3 mid: σ 0.80")
	wantContains(t, "pair 34", explainRow(t, text, 34), "llama3 mid: σ 0.07")
	wantContains(t, "pair 35", explainRow(t, text, 35), "  8  llama3 low: θ⁰_i/s")
	wantContains(t, "pair 63", explainRow(t, text, 63), "llama3 low")
}

// Llama 4's equal low and high factors leave no mid band, and -explain
// says so instead of printing σ over (1 − 1).
func TestExplainLlama3EqualFactors(t *testing.T) {
	_, text := explainConfig(t, "llama-4-scout-17b-16e-instruct.json")
	wantContains(t, "llama 4", text,
		"scaling: llama3, factor 16, orig-ctx 8192, low-freq-factor 1, high-freq-factor 1\n",
		"llama3 bands: high (θ⁰_i) where wavelength ≤ L/high-freq-factor = 8192; low (θ⁰_i/s) where wavelength > L/low-freq-factor = 8192; no mid band: the factors are equal\n",
	)
	if strings.Contains(text, "σ") || strings.Contains(text, "llama3 mid") {
		t.Errorf("-explain of equal factors shows a mid band:\n%s", text)
	}
}

func TestExplainYaRN(t *testing.T) {
	_, text := explainConfig(t, "qwen2.5-7b-instruct-yarn.json")
	wantContains(t, "qwen2.5", text,
		"base 1e+06",
		"scaling: yarn, factor 4, orig-ctx 32768, beta-fast 32, beta-slow 1, truncate true\n",
		"yarn ramp: lo 23, hi 40;",
		"attention factor: 1.138629436111989 (0.1·ln s + 1)",
	)
	wantContains(t, "pair 23", explainRow(t, text, 23), "yarn r 0: extrapolated")
	wantContains(t, "pair 24", explainRow(t, text, 24), "yarn r 0.058824: ramp")
	wantContains(t, "pair 40", explainRow(t, text, 40), "  4  yarn r 1: interpolated")

	_, text = explainConfig(t, "gpt-oss-20b-v5.json")
	wantContains(t, "gpt-oss", text, "truncate false", "yarn ramp: lo 8.0927", "attention factor: 1.3465735902799727")

	s := spec.DefaultSpec()
	s.Scaling = validScaling(spec.ScalingYaRN)
	s.Scaling.MScale, s.Scaling.MScaleAllDim = 1, 0.5
	wantContains(t, "mscale", explainText(t, s), "(g(s, mscale 1)/g(s, mscale_all_dim 0.5), g(s, m) = 0.1·m·ln s + 1)")
	s.Scaling.AttnFactor = 1.5
	wantContains(t, "attn-factor", explainText(t, s), "attention factor: 1.5 (given (-attn-factor))")
}

func TestExplainLongRoPE(t *testing.T) {
	_, text := explainConfig(t, "phi-3-mini-128k-instruct.json")
	wantContains(t, "phi-3", text,
		"spec: dim 96, rotary-dim 96, base 10000, layout neox",
		"scaling: longrope, factor 32, orig-ctx 4096: θ_i = θ⁰_i/short_i for positions below 4096, θ_i = θ⁰_i/long_i past them",
		"attention factor: 1.1902380714238083 (sqrt(1 + ln s/ln L))",
		"θ_i short", "θ_i long",
	)
	wantContains(t, "pair 0", explainRow(t, text, 0), "9.523809524e-01", "short 1.05, long 1.0299999713897705")
	wantContains(t, "pair 47", explainRow(t, text, 47), "short 2.9499999999999975, long 64.81001281738281")
}

func TestExplainOthers(t *testing.T) {
	_, text := explainConfig(t, "gpt-j-6b.json")
	wantContains(t, "gpt-j", text,
		"layout interleaved",
		"pairs: 32, pair i = (2i, 2i+1); values 64…255 pass through unrotated\n",
		"scaling: none: θ_i = θ⁰_i\n",
		"attention factor: 1 (always 1 for scaling none)",
	)
	wantContains(t, "gpt-j pair 31", explainRow(t, text, 31), "  none")

	s := spec.DefaultSpec()
	s.Scaling = validScaling(spec.ScalingLinear)
	text = explainText(t, s)
	wantContains(t, "linear", text, "scaling: linear, factor 4: θ_i = θ⁰_i/4\n")
	wantContains(t, "linear pair 5", explainRow(t, text, 5), "  4  linear: θ⁰_i/s")

	s.Scaling = validScaling(spec.ScalingNTK)
	wantContains(t, "ntk", explainText(t, s), "scaling: ntk, factor 4: base 10000·4^(128/126) = ", "ntk: scaled base")

	s.Scaling = validScaling(spec.ScalingNone)
	s.Scaling.FreqFactors = replaced(filled(64, 1), 3, 2.5)
	text = explainText(t, s)
	wantContains(t, "freq-factors", text, "θ⁰_i = base^(−2i/rotary-dim) / f_i, f_i = -freq-factors[i] (ggml freq_factors)")
	wantContains(t, "freq-factors pair 3", explainRow(t, text, 3), "none, f_i 2.5")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestExplainErrors(t *testing.T) {
	s := spec.DefaultSpec()
	s.Scaling.Type = "foo"
	var b strings.Builder
	err := Write(&b, s)
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "scaling" {
		t.Errorf("Write of an invalid spec: %v, want -scaling error", err)
	}
	if b.Len() != 0 {
		t.Errorf("Write of an invalid spec wrote %q", b.String())
	}
	if err := Write(failWriter{}, spec.DefaultSpec()); err == nil || err.Error() != "disk full" {
		t.Errorf("Write to a failing writer: %v, want disk full", err)
	}
}
