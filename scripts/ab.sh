#!/bin/bash
# ab.sh: several versions of one generated package measured in one
# process. Each version is a git revision of generated/PKG ("." is the
# working tree); their calls take turns, 500 at a time (fewer for a long
# call), the order rotating, and each version's median ns per call is
# reported. Taking turns within a process cancels the machine's drift,
# which moves whole processes by ±20–40% on the VMs BENCHMARKS.md was
# measured on; a ratio between versions is then stable to a few percent.
#
# Modes (the shapes of verify's benchmarks: Llama 3 8B's 32 query and 8
# key heads of 128, positions from 1000 on):
#   qk         ApplyQK on TOKENS fused QKV rows (the default; TOKENS 1: a
#              decode step); with -norm, ApplyNormQK too (a QK-norm package)
#   apply      Apply on one token's 32 contiguous heads (TOKENS 1), or
#              ApplySeq on TOKENS tokens of them
#   store      ApplyStore of TOKENS tokens' 8 key heads and Store of their
#              values into a token-major cache of the package's cache type
#              (-cache f16 or q8_0), slot j for token j
#   shift      Shift of a 4096-token cache by −1000
#
# Usage: scripts/ab.sh [-mode M] [-norm] [-cache T] [-tokens N]
#                             [-rounds N] [-procs P] PKG NAME=REV...
# e.g.   scripts/ab.sh -norm qwen3 old=2add870 new=.
# Set GODEBUG=cpu.avx512f=off for the AVX2 level.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=qk norm=0 cache=f16 rounds=200 procs=3 tokens=1
while [ $# -gt 0 ]; do
	case $1 in
	-mode) mode=$2; shift ;;
	-norm) norm=1 ;;
	-cache) cache=$2; shift ;;
	-tokens) tokens=$2; shift ;;
	-rounds) rounds=$2; shift ;;
	-procs) procs=$2; shift ;;
	*) break ;;
	esac
	shift
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [-mode qk|apply|store|shift] [-norm] [-cache f16|q8_0] [-tokens N] [-rounds N] [-procs P] PKG NAME=REV..." >&2
	exit 2
