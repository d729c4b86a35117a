package rt

// The kernel ABI: what the run-time calls and what every kernel emitter
// (pure Go, amd64, arm64) produces, per shape S = (HeadDim H, RotaryDim R,
// layout) and per backend. E is the package's element type, C its compute
// type; a table row is R values of C, the cosines, then R signed sines
// (docs/contract.md §5), 2R values in all, and r *C points at its first
// value.
//
// Every kernel handles n >= 0 heads (n = 0 does nothing). Head h of x is
// x[h·stride:], strides in elements (bytes for a block format's cache); a kernel
// reads and writes only the values of those heads it is documented to, and
// reads no slice length: the run-time has checked every view, length,
// position and slot before it calls one, so a kernel never panics.
//
// One declaration of each kernel signature follows; the generated files
// assign their functions to these types, one kernels value per shape and
// backend.

// rotKernel turns the rotary values [0, R) of n heads in place by the row
// r: fwd computes A·R_p·x, inv A·R_pᵀ·x. Values past R are not touched.
type rotKernel func(x []elem, stride, n int, r *comp)

// rowsKernel is a rotKernel with a row per head: head h turns by
// rows[h·2R:][:2R] (one head of a head-major view walked along consecutive
// positions).
type rowsKernel func(x []elem, stride, n int, rows []comp)

// fillKernel writes the values of pairs [0, done) of the table row r of
// position pos for the frequencies freqs (R/2 values) and the attention
// factor attn, with fillRow's bits, and returns done; the run-time fills the
// rest with fillRow. It is called only when every angle pos·θ_i is below
// sincosMax.
type fillKernel func(r *comp, pos float64, freqs *float64, attn float64) (done int)

// normKernel normalizes n heads (QK-norm, docs/contract.md §10) and rotates
// them in place by r (normOnly: only normalizes, r unused), with weights w
// (H values shared by every head; a token-scope norm: the n heads are one
// vector, head h weighted by w[h·H:]; l2: none) and ε = eps. Which norm it
// computes is its slot in kernels.norm (normVariant).
type normKernel func(x []elem, stride, n int, r *comp, w []comp, eps float64)

// rotToKernel turns n float32 heads of src forward by r into the float32
// heads of dst (values past R copied): a key on its way to an f32, e4m3,
// e5m2 or block-format cache.
type rotToKernel func(dst []float32, ds int, src []float32, ss, n int, r *comp)

// halfStoreKernel narrows n float32 heads of src into uint16 (f16 or bf16)
// heads of dst, round to nearest even; store converts H values a head,
// storeShift the leading ones Shift rewrites (R).
type halfStoreKernel func(dst []uint16, ds int, src []float32, ss, n int)

// halfLoadKernel widens n uint16 heads of src into float32 heads of dst,
// exactly; load H values a head, loadShift the leading ones (R).
type halfLoadKernel func(dst []float32, ds int, src []uint16, ss, n int)

// halfToKernel turns n float32 heads of src forward by r and stores them
// narrowed into dst, values past R narrowed unrotated: ApplyStore's key path
// into an f16 or bf16 cache, in one pass.
type halfToKernel func(dst []uint16, ds int, src []float32, ss, n int, r *comp)

// halfShiftKernel turns the R leading values of n uint16 heads in place by
// r (a row filled with A = 1): widen, rotate, narrow in one pass (Shift).
type halfShiftKernel func(x []uint16, stride, n int, r *comp)

// byteStoreKernel stores n float32 heads of src into byte heads of dst:
// e4m3 or e5m2 of x/scale, or blocks of a block format (q8_0, q4_0, q4_1,
// q5_0, q5_1, mxfp4, iq4_nl, nvfp4; scale unused; nvfp4_gs: its tensor
// scale g), or int8_per_token_head heads (each its scale, then its int8;
// scale unused); store all of a head,
// storeShift the blocks or values Shift rewrites.
type byteStoreKernel func(dst []byte, ds int, src []float32, ss, n int, scale float32)

// byteLoadKernel loads n byte heads of src into float32 heads of dst: e4m3
// or e5m2 times scale, or a block format's blocks dequantized (scale
// unused; nvfp4_gs: its tensor scale g); load and
// loadShift as byteStoreKernel's.
type byteLoadKernel func(dst []float32, ds int, src []byte, ss, n int, scale float32)

// hadamardKernel multiplies n float32 heads in place by H, the normalized
// Walsh–Hadamard matrix of the head in blocks of B values (B the largest
// power of two dividing H, at least 16): each block by the butterfly of
// docs/contract.md §15, stage by stage, then times fl32(1/√B).
type hadamardKernel func(x []float32, stride, n int)

