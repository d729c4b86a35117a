package rt

// Hadamard multiplies the heads of n rows of x by H in place, the
// normalized Walsh–Hadamard matrix of a Hadamard-rotated cache
// (Cache.WithHadamard): head h of row j is x[j·xs.Token + h·xs.Head :]
// [:HeadDim], transformed with the bits every cache entry point gives it
// (docs/contract.md §15). H is its own inverse, so one call takes rows from
// H's basis back, up to rounding: attention's output rows, weighted sums
// of values loaded in H's basis, or keys loaded as stored. A negative n, a
// view field that is not positive or a view that does not fit x panics
// before anything is written, naming the value; so does a HeadDim whose
// block (its largest power-of-two divisor) is below 16, or above 1024.
func (r *Rotary) Hadamard(x []float32, xs Strides, n int) {
	const fn = "Rotary.Hadamard"
	r.checkNil(fn)
	had := r.hadamard(fn, "x")
	if n < 0 {
		panicf("%s: n = %d: want n >= 0 rows", fn, n)
	}
	r.checkTokens(fn, "xs", xs, len(x), n, "n")
	if n == 0 {
		return
	}
	if xs.Token == xs.Heads*xs.Head {
		had(x, xs.Head, n*xs.Heads)
		return
	}
	for j := range n {
		had(x[j*xs.Token:], xs.Head, xs.Heads)
	}
}
