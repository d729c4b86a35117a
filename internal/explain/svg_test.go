package explain

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates/rt"
)

// svgText renders the figure of s twice, checks that the bytes are equal,
// and returns them.
func svgText(t *testing.T, s spec.Spec) string {
	t.Helper()
	var a, b bytes.Buffer
	if err := WriteSVG(&a, s, rt.Sincos); err != nil {
		t.Fatalf("WriteSVG: %v", err)
	}
	if err := WriteSVG(&b, s, rt.Sincos); err != nil {
		t.Fatalf("WriteSVG: %v", err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("WriteSVG is not deterministic: two renders differ")
	}
	return a.String()
}

// svgElem is an element of a parsed figure: its name, attributes and, for
// text, its character data.
type svgElem struct {
	name  string
	attr  map[string]string
	chars string
}

// parseSVG walks the figure with encoding/xml, failing on any error, and
// returns its elements in document order.
func parseSVG(t *testing.T, doc string) []svgElem {
	t.Helper()
	if !strings.HasPrefix(doc, SVGHeader+"\n") {
		t.Fatalf("the figure does not begin with SVGHeader: %.80q", doc)
	}
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	var out []svgElem
	var open []int // indices into out of the open elements
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg in the SVG namespace", tok.Name)
				}
			}
			depth++
			e := svgElem{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			open = append(open, len(out))
			out = append(out, e)
		case xml.EndElement:
			depth--
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].chars += string(tok)
			}
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("%d root elements, depth %d at the end", roots, depth)
	}
	return out
}

// svgTexts returns the contents of every text element.
func svgTexts(els []svgElem) []string {
	var ts []string
	for _, e := range els {
		if e.name == "text" {
			ts = append(ts, e.chars)
		}
	}
	return ts
}

func wantTexts(t *testing.T, what string, texts []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, x := range texts {
			found = found || x == w
		}
		if !found {
			t.Errorf("%s: no text %q among %q", what, w, texts)
		}
	}
}

func attrFloat(t *testing.T, e svgElem, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[name], 64)
	if err != nil {
		t.Fatalf("%s %s=%q: %v", e.name, name, e.attr[name], err)
	}
	return v
}

var panelTitles = []string{
	"1. Wavelength 2π/θ_i of each pair i, after scaling and unscaled (θ⁰_i)",
	"2. Attention factor A",
	"3. Long-range decay bound (RoFormer §3.4.3)",
}

