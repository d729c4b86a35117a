package verify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Bench runs k's benchmarks as sub-benchmarks of b, named for benchstat:
//
//	decode/backend=<name>       Table.Apply on 32 heads at one position, per backend
//	decode/rotate               tableless Rotate on the same input, default backend
//	decode/baseline=plainloop   the plain Go loop over []float32 cos and sin tables
//	decode/baseline=stream      the stream kernel on the same bytes: the memory limit
//	decode/baseline=stream-avx2 the same at AVX2, where the best level is wider
//	prefill/backend=<name>      Table.ApplySeq on 512 tokens × 32 heads at 0..511
//	prefill/baseline=plainloop  the plain loop, token by token
//	prefill/baseline=stream     the stream kernel on the whole sequence at once
//	prefill/baseline=stream-avx2
//	prefill4k/backend=<name>    Table.ApplySeq on 4096 tokens × 32 heads, default backend
//	prefill4k/parallel=2        ApplySeqParallel with 2 workers, where the table has it
//	prefill4k/baseline=stream   (and stream-avx2)
//	axes/backend=<name>         multi-axis packages: ApplyAxes on 512 image tokens × 32 heads
//	axes/worst/backend=<name>   ApplyAxes with every axis moving every token
//	axes/seq/backend=<name>     ApplySeq on the same bytes, for the ratio
//	decodeqk/backend=<name>     packages with strides: ApplyQK on one fused QKV row of
//	                            32 q + 8 k + 8 v heads (Llama 3 8B) at one position
//	decodeqk/baseline=split     Table.Apply on contiguous q (32 heads), then k (8 heads)
//	decodeqk/baseline=copyloop  each q and k head of the fused row copied out, Apply, copied back
//	decodeqk/baseline=stream    the stream kernel on the q and k bytes (and stream-avx2)
//	prefillqk/backend=<name>    ApplyQK on 512 fused QKV rows at 0..511
//	prefillqk/baseline=split    ApplySeq on contiguous q, then k, of 512 tokens
//	prefillqk/baseline=stream   (and stream-avx2) on the q and k bytes
//	headmajor/backend=<name>    ApplyStrided on a head-major [32 heads][512 tokens] buffer
//	headmajor/baseline=stream   (and stream-avx2)
//	prefillnorm/…, decodenorm/… packages with a QK-norm: ApplyNormQK on Qwen3-8B's
//	                            shapes against the stream kernel, ApplyQK alone and the
//	                            norm and ApplyQK apart (see normBench)
//	cache/…                     packages with a cache type: see cacheBench
//	table/…                     building tables: see tableBench
//
// Every group is one benchGroup: its call's bytes are its SetBytes (for
// decodeqk and prefillqk the q and k heads the call rotates, for the cache
// forms the bytes read plus those written), so benchstat reports
// throughput, and med-ns/op (see timeCall) is the median over timed
// batches, steadier than ns/op on a busy machine. The decode input
// (32·HeadDim values) stays in L1; the prefill input (HeadDim·64 KiB for
// f32) does not fit in L2. The stream baseline (streamCall) reads and writes
// the call's bytes and nothing else, at the best level the CPU has (and
// again at AVX2): no kernel that moves those bytes can beat it, so the
// ratio of a backend to it is how far the backend is from the memory
// system's limit. The plain loop is the one a Go developer would write:
// cos[pos*half+i] and sin[pos*half+i] tables (float64 for f64),
// layout-aware, float32(a*c) - float32(b*s); f16 elements go through
// x448/float16 and bf16 through a bit shift and a rounding add. A buffer
// rotated in place over and over is restored from a copy every few
// iterations (every 4096 when A = 1, more often otherwise so that A^n can
// neither overflow nor reach subnormals), a cost all variants share. Bench
// leaves Backends[0] active.
func Bench[T Elem](b *testing.B, k Kernel[T]) {
	s, err := newSuite(k)
	if err != nil {
		b.Fatalf("verify: invalid Kernel: %v", err)
	}
	backends := k.Backends
	restore := func() {}
	if len(backends) == 0 {
		backends = []Backend{{Name: "default", Use: restore}}
	} else {
		restore = k.Backends[0].Use
	}
	restore()
	defer restore()
	if err := s.buildTable(); err != nil {
		b.Fatalf("verify: %v", err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var groups []benchGroup
	for _, ep := range s.benchEntries() {
		groups = append(groups, ep.bench(rng)...)
	}
	if sf, ok := any(s).(*suite[float32]); ok {
		for _, c := range k.Caches {
			groups = append(groups, c.bench(sf, len(k.Caches) > 1, rng)...)
		}
	}
	if s.paramsOK() {
		groups = append(groups, s.tableBench())
	}
	every := s.resetEvery()
	for _, g := range groups {
		if g.every == 0 {
			g.every = every
		}
		g.run(b, backends, restore)
	}
}

// benchEntries are the entry points of k that Bench times, in its order
// (the cache forms, whose suites are per cache type, come after them).
func (s *suite[T]) benchEntries() []entryPoint {
	eps := []entryPoint{s.baseEntries()}
	if s.k.Axes != nil {
		eps = append(eps, s.axesEntries())
	}
	if st := s.k.Strided; st != nil && st.ApplyQK != nil && st.ApplyStrided != nil {
		eps = append(eps, s.stridedEntries())
	}
	if ok, _ := s.normState(); ok {
		eps = append(eps, s.normEntries())
	}
	return eps
}

// ---- the benchmark driver ---------------------------------------------------------

// timed is one sub-benchmark of a group: a call timed on its slices.
type timed struct {
	// name is its name under the group's ("rotate", "baseline=plainloop");
	// with perBackend it is timed on every backend as name/backend=<name>.
	name       string
	c          *call
	perBackend bool
	// bytes is its SetBytes when the group has no main call.
	bytes int64
}

// benchGroup is one group of sub-benchmarks ("decode", "cache/prefill"):
// the call main at one shape, timed as backend=<name> on every backend (on
// the default one alone with only), then extra, other forms of the same
// work and baselines, on the default backend unless perBackend, then the
// stream baseline of main's bytes (streamCall) unless noStream. Every
// sub-benchmark's SetBytes is main's bytes (bytesMoved). check, when set,
// runs once before timing: "" or why the group's calls disagree.
type benchGroup struct {
	name     string
	main     *call
	only     bool
	extra    []timed
	noStream bool
	// every is how many calls a slice changed in place takes before it is
	// restored from its input (0: Bench's resetEvery; negative: never).
	every int
	check func() string
}

// run runs g as sub-benchmarks of b on backends; restore makes the default
// backend active.
func (g benchGroup) run(b *testing.B, backends []Backend, restore func()) {
	b.Run(g.name, func(b *testing.B) {
		if g.check != nil {
			if d := g.check(); d != "" {
				b.Fatalf("%s: %s", g.name, d)
			}
		}
		var bytes int64
		if g.main != nil {
			ip, r, w := g.main.bytesMoved()
			bytes = ip + r + w
			bs := backends
			if g.only {
				bs = backends[:1]
			}
			for _, be := range bs {
				b.Run("backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					timeCall(b, g.main, bytes, g.every)
				})
			}
		}
		for _, x := range g.extra {
			n := bytes
			if g.main == nil {
				n = x.bytes
			}
			if !x.perBackend {
				restore()
				b.Run(x.name, func(b *testing.B) { timeCall(b, x.c, n, g.every) })
				continue
			}
			for _, be := range backends {
				b.Run(x.name+"/backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					timeCall(b, x.c, n, g.every)
				})
			}
		}
		restore()
		if g.main == nil || g.noStream {
			return
		}
		ks := append(streamKernels(), streamGo)
		b.Run("baseline=stream", func(b *testing.B) { timeCall(b, streamCall(g.main, ks[0]), bytes, g.every) })
		for _, sk := range ks[1:] {
			if sk.name == "avx2" {
				b.Run("baseline=stream-avx2", func(b *testing.B) { timeCall(b, streamCall(g.main, sk), bytes, g.every) })
			}
		}
	})
}

