package rt

import "github.com/ropegen/ropegen/internal/exact"

// In a generated package dynamicFreqs is internal/exact's code, copied
// verbatim beside rope_dynamic.go's init; here it calls it.

func init() { dynamicNTK = dynamicFreqs }

// dynamicFreqs is internal/exact's dynamicFreqs.
func dynamicFreqs(f []float64, base, factor float64, origCtx, r, n int) {
	exact.DynamicFreqs(f, base, factor, origCtx, r, n)
}