fi
case $cache in
f16) ctype=uint16 cview=F16Cache ;;
q8_0) ctype=uint8 cview=Q80Cache ;;
*) echo "$0: -cache $cache: want f16 or q8_0" >&2; exit 2 ;;
esac
[ "$mode" = shift ] && tokens=4096
pkg=$1
shift
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
m=$w/mod
mkdir -p "$m"
sed 's|^module .*|module example.com/ab|' "$root/go.mod" >"$m/go.mod"
cp "$root/go.sum" "$m/"
imports="" calls=""
call() { calls+="	vs = append(vs, v{\"$1\", func() { $2 }})"$'\n'; }
for v in "$@"; do
	n=${v%%=*} rev=${v#*=}
	mkdir -p "$m/$n"
	if [ "$rev" = . ]; then
		for f in "$root/generated/$pkg"/*.go "$root/generated/$pkg"/*.s; do
			case $f in *_test.go | */gen.go) continue ;; esac
			cp "$f" "$m/$n/"
		done
	else
		for f in $(cd "$root" && git ls-tree --name-only "$rev" "generated/$pkg/"); do
			case $f in *_test.go | */gen.go) continue ;; esac
			(cd "$root" && git show "$rev:$f") >"$m/$n/$(basename "$f")"
		done
	fi
	imports+="	$n \"example.com/ab/$n\""$'\n'
	calls+="	t_$n := $n.NewTable(8192)"$'\n'
	# A package with cache views (rt's run-time) or the older one, whose
	# cache entry points took the buffer and its strides.
	views=0
	grep -q "^func $cview(" "$m/$n"/*.go && views=1
	case $mode in
	qk)
		call "$n-qk" "t_$n.ApplyQK(x, $n.Strides(qs), x[hq*hd:], $n.Strides(ks), p)"
		[ $norm = 1 ] && call "$n-norm" "t_$n.ApplyNormQK(x, $n.Strides(qs), qw, x[hq*hd:], $n.Strides(ks), kw, p)"
		;;
	apply)
		if [ "$tokens" = 1 ]; then
			call "$n-apply" "t_$n.Apply(x[:hq*hd], int(p[0]))"
		else
			call "$n-applyseq" "t_$n.ApplySeq(x[:tokens*hq*hd], p)"
		fi
		;;
	store | shift)
		calls+="	c_$n := make([]$ctype, tokens*hkv*$n.CacheHead)"$'\n'
		calls+="	cs_$n := $n.Strides(strides{hkv, $n.CacheHead, hkv * $n.CacheHead})"$'\n'
		if [ $views = 1 ]; then
			calls+="	cv_$n := $n.$cview(c_$n, cs_$n)"$'\n'
			store="t_$n.ApplyStore(cv_$n, slots, x, $n.Strides(kvs), p); $n.Store(cv_$n, slots, x[tokens*hkv*hd:], $n.Strides(kvs))"
			shift="t_$n.Shift(cv_$n, slots, delta)"
		else
			store="t_$n.ApplyStore(c_$n, cs_$n, slots, x, $n.Strides(kvs), p); $n.Store(c_$n, cs_$n, slots, x[tokens*hkv*hd:], $n.Strides(kvs))"
			shift="t_$n.Shift(c_$n, cs_$n, slots, delta)"
		fi
		calls+="	$store"$'\n' # fills the cache for shift
		if [ $mode = store ]; then call "$n-store" "$store"; else call "$n-shift" "$shift"; fi
		;;
	*) echo "$0: -mode $mode: want qk, apply, store or shift" >&2; exit 2 ;;
	esac
done
cat >"$m/ab_test.go" <<EOF
package ab

import (
	"slices"
	"testing"
	"time"

$imports)

const hd, hq, hkv, tokens = 128, 32, 8, $tokens

type v struct {
	name string
	f    func()
}

type strides struct{ Heads, Head, Token int }

func BenchmarkAB(b *testing.B) {
	row := (hq + 2*hkv) * hd
	x := make([]float32, tokens*row)
	for i := range x {
		x[i] = float32(i%7+1) * 0.25
	}
	// One weight for every value: the calls repeated in place then keep
	// the values where they are (see verify's norm benchmarks).
	qw, kw := make([]float32, hd), make([]float32, hd)
	for i := range qw {
		qw[i], kw[i] = 0.75, 1.25
	}
	qs, ks := strides{hq, hd, row}, strides{hkv, hd, row}
	kvs := strides{hkv, hd, hkv * hd} // store: x holds the keys, then the values
	p := make([]int32, tokens)
	slots := make([]int64, tokens)
	delta := make([]int32, tokens)
	for j := range p {
		p[j], slots[j], delta[j] = int32(1000+j), int64(j), -1000
	}
	_, _, _, _, _, _ = qw, kw, qs, ks, kvs, delta
	var vs []v
$calls
	calls := max(1, 500/tokens)
	ts := make([][]float64, len(vs))
	for r := range b.N {
		for i := range vs {
			k := (i + r) % len(vs)
			t0 := time.Now()
			for range calls {
				vs[k].f()
			}
			ts[k] = append(ts[k], float64(time.Since(t0).Nanoseconds())/float64(calls))
		}
	}
	for k, t := range ts {
		slices.Sort(t)
		b.ReportMetric(t[len(t)/2], vs[k].name+"-ns")
	}
	b.ReportMetric(0, "ns/op")
}
EOF
(cd "$m" && gofmt -w ab_test.go && GOFLAGS=-mod=mod go test -c -o "$w/ab.test" .)
for _ in $(seq "$procs"); do
	"$w/ab.test" -test.run '^$' -test.bench AB -test.benchtime "${rounds}x" | grep '^BenchmarkAB' | tr -s ' \t' ' '
done