// streamCall is the stream baseline of c at level sk: the bytes c changes
// in place multiplied by 1 in place (streamRun: float64 values when c's
// first slice changed in place holds them, float32 otherwise), then the
// bytes it only reads read once and the bytes it only writes written once,
// interleaved (streamMove). No call that moves those bytes can take less
// time on the same machine: the memory system's limit for c.
func streamCall(c *call, sk streamKernel) *call {
	ip, r, w := c.bytesMoved()
	f64 := false
	for _, a := range c.args {
		if a.mode() == inPlace {
			f64 = a.elemSize() == 8
			break
		}
	}
	fill := func(n int64) []float32 {
		x := make([]float32, n/4)
		for i := range x {
			x[i] = 0.75
		}
		return x
	}
	src := newBuf("src", fill(r), reads)
	dst := newBuf("dst", make([]float32, w/4), writes)
	sc := &call{what: "stream " + sk.name, args: []arg{src, dst}}
	if f64 {
		x := make([]float64, ip/8)
		for i := range x {
			x[i] = 0.75
		}
		xa := newBuf("x", x, inPlace)
		sc.args = append(sc.args, xa)
		sc.run = func() { streamRun(sk, xa.cur); streamMove(sk, dst.cur, src.cur) }
		return sc
	}
	xa := newBuf("x", fill(ip), inPlace)
	sc.args = append(sc.args, xa)
	sc.run = func() { streamRun(sk, xa.cur); streamMove(sk, dst.cur, src.cur) }
	return sc
}

