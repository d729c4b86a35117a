# ropegen: `make test` is what CI runs (.ci/run); `make generate` rewrites
# generated/; `make bench` prints benchstat-readable results.

GO ?= go
BENCHCOUNT ?= 6
# Packages whose tests run a second time under arm64 emulation.
ARM64_PKGS ?= ./generated/... ./verify/... ./asm/...

.PHONY: test test-exhaustive race generate check-generated vet gofmt unit dispatch arm64 downstream bench tools fuzz

test: tools gofmt vet unit race dispatch test-exhaustive arm64 check-generated downstream

generate:
	$(GO) generate ./generated/...

check-generated:
	./scripts/check-generated.sh

gofmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# go vet checks assembly frames (asmdecl) too: once per assembly architecture.
vet:
	$(GO) vet ./...
	$(GO) vet -tags purego ./...
	GOARCH=arm64 $(GO) vet ./...

# gen's tests build and test dozens of generated packages: give them time.
unit:
	$(GO) test -timeout 30m ./...
	$(GO) test -tags purego ./generated/...

# The default backend must follow the CPU flags and the purego tag.
# Every float32 through every assembly narrowing (f16, bf16) against pure Go.
test-exhaustive:
	ROPEGEN_EXHAUSTIVE=1 $(GO) test -count=1 -run TestNarrowExhaustive -v ./generated/...

# On a CPU without AVX-512 (or AVX2) the first lines test what they can and
# say so; the generated TestDispatch skips a level the CPU lacks.
dispatch:
	GODEBUG=cpu.avx512f=off ROPEGEN_WANT_BACKEND=avx2 $(GO) test -count=1 -run TestDispatch ./generated/...
	GODEBUG=cpu.avx512f=off,cpu.avx2=off ROPEGEN_WANT_BACKEND=generic $(GO) test -count=1 -run TestDispatch ./generated/...
	ROPEGEN_WANT_BACKEND=generic $(GO) test -count=1 -tags purego -run TestDispatch ./generated/...

# arm64 tests under qemu-user. Without qemu they are SKIPPED loudly, and
# with ROPEGEN_REQUIRE_ARM64=1 (set by .ci/run) that is a failure.
arm64:
	@if command -v qemu-aarch64-static >/dev/null 2>&1; then \
		echo "== arm64 tests under qemu-aarch64-static"; \
		GOARCH=arm64 $(GO) test -short -exec qemu-aarch64-static $(ARM64_PKGS) || exit 1; \
		echo "== sincos: the same bits on amd64 and arm64"; \
		bits=$$(mktemp -u); \
		ROPEGEN_SINCOS_BITS=$$bits $(GO) test -count=1 -v -run TestSincosAcrossArchs ./gen/ || exit 1; \
		ROPEGEN_SINCOS_BITS=$$bits GOARCH=arm64 $(GO) test -count=1 -v -exec qemu-aarch64-static -run TestSincosAcrossArchs ./gen/; \
		rc=$$?; rm -f $$bits; [ $$rc = 0 ] || exit 1; \
	elif [ "$$ROPEGEN_REQUIRE_ARM64" = 1 ]; then \
		echo "FAIL: arm64 tests need qemu-aarch64-static (ROPEGEN_REQUIRE_ARM64=1)"; exit 1; \
	else \
		echo "################################################################"; \
		echo "## SKIPPED: arm64 tests: qemu-aarch64-static not found.        ##"; \
		echo "## Run 'make tools' as root to install qemu-user-static.       ##"; \
		echo "################################################################"; \
	fi

# A downstream module runs ropegen from go:generate (and as a go tool),
# vendors it and builds.
downstream:
	./scripts/downstream.sh "$(CURDIR)"

# Installs what the tests need from Debian's packages when root and missing.
tools:
	@need=""; \
	command -v qemu-aarch64-static >/dev/null 2>&1 || need="$$need qemu-user-static"; \
	command -v aarch64-linux-gnu-as >/dev/null 2>&1 || need="$$need binutils-aarch64-linux-gnu"; \
	if [ -n "$$need" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "== installing$$need"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null; \
		else \
			echo "== not root: cannot install$$need (arm64 tests will be skipped)"; \
		fi; \
	fi

# Every backend against the baselines (verify.Bench), f32 in both layouts and
# f16/bf16 storage, one package at a time (-p 1): feed the output to
# benchstat, e.g. `make bench | tee new.txt; benchstat new.txt`.
BENCHPKGS ?= ./generated/rope128 ./generated/rope128neox ./generated/rope128f16 ./generated/rope128bf16

bench:
	$(GO) test -p 1 -run '^$$' -bench . -count $(BENCHCOUNT) $(BENCHPKGS)

# Many goroutines sharing one Table, under the race detector (which does not
# see accesses made from assembly).
race:
	$(GO) test -race -short -count=1 -run 'TestVerify/concurrent|TestRace' ./generated/... ./verify/...

# Every fuzz target for FUZZTIME each (scripts/fuzz.sh); the seed corpora run
# in make test.
FUZZTIME ?= 20s
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh
