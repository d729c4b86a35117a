package gen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// The figure begins with SVGHeader, then License as an XML comment (spec
// spells it out, as spec cannot import gen).
func TestExplainSVGHeader(t *testing.T) {
	var b bytes.Buffer
	if err := ExplainSVG(&b, spec.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	want := SVGHeader + "\n<!-- " + strings.TrimPrefix(License, "// ") + " -->\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("the figure begins %.200q, want %q", b.String(), want)
	}
}