func svgConfig(t *testing.T, name string) spec.Spec {
	t.Helper()
	s, err := spec.LoadHFConfig(filepath.Join(hfDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every kind of spec gives a deterministic, well-formed figure with the
// three panels.
func TestExplainSVGWellFormed(t *testing.T) {
	specs := map[string]spec.Spec{}
	configs, err := filepath.Glob(filepath.Join(hfDir, "*.json"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("configs in %s: %v, %v", filepath.Join(hfDir), configs, err)
	}
	for _, f := range configs {
		specs[filepath.Base(f)] = svgConfig(t, filepath.Base(f))
	}
	d2 := spec.DefaultSpec()
	d2.HeadDim = 2
	specs["dim 2"] = d2
	ntk := spec.DefaultSpec()
	ntk.HeadDim, ntk.Scaling = 256, spec.Scaling{Type: spec.ScalingNTK, Factor: 4, Truncate: true}
	specs["ntk"] = ntk
	lin := spec.DefaultSpec()
	lin.Scaling = spec.Scaling{Type: spec.ScalingLinear, Factor: 4, Truncate: true}
	specs["linear"] = lin
	vis := spec.DefaultSpec()
	vis.HeadDim, vis.Axes = 64, spec.AxesVision
	specs["vision"] = vis
	ms := spec.DefaultSpec()
	ms.Scaling = spec.Scaling{Type: spec.ScalingYaRN, Factor: 4, OrigCtx: 32768, Truncate: true}
	ms.Scaling.MScale, ms.Scaling.MScaleAllDim = 0.5, 1
	specs["mscale"] = ms
	ff := spec.DefaultSpec()
	ff.HeadDim = 8
	ff.Scaling.FreqFactors = []float64{1, 4, 1, 8}
	specs["freq-factors"] = ff
	prop := spec.DefaultSpec()
	prop.Layout, prop.Scaling = spec.NeoX, spec.Scaling{Type: spec.ScalingProportional, RopeAngles: 16, Truncate: true}
	specs["proportional"] = prop // θ = 0 for 48 of 64 pairs: no wavelength
	pix := spec.DefaultSpec()
	pix.HeadDim, pix.Axes = 64, spec.AxesPixtral
	specs["pixtral"] = pix
	ern := spec.DefaultSpec()
	ern.Axes, ern.Sections = spec.AxesERNIE, []int{22, 22, 20}
	specs["mrope-ernie"] = ern
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			doc := svgText(t, s)
			texts := svgTexts(parseSVG(t, doc))
			wantTexts(t, name, texts, panelTitles...)
			if strings.Contains(doc, "NaN") || strings.Contains(doc, "Inf") {
				t.Errorf("%s: the figure has a NaN or Inf", name)
			}
		})
	}
}

func TestExplainSVGInvalid(t *testing.T) {
	s := spec.DefaultSpec()
	s.HeadDim = 7
	var b bytes.Buffer
	err := WriteSVG(&b, s, rt.Sincos)
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "dim" {
		t.Errorf("WriteSVG(dim 7) = %v, want a SpecError for -dim", err)
	}
	if b.Len() != 0 {
		t.Errorf("WriteSVG(dim 7) wrote %d bytes", b.Len())
	}
}

// The scheme's parts are marked where Explain puts them.
func TestExplainSVGSchemes(t *testing.T) {
	// Llama 3.1: pairs 0…28 high, 29…34 mid, 35…63 low (TestExplainLlama3).
	els := parseSVG(t, svgText(t, svgConfig(t, "llama-3.1-8b.json")))
	wantTexts(t, "llama3", svgTexts(els),
		"scaling: llama3, factor s = 8, orig-ctx L = 8192, low-freq-factor 1, high-freq-factor 4",
		"L/high-freq-factor = 2048", "L/low-freq-factor = 8192",
		"high band: θ⁰_i unchanged", "mid band: smoothed", "low band: θ⁰_i/s",
		"A = 1", "A = always 1 for scaling llama3", "against the relative distance m = 0…L, L = 8192")
	// Pair i sits at x = left + i·(right − left)/63 and owns i ± 1/2.
	px := func(i float64) float64 { return p1Left + i*(p1Right-p1Left)/63 }
	var regions [][2]float64
	for _, e := range els {
		if e.name == "rect" && e.attr["height"] == strconv.Itoa(p1Bottom-p1Top) && e.attr["y"] == strconv.Itoa(p1Top) && e.attr["fill"] != "none" {
			x := attrFloat(t, e, "x")
			regions = append(regions, [2]float64{x, x + attrFloat(t, e, "width")})
		}
	}
	want := [][2]float64{{p1Left, px(28.5)}, {px(28.5), px(34.5)}, {px(34.5), p1Right}}
	if len(regions) != len(want) {
		t.Fatalf("llama3: regions %v, want %v", regions, want)
	}
	for k := range want {
		if math.Abs(regions[k][0]-want[k][0]) > 0.011 || math.Abs(regions[k][1]-want[k][1]) > 0.011 {
			t.Errorf("llama3: region %d spans x %v, want %v", k, regions[k], want[k])
		}
	}

	// Qwen2.5 YaRN: ramp from pair 23 to pair 40, A = 0.1·ln 4 + 1.
	texts := svgTexts(parseSVG(t, svgText(t, svgConfig(t, "qwen2.5-7b-instruct-yarn.json"))))
	wantTexts(t, "yarn", texts, "lo 23", "hi 40", "ramp bounds lo 23, hi 40", "L = 32768",
		"r = 0: θ⁰_i (extrapolated)", "0 < r < 1: ramp", "r = 1: θ⁰_i/s (interpolated)",
		"A = 1.138629436111989", "A = 0.1·ln s + 1 (YaRN)", "s = 4", "A = 1.1386", "factor s")

	// Phi-3: short and long factors, A = sqrt(1 + ln 32/ln 4096).
	texts = svgTexts(parseSVG(t, svgText(t, svgConfig(t, "phi-3-mini-128k-instruct.json"))))
	wantTexts(t, "longrope", texts, "short: θ⁰_i/short_i (positions < L)", "long: θ⁰_i/long_i (tables > L)",
		"unscaled θ⁰_i", "short factors", "long factors", "L = 4096",
		"A = 1.1902380714238083", "A = sqrt(1 + ln s/ln L) (longrope)")

	// The default spec: one curve, RoFormer's range.
	texts = svgTexts(parseSVG(t, svgText(t, spec.DefaultSpec())))
	wantTexts(t, "default", texts, "RoPE plan: dim 128, rotary-dim 128, base 10000, layout interleaved",
		"scaling: none", "θ_i = θ⁰_i (no scaling)", "against the relative distance m = 0…256, as RoFormer's Figure 2",
		"At m = 0 every S_j = j: the bound is (d/2 + 1)/2 = 32.5.")
	for _, x := range texts {
		if strings.HasPrefix(x, "unscaled") {
			t.Errorf("default spec: text %q: an unscaled spec has no second curve", x)
		}
	}
}

// roformerThetas is RoFormer's θ_k = base^(−2k/d), k = 0…d/2−1, by math.Pow.
func roformerThetas(d int, base float64) []float64 {
	th := make([]float64, d/2)
	for k := range th {
		th[k] = math.Pow(base, -2*float64(k)/float64(d))
	}
	return th
}

// roformerBound is RoFormer's relative upper bound (arXiv:2104.09864
// §3.4.3) straight from its definition, independently of decayBound:
// complex exponentials and moduli from math/cmplx (decayBound has its own
// sine and cosine and its own modulus), and Σ_j |S_j| taken from j = d/2
// down to 1.
func roformerBound(theta []float64, m int) float64 {
	n := len(theta)
	abs := make([]float64, n+1)
	var s complex128 // S_j = Σ_{k<j} e^{i·m·θ_k}
	for j := 1; j <= n; j++ {
		s += cmplx.Exp(complex(0, float64(m)*theta[j-1]))
		abs[j] = cmplx.Abs(s)
	}
	var sum float64
	for j := n; j >= 1; j-- {
		sum += abs[j]
	}
	return sum / float64(n)
}

// For d = 128 and base 10000, as RoFormer's Figure 2: the bound starts at
// (d/2+1)/2 = 32.5, matches the definition at every distance 0…256, and
// decays.
func TestDecayBoundRoFormer(t *testing.T) {
	freqs, _, _, err := spec.Frequencies(spec.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	ref := roformerThetas(128, 10000)
	env, stride := decayEnvelope(freqs, 256, p3Right-p3Left, rt.Sincos)
	if stride != 1 || len(env) != 257 {
		t.Fatalf("decayEnvelope(…, 256, %d, …): %d columns, stride %d; want 257 columns of one distance, stride 1", p3Right-p3Left, len(env), stride)
	}
	want := make([]float64, 257)
	for m, c := range env {
		want[m] = roformerBound(ref, m)
		if c.lo != m || c.hi != m+1 || c.min != c.max {
			t.Fatalf("column %d = %+v, want the distance %d alone", m, c, m)
		}
		if math.Abs(c.min-want[m]) > 1e-9 {
			t.Errorf("m = %d: decay bound %.15g, definition %.15g", m, c.min, want[m])
		}
	}
	if env[0].min != 32.5 || want[0] != 32.5 {
		t.Errorf("m = 0: bound %v (definition %v), want (64+1)/2 = 32.5", env[0].min, want[0])
	}
	// It decays: past m = 128 it stays below a third of its start, and the
	// mean over 200…256 is below a quarter.
	var tail float64
	for m := 129; m <= 256; m++ {
		if want[m] > 32.5/3 {
			t.Errorf("m = %d: bound %.4g, not below 32.5/3", m, want[m])
		}
		if m >= 200 {
			tail += want[m] / 57
		}
	}
	if tail > 32.5/4 {
		t.Errorf("mean bound over m = 200…256 is %.4g, not below 32.5/4", tail)
	}
	t.Logf("RoFormer d = 128: bound at m = 0, 10, 50, 100, 256: %.4g %.4g %.4g %.4g %.4g; mean over 200…256 %.4g",
		want[0], want[10], want[50], want[100], want[256], tail)
}

// Over L = 8192 each pixel column of panel 3 holds the least and greatest
// bound over its distances, every one of them evaluated.
func TestDecayEnvelopeColumns(t *testing.T) {
	freqs, _, _, err := spec.Frequencies(svgConfig(t, "llama-3.1-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	const mMax, cols = 8192, 520
	env, stride := decayEnvelope(freqs, mMax, cols, rt.Sincos)
	if stride != 1 || len(env) != cols {
		t.Fatalf("%d columns, stride %d; want %d, 1", len(env), stride, cols)
	}
	next := 0
	for c, col := range env {
		if col.lo != next || col.hi <= col.lo {
			t.Fatalf("column %d covers %d…%d, want it to start at %d", c, col.lo, col.hi-1, next)
		}
		next = col.hi
		if c%37 != 0 && c != cols-1 {
			continue // the definition is slow: check every 37th column
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for m := col.lo; m < col.hi; m++ {
			v := roformerBound(freqs, m)
			lo, hi = min(lo, v), max(hi, v)
		}
		if math.Abs(col.min-lo) > 1e-9 || math.Abs(col.max-hi) > 1e-9 {
			t.Errorf("column %d (m %d…%d): %.12g…%.12g, definition %.12g…%.12g", c, col.lo, col.hi-1, col.min, col.max, lo, hi)
		}
	}
	if next != mMax+1 {
		t.Errorf("the columns end at %d, want %d", next, mMax+1)
	}
}

// Past decayCap terms only every stride-th distance is evaluated.
func TestDecayEnvelopeStride(t *testing.T) {
	theta := roformerThetas(4096, 10000)
	mMax := decayCap / 2048 // (mMax+1)·2048 just over decayCap
	env, stride := decayEnvelope(theta, mMax, 64, rt.Sincos)
	if stride != 2 {
		t.Fatalf("stride %d, want 2", stride)
	}
	for _, c := range []int{0, 31, 63} {
		col := env[c]
		lo, hi := math.Inf(1), math.Inf(-1)
		for m := col.lo; m < col.hi; m++ {
			if m != col.lo && m%2 != 0 {
				continue
			}
			v := roformerBound(theta, m)
			lo, hi = min(lo, v), max(hi, v)
		}
		if math.Abs(col.min-lo) > 1e-8 || math.Abs(col.max-hi) > 1e-8 {
			t.Errorf("column %d: %.12g…%.12g, definition over the evaluated distances %.12g…%.12g", c, col.min, col.max, lo, hi)
		}
	}
}

// The curve panel 3 draws for the default spec is the definition's values,
// read back from the pixels: y = bottom − v·(bottom − top)/40 (the axis
// runs 0…40).
func TestExplainSVGPlotsDecay(t *testing.T) {
	els := parseSVG(t, svgText(t, spec.DefaultSpec()))
	top := false
	for _, e := range els {
		if e.name == "text" && e.chars == "40" && e.attr["x"] == strconv.Itoa(p3Left-6) && e.attr["y"] == strconv.Itoa(p23Top+4) {
			top = true
		}
	}
	if !top {
		t.Fatal("panel 3's y axis does not end at 40")
	}
	var curve string
	for _, e := range els {
		if e.name == "polyline" && strings.HasPrefix(e.attr["points"], strconv.Itoa(p3Left)+",") {
			curve = e.attr["points"]
		}
	}
	pts := strings.Fields(curve)
	if len(pts) != 257 {
		t.Fatalf("panel 3's curve has %d points, want 257 (m = 0…256)", len(pts))
	}
	ref := roformerThetas(128, 10000)
	for m, p := range pts {
		xs, ys, _ := strings.Cut(p, ",")
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("point %q", p)
		}
		wantX := p3Left + float64(m)*(p3Right-p3Left)/256
		v := (p23Bottom - y) * 40 / (p23Bottom - p23Top)
		// Coordinates have two decimals: 0.005 units, 0.0007 in the bound.
		if want := roformerBound(ref, m); math.Abs(x-wantX) > 0.006 || math.Abs(v-want) > 0.001 {
			t.Errorf("m = %d: point (%v, %v) = bound %.4f, want x %.3f, bound %.4f", m, x, y, v, wantX, want)
		}
	}
}

// rsvgConvert returns rsvg-convert's path; without it the test is skipped,
// loudly, or fails when ROPEGEN_REQUIRE_ARM64=1 (CI's no-skips switch).
func rsvgConvert(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("rsvg-convert")
	if err == nil {
		return p
	}
	if os.Getenv("ROPEGEN_REQUIRE_ARM64") == "1" {
		t.Fatalf("the SVG figures cannot be rendered: %v, and ROPEGEN_REQUIRE_ARM64=1 (install librsvg2-bin; make tools does as root)", err)
	}
	msg := "SKIPPED: SVG figures NOT RENDERED: rsvg-convert not found (install librsvg2-bin; ROPEGEN_REQUIRE_ARM64=1 makes this a failure)"
	fmt.Fprintf(os.Stderr, "%s\n## %s\n%s\n", strings.Repeat("#", 72), msg, strings.Repeat("#", 72))
	t.Skip(msg)
	return ""
}

// A real renderer draws the figures: rsvg-convert makes a PNG of the
// figure's size, with the curves' colour in it.
func TestExplainSVGRenders(t *testing.T) {
	rsvg := rsvgConvert(t)
	dir := t.TempDir()
	for name, s := range map[string]spec.Spec{
		"default": spec.DefaultSpec(),
		"llama3":  svgConfig(t, "llama-3.1-8b.json"),
		"yarn":    svgConfig(t, "qwen2.5-7b-instruct-yarn.json"),
	} {
		in, out := filepath.Join(dir, name+".svg"), filepath.Join(dir, name+".png")
		if err := os.WriteFile(in, []byte(svgText(t, s)), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(rsvg, "-o", out, in).CombinedOutput(); err != nil || len(msg) > 0 {
			t.Fatalf("%s: rsvg-convert: %v: %s", name, err, msg)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("%s: rsvg-convert wrote %d bytes without the PNG signature", name, len(data))
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != svgWidth || b.Dy() != svgHeight {
			t.Errorf("%s: PNG is %v, want %d×%d", name, b, svgWidth, svgHeight)
		}
		white, curve := pixelCounts(img)
		n := svgWidth * svgHeight
		if white < n/2 || white == n || curve < 500 {
			t.Errorf("%s: %d of %d pixels white, %d in the curves' colour %s: not a drawn figure", name, white, n, curve, colScaled)
		}
		t.Logf("%s: %d bytes of PNG, %d white pixels, %d in %s", name, len(data), white, curve, colScaled)
	}
}

// pixelCounts counts the white pixels and those within 16 per channel of
// colScaled.
func pixelCounts(img image.Image) (white, curve int) {
	want, _ := strconv.ParseUint(colScaled[1:], 16, 32)
	wr, wg, wb := int(want>>16), int(want>>8&0xff), int(want&0xff)
	near := func(a, b int) bool { return a-b <= 16 && b-a <= 16 }
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r8, g8, b8 := int(r>>8), int(g>>8), int(bl>>8)
			if r8 == 255 && g8 == 255 && b8 == 255 {
				white++
			}
			if near(r8, wr) && near(g8, wg) && near(b8, wb) {
				curve++
			}
		}
	}
	return white, curve
}

// Multi-axis specs mark each pair's axis along the bottom of panel 1: a
// strip whose runs cover the pairs of one axis each, as Hugging Face's
// M-RoPE formulas (hfAxis) assign them.
func TestExplainSVGAxes(t *testing.T) {
	for _, c := range []struct {
		file, mrope string
		sections    []int
	}{
		{"qwen2.5-vl-7b-instruct.json", "sections", []int{16, 24, 24}},
		{"qwen3-vl-8b-instruct.json", "interleaved", []int{24, 20, 20}},
	} {
		els := parseSVG(t, svgText(t, svgConfig(t, c.file)))
		px := func(i float64) float64 { return p1Left + i*(p1Right-p1Left)/63 }
		covered := make([]int, 64) // pair → axis by the strip, −1: none
		for i := range covered {
			covered[i] = -1
		}
		strips := 0
		for _, e := range els {
			if e.name != "rect" || e.attr["y"] != strconv.Itoa(p1Bottom-axisStripHeight) || e.attr["height"] != strconv.Itoa(axisStripHeight) {
				continue
			}
			strips++
			a := slices.Index(axisFills[:], e.attr["fill"])
			if a < 0 {
				t.Fatalf("%s: strip with fill %q", c.file, e.attr["fill"])
			}
			x0, x1 := attrFloat(t, e, "x"), attrFloat(t, e, "x")+attrFloat(t, e, "width")
			for i := range covered {
				// Strips meet half a pair from the pairs' centres.
				if x0-0.01 <= px(float64(i)) && px(float64(i)) <= x1+0.01 {
					if covered[i] >= 0 {
						t.Fatalf("%s: pair %d under two strips", c.file, i)
					}
					covered[i] = a
				}
			}
		}
		if strips == 0 {
			t.Fatalf("%s: no axis strip", c.file)
		}
		for i, a := range covered {
			if w := hfref.Axis(c.mrope, c.sections, i); a != int(w) {
				t.Errorf("%s: pair %d marked on axis %d, Hugging Face puts it on %d", c.file, i, a, w)
			}
		}
		wantTexts(t, c.file, svgTexts(els), "pairs on axis 0 (time)", "pairs on axis 2 (width)")
	}
	// 1-D RoPE has no strip.
	for _, e := range parseSVG(t, svgText(t, spec.DefaultSpec())) {
		if e.name == "rect" && e.attr["height"] == strconv.Itoa(axisStripHeight) {
			t.Fatalf("default spec: an axis strip %v", e.attr)
		}
	}
}
