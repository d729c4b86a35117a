package gen

import "github.com/ropegen/ropegen/internal/exact"

// dynamicSource returns the source a package that computes dynamic NTK
// frequencies at run time needs: internal/exact's dynamicFreqs and
// correctly rounded powers, copied verbatim, so that the package's tables
// are the ones ropegen computes, on every machine.
func dynamicSource() string { return exact.Source() }
