#!/bin/bash
# formats.sh: ApplyStore of 512 tokens' 8 key heads of 128 (524,288 values)
# into a token-major cache of each block format and f16, in one process:
# a package generated with -out-dtype f16,q8_0,q4_0,q4_1,q5_0,q5_1,mxfp4,iq4_nl,nvfp4,
# nvfp4_gs,int8_per_token_head in a
# temporary module, the formats' calls taking turns (20 at a time, the
# order rotating), each format's median ns per call reported.
# With HADAMARD=1 each format also takes turns as a Hadamard-rotated view
# (Cache.WithHadamard), reported as <format>+H.
# Usage: [HADAMARD=1] scripts/formats.sh [-benchtime N] (GODEBUG=cpu.avx512f=off for AVX2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bt=30x
[ "${1:-}" = -benchtime ] && bt=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
sed 's|^module .*|module example.com/qb|' "$root/go.mod" >"$w/go.mod"
cp "$root/go.sum" "$w/"
(cd "$root" && go run ./cmd/ropegen -dim 128 -base 10000 -out-dtype f16,q8_0,q4_0,q4_1,q5_0,q5_1,mxfp4,iq4_nl,nvfp4,nvfp4_gs,int8_per_token_head -pkg kv -o "$w/kv")
had=false
[ "${HADAMARD:-}" = 1 ] && had=true
sed "s|@HADAMARD@|$had|" >"$w/ab_test.go" <<'GO'
package qb

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"example.com/qb/kv"
)

// BenchmarkFormats: ApplyStore of 512 tokens' 8 key heads of 128 into a
// token-major cache of each type, the calls taking turns (500 at a time),
// median ns per call per format.
func BenchmarkFormats(b *testing.B) {
	const hd, hkv, tokens = 128, 8, 512
	r := kv.Default()
	t := r.NewTable(8192)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, tokens*hkv*hd)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	slots := make([]int64, tokens)
	p := make([]int32, tokens)
	for j := range slots {
		slots[j], p[j] = int64(j), int32(1000+j)
	}
	types := []string{"f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4", "nvfp4_gs", "int8_per_token_head"}
	var names []string
	var fs []func()
	for _, n := range types {
		h := r.CacheHead(n)
		es := 1
		if n == "f16" {
			es = 2
		}
		buf := make([]byte, tokens*hkv*h*es)
		c, err := kv.NewCache(n, buf, kv.Strides{Heads: hkv, Head: h, Token: hkv * h}, 64) // nvfp4_gs's g (NVIDIA's 448·6/amax for amax 42); the others ignore it
		if err != nil {
			b.Fatal(err)
		}
		names = append(names, n)
		fs = append(fs, func() { t.ApplyStore(c, slots, x, kv.Strides{Heads: hkv, Head: hd, Token: hkv * hd}, p) })
		if @HADAMARD@ {
			ch := c.WithHadamard()
			names = append(names, n+"+H")
			fs = append(fs, func() { t.ApplyStore(ch, slots, x, kv.Strides{Heads: hkv, Head: hd, Token: hkv * hd}, p) })
		}
	}
	ts := make([][]float64, len(fs))
	for i := 0; i < b.N; i++ {
		for k := range fs {
			k := (k + i) % len(fs)
			s := time.Now()
			for range 20 {
				fs[k]()
			}
			ts[k] = append(ts[k], float64(time.Since(s).Nanoseconds())/20)
		}
	}
	for k, n := range names {
		slices.Sort(ts[k])
		b.ReportMetric(ts[k][len(ts[k])/2], n+"-ns")
	}
}
GO
cd "$w" && go test -run XXX -bench Formats -benchtime "$bt" -count 3 .