// kernels are one backend's kernels for one shape. A nil kernel is one the
// backend does not have: fwdRows and invRows (the run-time walks a view
// token by token instead), fill (fillRow fills the whole row), a norm
// variant or a cache type the package was not generated with (New refuses
// a model that needs it), shift (Shift goes through loadShift, inv or fwd
// and storeShift), hadamard at a shape whose block is below 16 or whose
// head is above 1024 (the Hadamard option panics there).
type kernels struct {
	fwd, inv         rotKernel
	fwdRows, invRows rowsKernel
	fill             fillKernel
	norm, normOnly   [normVariants]normKernel // by normVariant(kind, scope, after)
	// The cache kernels, in f32-element packages with caches.
	rotTo    rotToKernel // the key path of the caches not stored as uint16
	hadamard hadamardKernel

	half  [2]halfKernels
	bytes [12]byteKernels
}

// halfKernels are the kernels of a uint16 cache type: half[0] f16, half[1]
// bf16.
type halfKernels struct {
	store, storeShift halfStoreKernel
	load, loadShift   halfLoadKernel
	to                halfToKernel
	shift, shiftInv   halfShiftKernel
}

// byteKernels are the kernels of a byte cache type: bytes[0] e4m3, bytes[1]
// q8_0, bytes[2] e5m2, bytes[3…6] q4_0, q4_1, q5_0, q5_1, bytes[7] mxfp4,
// bytes[8] iq4_nl, bytes[9] nvfp4, bytes[10] int8_per_token_head,
// bytes[11] nvfp4_gs (the cache kinds' order from cacheE4M3 on).
type byteKernels struct {
	store, storeShift byteStoreKernel
	load, loadShift   byteLoadKernel
}

// QK-norm variants: a kernels.norm slot is normVariant(kind, scope, after).
const (
	normRMS      = 0 // y = x·r·w
	normGemma    = 1 // y = x·r·(1+w)
	normL2       = 2 // y = x·r
	normToken    = 2 // added: a token's heads are one vector
	normAfter    = 1 // added: normalize the rotated vector
	normVariants = 12
)

// normKinds and normScopes are the run-time names of the variants' parts,
// as Params spells them.
var (
	normKinds  = [3]string{"rms", "gemma", "l2"}
	normScopes = [2]string{"head", "token"}
)

// normVariant returns the kernels.norm slot of a QK-norm: kind index k
// (normRMS, normGemma, normL2), token scope, after the rotation.
func normVariant(k int, token, after bool) int {
	v := 4 * k
	if token {
		v += normToken
	}
	if after {
		v += normAfter
	}
	return v
}

// normName spells variant v as Params does: "rms/head", "l2/head/after", ….
func normName(v int) string {
	s := normKinds[v/4] + "/" + normScopes[v%4/normToken]
	if v%2 == normAfter {
		s += "/after"
	}
	return s
}

// backend is one implementation level ("avx512", "avx2", "neon",
// "generic"): its kernels for every shape of the package, in Shapes()
// order.
type backend struct {
	name   string
	shapes []kernels
}

// backends lists the implementations this CPU can run, best first; the
// pure Go one is always last. active is the one in use: tests make each in
// turn active; nothing else changes it.
var (
	backends = complete(append(archBackends(), genericBackend()))
	active   = &backends[0]
)

// complete gives every backend of bs each kernel it lacks that the last,
// pure Go, one has (the same bits, slower), but those a backend may lack:
// the rows kernels, fill, rotTo and the fused shift kernels, which the
// run-time does without. So a kernel the pure Go backend has is a kernel
// every backend has.
func complete(bs []backend) []backend {
	g := &bs[len(bs)-1]
	for i := range bs[:len(bs)-1] {
		for s := range bs[i].shapes {
			k, gk := &bs[i].shapes[s], &g.shapes[s]
			if k.fwd == nil || k.inv == nil {
				k.fwd, k.inv, k.fwdRows, k.invRows = gk.fwd, gk.inv, nil, nil
			}
			for v := range k.norm {
				if k.norm[v] == nil || k.normOnly[v] == nil {
					k.norm[v], k.normOnly[v] = gk.norm[v], gk.normOnly[v]
				}
			}
			for c := range k.half {
				h, gh := &k.half[c], &gk.half[c]
				if h.store == nil || h.storeShift == nil || h.load == nil || h.loadShift == nil {
					h.store, h.storeShift, h.load, h.loadShift = gh.store, gh.storeShift, gh.load, gh.loadShift
				}
				if h.to == nil {
					h.to = gh.to
				}
			}
			if k.hadamard == nil {
				k.hadamard = gk.hadamard
			}
			for c := range k.bytes {
				if b := &k.bytes[c]; b.store == nil || b.storeShift == nil || b.load == nil || b.loadShift == nil {
					*b = gk.bytes[c]
				}
			}
		}
	}
	return bs
}
