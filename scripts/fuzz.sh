#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the module (gen's FuzzSpec, each
# generated package's FuzzKernel, verify's own) for a bounded time each and
# print how many executions each ran.
#
#	FUZZTIME=20s   time per target (a go test -fuzztime value: 20s, 1m, 5000x;
#	               a bare number means seconds)
#	FUZZPKGS=...   packages to search for targets (default: the module's
#	               packages outside internal/, where scratch packages live)
#	FUZZMATCH=re   only targets whose "package.Target" matches re
#
# A failing input is written by go test to the package's
# testdata/fuzz/<Target>/ and makes this script exit 1 after the remaining
# targets have run; new interesting inputs stay in the go build cache.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" at the end of a duration -fuzztime when a worker is slow to stop
# (golang/go#75804, fixed in Go 1.27): such a run that wrote no failing input
# is reported as FLAKE and does not fail the script. A count (FUZZTIME=200000x)
# has no deadline and avoids it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
fuzztime=${FUZZTIME:-20s}
[[ $fuzztime =~ ^[0-9]+$ ]] && fuzztime=${fuzztime}s
pkgs=${FUZZPKGS:-$($GO list ./... | grep -v '/internal/')}
match=${FUZZMATCH:-.}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
status=0
# "go test -list" prints each package's matching tests, then "ok  <pkg>".
if ! $GO test -run '^$' -list '^Fuzz' $pkgs >"$tmp" 2>&1; then
	echo "fuzz.sh: go test -list failed for some packages; fuzzing the others:" >&2
	grep -v '^Fuzz\|^ok\|^?' "$tmp" >&2
	status=1
fi
mapfile -t targets < <(awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok/   { for (i = 0; i < n; i++) print $2 " " names[i]; n = 0 }' "$tmp")
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found in $pkgs" >&2
	exit 1
fi

total=0
summary=()
for t in "${targets[@]}"; do
	pkg=${t% *}
	name=${t#* }
	[[ "$pkg.$name" =~ $match ]] || continue
	echo "== $pkg $name (-fuzztime $fuzztime)"
	corpus="$($GO list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null)
	$GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >"$tmp" 2>&1
	rc=$?
	crashers=$(comm -13 <(printf '%s\n' "$before" | sort) <(ls "$corpus" 2>/dev/null | sort) | grep -v '^$')
	# The last progress line holds the total: "fuzz: elapsed: 20s, execs: 123 (6/sec), …".
	execs=$(grep -o 'execs: [0-9]*' "$tmp" | tail -n 1 | awk '{print $2}')
	execs=${execs:-0}
	# Before fuzzing, each worker runs the corpus: "gathering baseline coverage: 28/69".
	baseline=$(grep -o 'baseline coverage: [0-9]*/[0-9]*' "$tmp" | tail -n 1 | awk '{print $3}')
	note="$execs execs"
	if [ "$execs" = 0 ] && [ -n "$baseline" ]; then
		note="0 execs (only the corpus ran: baseline $baseline; raise FUZZTIME)"
	fi
	total=$((total + execs))
	grep '^fuzz: elapsed' "$tmp" | tail -n 1 | sed 's/^/   /'
	if [ $rc -eq 0 ]; then
		summary+=("$(printf '%-5s %-50s %-16s %s' ok "$pkg" "$name" "$note")")
	elif [ -z "$crashers" ] && grep -q '^    context deadline exceeded$' "$tmp"; then
		echo "   FLAKE: context deadline exceeded at the end of -fuzztime with no failing input (golang/go#75804)"
		summary+=("$(printf '%-5s %-50s %-16s %s' FLAKE "$pkg" "$name" "$note (golang/go#75804)")")
	else
		[ -n "$crashers" ] && echo "   failing input: $corpus/$crashers"
		cat "$tmp"
		summary+=("$(printf '%-5s %-50s %-16s %s' FAIL "$pkg" "$name" "$note")")
		status=1
	fi
done
echo
echo "== fuzz summary (-fuzztime $fuzztime)"
printf '%s\n' "${summary[@]}"
echo "total: $total executions"
exit $status
