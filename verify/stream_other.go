//go:build !amd64 || purego

package verify

// streamKernels returns no assembly stream kernels: this build has none.
func streamKernels() []streamKernel { return nil }
