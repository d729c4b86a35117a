package verify

import "testing"

// Fuzz is the body of a generated package's FuzzKernel: it checks, for the
// inputs the fuzzer finds, that every backend gives the pure Go backend's
// bits.
func Fuzz[T Elem](f *testing.F, k Kernel[T]) {
	f.Skip("verify.Fuzz: not implemented yet")
}
