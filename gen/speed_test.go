package gen

import (
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// Generator speed: ropegen -dim 4096 must finish well under a
// second. These benchmarks measure it; there is no timed test, as a loaded
// machine would make one flaky (TestGenericKernelLoopsLongHeads bounds the
// size of the pure Go kernels instead). Run
//
//	go test ./gen -run '^$' -bench 'Generate4096|Frequencies4096' -benchtime 5x
//
// On a shared 2-vCPU VM (AMD Turin-class): Generate4096 ~0.2 s, NeoXBF16
// ~0.3 s, F64 ~0.2 s, Frequencies4096 ~15 ms (before the generator looped: 0.8 s,
// 1.0 s, 0.76 s and 0.26 s, with the amd64 emitter already looping). Most
// of what is left is the arm64 templates, the amd64 emitter and goimports
// on rope.go.

func benchGenerate(b *testing.B, s spec.Spec) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(s, Options{Command: "-bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate4096 is `ropegen -dim 4096`.
func BenchmarkGenerate4096(b *testing.B) { benchGenerate(b, specOf(4096, 0, spec.Interleaved)) }

// BenchmarkGenerate4096NeoXBF16 is `ropegen -dim 4096 -layout neox -out-dtype bf16`.
func BenchmarkGenerate4096NeoXBF16(b *testing.B) {
	s := specOf(4096, 0, spec.NeoX)
	s.Caches = []spec.CacheType{spec.CacheBF16}
	benchGenerate(b, s)
}

// BenchmarkGenerate4096F64 is `ropegen -dim 4096 -dtype f64`.
func BenchmarkGenerate4096F64(b *testing.B) {
	s := specOf(4096, 0, spec.Interleaved)
	s.DType = "f64"
	benchGenerate(b, s)
}

// BenchmarkGenerate128 is `ropegen` with no flags.
func BenchmarkGenerate128(b *testing.B) { benchGenerate(b, spec.DefaultSpec()) }

// BenchmarkFrequencies4096 is the frequencies of a 4096-wide head: 2048
// correctly rounded powers.
func BenchmarkFrequencies4096(b *testing.B) {
	s := specOf(4096, 0, spec.Interleaved)
	for b.Loop() {
		if _, _, _, err := spec.Frequencies(s); err != nil {
			b.Fatal(err)
		}
	}
}
