package rt

import "github.com/ropegen/ropegen/templates/exact"

// dynamicFreqs is package exact's dynamicFreqs. A package that computes
// dynamic NTK frequencies holds a copy of exact's dynamic.go and pow.go
// instead of this file.
func dynamicFreqs(f []float64, base, factor float64, origCtx, r, n int) {
	exact.DynamicFreqs(f, base, factor, origCtx, r, n)
}
