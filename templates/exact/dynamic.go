package exact

// Dynamic NTK decides its base from the length of the table, so a package
// that serves a dynamic NTK model computes frequencies when NewTable is
// called. It runs exactly the code ropegen runs, dynamicFreqs below and
// exactPow, both copied whole into the package, so that its tables are the
// same on every machine.

// dynamicFreqs sets f to the frequencies of dynamic NTK for a table of n
// positions, n > origCtx: θ_i = b^(−2i/r) with the base
// b = base·((factor·n/origCtx) − (factor − 1))^(r/(r−2)), as Hugging Face's
// _compute_dynamic_ntk_parameters computes it for a sequence of n tokens;
// every step rounded to float64 in that order, powers correctly rounded.
func dynamicFreqs(f []float64, base, factor float64, origCtx, r, n int) {
	t := float64(float64(factor*float64(n))/float64(origCtx)) - (factor - 1)
	b := float64(base * exactPow(t, float64(r)/float64(r-2)))
	for i := range f {
		f[i] = exactPow(b, -float64(2*i)/float64(r))
	}
}
