#!/usr/bin/env bash
# same-kernel.sh A B FUNC...: each FUNC (a kernel's name without its
# backend suffix, e.g. store_f16_128) has the same instructions in
# generated package B as in generated package A, at every backend of
# rope_amd64.s (each TEXT block up to the next) and in rope_generic.go (the
# function up to its closing brace), the kernel's own name aside. FUNC may
# be A=B to compare A's kernel with B's of another name. make
# test-exhaustive relies on it to sweep a store kernel once.
set -euo pipefail
a=$1 b=$2
shift 2
asm() { # file, name: the TEXT block, names and the next block's header comment out
	awk -v f="$2" '$0 ~ "^TEXT ·"f"\\(SB\\)" {p=1; next} p && /^TEXT/ {exit} p && !/^\/\/ func / {print}' "$1"
}
gofunc() {
	awk -v f="$2" '$0 ~ "^func "f"\\(" {p=1; next} p && /^}/ {exit} p {print}' "$1"
}
for spec in "$@"; do
	fa=${spec%%=*} fb=${spec#*=}
	for lv in avx512 avx2; do
		x=$(asm "$a/rope_amd64.s" "${fa}_$lv") y=$(asm "$b/rope_amd64.s" "${fb}_$lv")
		if [ -z "$x" ] || [ "$x" != "$y" ]; then
			echo "same-kernel: ${fa}_$lv in $a and ${fb}_$lv in $b differ (or one is missing)" >&2
			exit 1
		fi
	done
	x=$(gofunc "$a/rope_generic.go" "${fa}_generic") y=$(gofunc "$b/rope_generic.go" "${fb}_generic")
	if [ -z "$x" ] || [ "$x" != "$y" ]; then
		echo "same-kernel: ${fa}_generic in $a and ${fb}_generic in $b differ (or one is missing)" >&2
		exit 1
	fi
done
echo "same-kernel: $* the same in $a and $b"
