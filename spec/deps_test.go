package spec

import (
	"os/exec"
	"strings"
	"testing"
)

// An engine imports spec at run time: it must need nothing but the standard
// library (and ropegen's own templates/exact, itself standard library only).
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/ropegen/ropegen/spec":            true,
		"github.com/ropegen/ropegen/templates/exact": true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("spec depends on %s: it must import only the standard library", p)
		}
	}
}
