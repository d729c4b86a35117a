package gen

import (
	"strings"

	"github.com/ropegen/ropegen/internal/exact"
)

// dynamicSource returns the source a dynamic NTK package needs to compute
// its frequencies when NewTable is called: internal/exact's dynamicFreqs
// and correctly rounded powers, copied verbatim, so that the package's
// tables are the ones ropegen computes, on every machine.
func dynamicSource() string { return exact.Source() }

// verbatim returns src from the line that begins with marker (a newline,
// then the line) to its end.
func verbatim(src, marker string) string {
	i := strings.Index(src, marker)
	if i < 0 {
		panic("gen: verbatim source: marker " + marker[1:] + " not found")
	}
	return strings.TrimSpace(src[i:])
}
