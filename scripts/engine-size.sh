#!/bin/bash
# engine-size.sh: the engine package (generated/engine) against the
# per-model packages it replaces for the models examples/engine serves:
# their source size, and their cold build time (a fresh GOCACHE holding
# only the standard library and x/sys/cpu, then each build timed from a
# copy of it). BENCHMARKS.md has the figures. Usage: scripts/engine-size.sh [runs]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-2}
hf=$root/spec/testdata/hf
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
(cd "$root" && go build -o "$w/ropegen" ./cmd/ropegen)
m=$w/mod
mkdir -p "$m"
printf 'module example.com/size\n\ngo 1.26\n\nrequire golang.org/x/sys %s\n' "$(awk '$1 == "golang.org/x/sys" {print $2}' "$root/go.mod")" >"$m/go.mod"
grep 'golang.org/x/sys' "$root/go.sum" >"$m/go.sum"
i=0
for model in llama-3.1-8b qwen3-8b gemma-3-4b-it:full_attention gemma-3-4b-it:sliding_attention \
	olmo-2-1124-7b llama-4-scout-17b-16e-instruct deepseek-v3 phi-3-mini-128k-instruct \
	qwen2.5-vl-7b-instruct qwen2.5-7b-instruct-yarn internlm2.5-7b-chat qwen3-vl-8b-instruct; do
	i=$((i + 1))
	pkg=$(printf 'm%02d' $i)
	layer=()
	case $model in *:*) layer=(-layer-type "${model#*:}") ;; esac
	mkdir -p "$m/$pkg"
	(cd "$m/$pkg" && "$w/ropegen" -hf-config "$hf/${model%%:*}.json" "${layer[@]}" -out-dtype f32,f16,q8_0 -pkg "$pkg")
done
mkdir -p "$m/engine"
cp "$root"/generated/engine/*.go "$root"/generated/engine/*.s "$m/engine/"
rm -f "$m"/engine/*_test.go "$m/engine/gen.go"
echo "per-model packages: $i, $(cat "$m"/m*/*.go "$m"/m*/*.s | wc -l) lines, $(cat "$m"/m*/*.go "$m"/m*/*.s | wc -c) bytes"
echo "engine package: $(cat "$m"/engine/*.go "$m"/engine/*.s | wc -l) lines, $(cat "$m"/engine/*.go "$m"/engine/*.s | wc -c) bytes"
export GOFLAGS=-mod=mod
for _ in $(seq "$runs"); do
	base=$w/cache.base
	rm -rf "$base"
	(cd "$m" && GOCACHE=$base go build std golang.org/x/sys/cpu)
	for what in './m*/' ./engine/; do
		rm -rf "$w/cache" && cp -a "$base" "$w/cache"
		s=$(date +%s%N)
		(cd "$m" && GOCACHE=$w/cache go build $what)
		echo "cold build of $what: $(( ($(date +%s%N) - s) / 1000000 )) ms"
	done
done