// benchBatch is the least time timeCall's batches take.
const benchBatch = 20 * time.Microsecond

// timeCall times c on fresh copies of its inputs, with SetBytes(bytes),
// restoring the slices it changes in place from their inputs every
// `every` calls (never for every < 0). Besides ns/op, the mean, it reports
// med-ns/op: the calls run in batches of at least benchBatch, each timed,
// and med-ns/op is the median batch's time per call. On a shared machine a
// preemption or another process's burst lands in a few batches and moves
// the mean, not the median.
func timeCall(b *testing.B, c *call, bytes int64, every int) {
	c.fresh()
	reset := func() {
		for _, a := range c.args {
			if a.mode() == inPlace {
				a.restore()
			}
		}
	}
	if every < 0 {
		every = math.MaxInt
	}
	b.SetBytes(bytes)
	t0 := time.Now()
	c.run() // warm up, and size the batches
	batch := max(1, int(benchBatch/max(time.Since(t0), 1)))
	reset()
	per := make([]float64, 0, b.N/batch+1)
	b.ResetTimer()
	for i := 0; i < b.N; {
		n := min(batch, b.N-i)
		t := time.Now()
		for j := i; j < i+n; j++ {
			if j%every == every-1 {
				reset()
			}
			c.run()
		}
		per = append(per, float64(time.Since(t).Nanoseconds())/float64(n))
		i += n
	}
	b.StopTimer()
	slices.Sort(per)
	b.ReportMetric(per[len(per)/2], "med-ns/op")
}

// resetEvery returns how many in-place rotations of inputs near 1 stay
// within the storage type's comfortable range: every rotation scales the
// norm by A.
func (s *suite[T]) resetEvery() int {
	if s.attn == 1 {
		return 4096
	}
	binades := 60.0
	switch s.c.kind {
	case kF16:
		binades = 8
	case kF64:
		binades = 500
	}
	return max(1, min(4096, int(binades/math.Abs(math.Log2(s.attn)))))
}

// tableBench times building tables (docs/contract.md §12), with the
// default backend:
//
//	table/new=131072          NewTable(131072): a 128Ki-position context from 0
//	table/range=512@1000000   NewTableRange of 512 rows at a start of 10⁶
//	table/batch=64            Batch.Set of 64 scattered positions (a decode step)
func (s *suite[T]) tableBench() benchGroup {
	k := &s.k
	g := benchGroup{name: "table", extra: []timed{
		{name: "new=131072", bytes: int64(131072 * s.rowBytes()), c: &call{what: "NewTable(131072)", run: func() { k.NewTable(131072) }}},
		{name: "range=512@1000000", bytes: int64(512 * s.rowBytes()), c: &call{what: "NewTableRange(…, 1000000, 512)", run: func() {
			k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), 1_000_000, 512)
		}}},
	}}
	if k.Runtime.NewBatch != nil {
		bt := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), 64)
		rng := rand.New(rand.NewPCG(3, 5))
		pos := make([]int32, 64)
		for i := range pos {
			pos[i] = int32(rng.IntN(1 << 20))
		}
		g.extra = append(g.extra, timed{name: "batch=64", bytes: int64(64 * s.rowBytes()), c: &call{what: "Batch.Set", run: func() { bt.Set(pos) }}})
	}
	return g
}
