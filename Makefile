# ropegen: `make test` is what CI runs (.ci/run); `make generate` rewrites
# generated/; `make bench` prints benchstat-readable results.

GO ?= go
BENCHCOUNT ?= 6
# Packages whose tests run a second time under arm64 emulation: the
# generated packages (NEON), verify's own checks, the NEON encoder's words
# run natively, and the engine example (every model on NEON, bit for bit).
# The generator's own tests test nothing new there: check-generated proves
# ropegen writes the same bytes on arm64. (The model packages generated/ does
# not keep, gen's modelPackages, run under qemu in gen's TestModelPackages,
# part of unit.)
ARM64_PKGS ?= ./generated/... ./verify/... ./asm/neon/ ./examples/engine/...

# qemu-user's riscv64 CPU with the V extension (RVV 1.0) at VLEN 128, the
# agnostic tail and mask lanes written as all ones (a kernel that relies
# on them fails): internal/qemu's RISCV64CPU(128), which the tests that start
# qemu themselves use (its test checks this line).
RISCV64_QEMU ?= qemu-riscv64-static -cpu rv64,v=true,vlen=128,vext_spec=v1.0,rvv_ta_all_1s=true,rvv_ma_all_1s=true
# The same without the V extension (internal/qemu's RISCV64NoV): the pure Go
# dispatch. qemu 8.1 and later report V through riscv_hwprobe, 7.2 never does.
RISCV64_QEMU_NOV ?= qemu-riscv64-static -cpu rv64,v=false

.PHONY: check test test-exhaustive race generate check-generated vet gofmt unit dispatch arm64 riscv64 cross downstream bench tools fuzz

test: tools gofmt vet unit race dispatch test-exhaustive cross check-generated downstream

# A developer's loop (a few minutes): gofmt, vet for this machine, the
# short tests of everything but the generated packages, and three
# generated packages' suites (a per-spec f32 package, the engine package,
# a quantized cache) on every backend this CPU has. make test is what CI
# runs.
CHECKPKGS ?= ./generated/rope128 ./generated/engine ./generated/kv128q8
check: gofmt
	$(GO) vet ./...
	$(GO) test -short $$($(GO) list ./... | grep -v /generated/)
	$(GO) test -short $(CHECKPKGS)

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
	GOARCH=riscv64 $(GO) vet ./...

# gen's tests build and test dozens of generated packages: give them time.
unit:
	$(GO) test -timeout 60m ./...
	$(GO) test -tags purego ./generated/...

# The default backend must follow the CPU flags and the purego tag.
# Every float32 through every assembly narrowing (f16, bf16) against pure Go,
# and through every backend's f16, bf16 and e4m3 cache store against verify.
# The engine package's f16 store kernels are kv128f16's, instruction for
# instruction (scripts/same-kernel.sh checks it first), so its f16 sweep,
# three minutes here, would repeat kv128f16's: it sweeps its other types.
test-exhaustive:
	./scripts/same-kernel.sh generated/kv128f16 generated/engine store_f16_128
	ROPEGEN_EXHAUSTIVE=1 $(GO) test -count=1 -run 'TestNarrowExhaustive|TestCacheExhaustive' -v $$($(GO) list ./generated/... | grep -v '/generated/engine$$')
	ROPEGEN_EXHAUSTIVE=1 $(GO) test -count=1 -run 'TestNarrowExhaustive|TestCacheExhaustive' -skip 'TestCacheExhaustive/f16$$' -v ./generated/engine

# On a CPU without AVX-512 (or AVX2) the first lines test what they can and
# say so; the generated TestDispatch skips a level the CPU lacks.
dispatch:
	GODEBUG=cpu.avx512f=off ROPEGEN_WANT_BACKEND=avx2 $(GO) test -count=1 -run TestDispatch ./generated/...
	GODEBUG=cpu.avx512f=off,cpu.avx2=off ROPEGEN_WANT_BACKEND=generic $(GO) test -count=1 -run TestDispatch ./generated/...
	ROPEGEN_WANT_BACKEND=generic $(GO) test -count=1 -tags purego -run TestDispatch ./generated/...

# Both at once: each spends most of its time in one qemu process (the
# engine package's tests), so the two overlap on two cores; -Otarget keeps
# each one's output together.
cross:
	$(MAKE) --no-print-directory -j2 -Otarget arm64 riscv64

# The cross architectures' tests under qemu-user, one recipe
# (scripts/cross.sh: what each runs). Without qemu they are SKIPPED
# loudly, and with ROPEGEN_REQUIRE_ARM64=1 / ROPEGEN_REQUIRE_RISCV64=1 (set
# by .ci/run) that is a failure.
arm64 riscv64:
	GO="$(GO)" ARM64_PKGS="$(ARM64_PKGS)" RISCV64_QEMU="$(RISCV64_QEMU)" RISCV64_QEMU_NOV="$(RISCV64_QEMU_NOV)" ./scripts/cross.sh $@

# A downstream module runs ropegen from go:generate (and as a go tool),
# vendors it and builds.
downstream:
	./scripts/downstream.sh "$(CURDIR)"

# Installs what the tests need from Debian's packages when root and missing,
# and qemu-user-static when its qemu-riscv64-static is older than 8.1 (from
# bookworm-backports on Debian 12): scripts/tools.sh.
tools:
	@./scripts/tools.sh

# Every backend against the baselines (verify.Bench), f32 in both layouts,
# f16/bf16 storage, a multi-axis (M-RoPE) package and a QK-norm one (Qwen3-8B:
# ApplyNormQK), one package at a time (-p 1): feed the output to
# benchstat, e.g. `make bench | tee new.txt; benchstat new.txt`.
BENCHPKGS ?= ./generated/rope128 ./generated/rope128f16 ./generated/rope128bf16 ./generated/qwen3 ./generated/engine

# Issue 24's comparisons: the engine package against a per-spec package
# (decode, 512-token prefill) and Prep against ApplyNormQK then Store.
BENCHENGINEPKGS ?= ./examples/engine

# The KV-cache forms (verify.Bench's cache/…): f16, e4m3 and q8_0 caches.
BENCHCACHEPKGS ?= ./generated/kv128f16 ./generated/kv128e4m3 ./generated/kv128q8

bench:
	$(GO) test -p 1 -run '^$$' -bench . -count $(BENCHCOUNT) $(BENCHPKGS)
	$(GO) test -p 1 -run '^$$' -bench 'Rope/cache/' -count $(BENCHCOUNT) $(BENCHCACHEPKGS)
	$(GO) test -p 1 -run '^$$' -bench . -count $(BENCHCOUNT) $(BENCHENGINEPKGS)

# Many goroutines sharing one Table, under the race detector (which does not
# see accesses made from assembly).
race:
	$(GO) test -race -short -count=1 -run 'TestVerify/concurrent|TestRace' ./generated/... ./verify/...

# Every fuzz target for FUZZTIME each (scripts/fuzz.sh); the seed corpora run
# in make test.
FUZZTIME ?= 20s
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh
