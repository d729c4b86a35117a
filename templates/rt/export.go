package rt

// Sincos is sincos, for ropegen's own use (its plans' figures): the sines
// and cosines of pos·freqs[i], the same bits on every machine. This file is
// not copied into generated packages.
func Sincos(sin, cos []float64, pos float64, freqs []float64) { sincos(sin, cos, pos, freqs) }
