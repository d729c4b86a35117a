// INTERFACE READY (v3, 2026-11-28 17:25 UTC): the codec operations
// below are final enough to implement; a change is committed here and
// described in the change log at the end of this comment.
//
// The KV-cache codecs (f16, bf16, e4m3, e5m2 narrowing and widening; q8_0
// quantizing and dequantizing) are families written once in package vec
// (codec.go) against the operations of Codec below, as the rotation is
// written against Ops; every target lowers the operations. A target with a
// one-instruction conversion says so through the optional hook Native,
// which the family checks with a type assertion (highway's HWY_NATIVE_*
// toggles); a hook must return the same bits as the family's generic path
// for every input.
//
// Lanes. Every operation of Codec works on the 32-bit lanes of the
// target's float32 compute vectors (a V of a function whose compute type
// is float32): as float32 values (Div, Mul of Ops, IsNaN, MinF, MaxF,
// ToF32, TruncI32) or as their bits, uint32 (everything else). AsU32 and
// AsF32 reinterpret the bits of a lane (no instruction on a register
// target; the pure Go target needs them because its lanes are typed
// expressions). Integers are two's complement; Add32, Sub32 and Shl32 wrap
// modulo 2³²; Shr32 is a logical shift. A compare produces a Mask (an
// opmask, a vector of all-ones/all-zeros lanes, a Go bool: the target's
// choice), consumed only by Select and MaxAcross's callers through Select.
//
// Blocks of 32 values (q8_0). A block of 32 float32 values is held as
// members []V, member i holding values i·L … i·L+L−1 of the block in its
// lanes 0…L−1 (L = 32/len(members), the target's choice: 2 members of 16
// at AVX-512, 4 of 8 at AVX2, 8 of 4 at NEON, 32 of 1 in pure Go; a
// vector-length agnostic target may use one register group).
//
// The families: Narrow and Widen (codec.go) (f16, bf16, e4m3, e5m2, the
// parameters in Minifloats) are called by a target's Block.Load and
// Block.Store of those elements (every kind that reads or writes them:
// store, load, to, shift) and by the convert family; q8 (cache.go) quantizes
// and dequantizes through Quantizer's Blocks32 and x32 accesses. E5M2 is a
// new Elem ("e5m2", uint8, 1 byte) with e4m3's kinds, signature (a float32 tensor
// scale) and field (bytes[2]).
//
// Change log:
//
//	v1: first version.
//	v2: Select consumes b (see Select). The block-of-32 operations
//	    (MaxAcross, Iota, Blocks32, the x32 loads and stores, LoadU16,
//	    StoreU16) moved from Codec to a new interface Quantizer (embedding Codec), which only the q8_0 family
//	    asserts: Narrow and Widen need Codec alone. LoadBits and StoreBits
//	    stay in Codec: a target's Block.Load of f16/bf16/e4m3/e5m2 is
//	    LoadBits then Widen, its Block.Store Narrow then StoreBits (amd64
//	    keeps F16C's memory forms for f16, the Native hook's instructions).
//	v3: Quantizer.If (the q8_0 family's rare path for a block with a NaN,
//	    an Inf or a tiny maximum is a branch, as the amd64 kernels had it).
package vec

// Mask is a target's lane mask: one bit of truth per 32-bit lane.
type Mask any

// Codec is a target's integer, compare, select and conversion operations
// on 32-bit lanes, and the memory accesses the codec families need. A
// target implementing it runs every codec family (convert, q8 in
// codec.go).
type Codec interface {
	// U32 is the constant v in every 32-bit lane (the target may hoist it
	// or fold it into the instruction using it).
	U32(v uint32) V
	// AsU32 is the bits of the float32 lanes of a; AsF32 the float32
	// lanes whose bits are a's. Bits are unchanged, NaN payloads included.
	AsU32(a V) V
	AsF32(a V) V

	// And, Or, Xor are bitwise; AndNot is a &^ b (a and not b).
	And(a, b V) V
	Or(a, b V) V
	Xor(a, b V) V
	AndNot(a, b V) V
	// Add32 and Sub32 are a+b and a−b modulo 2³² lane by lane.
	Add32(a, b V) V
	Sub32(a, b V) V
	// Shl32 and Shr32 shift each lane left, right (logical: zeros in) by
	// the constant n, 0 < n < 32.
	Shl32(a V, n int) V
	Shr32(a V, n int) V

	// Gt32 is a > b and Eq32 a = b, the lanes as signed int32 (the
	// families compare only values in [0, 2³¹), where signed and unsigned
	// agree).
	Gt32(a, b V) Mask
	Eq32(a, b V) Mask
	// IsNaN is the float32 lanes of a that are NaN (unordered).
	IsNaN(a V) Mask
	// Select is, lane by lane, a where m holds, else b. b is consumed:
	// the families never use it again, so a target may write the result
	// over it (AVX-512's merge-masking VPBLENDMD does).
	Select(m Mask, a, b V) V

	// MinF and MaxF are the float32 minimum and maximum lane by lane,
	// for lanes where neither a nor b is NaN (the families never pass a
	// NaN: the result of a NaN lane is the target's, e.g. x86's second
	// operand, NEON's NaN). For ±0 either sign may result (the families
	// never compare zeros of different signs where the sign matters).
	MinF(a, b V) V
	MaxF(a, b V) V
	// ToF32 is the float32 of the int32 lanes of a, exact for |a| ≤ 2²⁴
	// (the families convert only such values; above it, nearest even).
	ToF32(a V) V
	// TruncI32 is the int32 of the float32 lanes of a rounded toward zero
	// (CVTTPS2DQ, FCVTZS, vfcvt.rtz): defined for |a| < 2³¹, the families
	// pass only |a| < 128 (no NaN).
	TruncI32(a V) V

	// LoadBits reads the block's values of a (e = a.Elem: f16, bf16
	// 16-bit; e4m3, e5m2 8-bit) zero-extended into 32-bit lanes;
	// StoreBits writes the low e.Size·8 bits of each lane of v (the
	// family's lanes are < 2^(8·e.Size)) at the block's values of a.
	LoadBits(b Block, a Arr) V
	StoreBits(b Block, a Arr, v V)
}

// Quantizer is a Codec target's blocks of 32 values, the q8_0 family's
// (codec.go's q8): the loop over a head's blocks, the reads and writes of
// a block, and the one horizontal operation.
type Quantizer interface {
	Codec

	// MaxAcross is the largest of the uint32 lanes of every member of xs
	// (a block of 32 values, above, or consecutive members of one: the
	// nvfp4 family's sub-blocks of 16), in every lane of one V.
	MaxAcross(xs []V) V
	// Iota is, in the lanes of member i of a block of n members, the
	// 1-based position j+1 of the lane's value in the block (1…32).
	Iota(i, n int) V

	// Blocks32 runs body once per block of 32 values of the head h, the
	// blocks [32i, 32i+32) for i < n: s is src i·ss elements on, d is dst
	// i·ds elements on (ss, ds in each array's own elements: 32 float32,
	// 34 q8_0 bytes). The target may loop or unroll.
	Blocks32(h Head, n int, src Arr, ss int, dst Arr, ds int, body func(s, d Arr))
	// LoadF32x32 is the 32 float32 values at a as members;
	// StoreF32x32 writes the members xs as the 32 float32 values at a.
	LoadF32x32(a Arr) []V
	StoreF32x32(a Arr, xs []V)
	// LoadI8x32 is the 32 int8 at a (a q8_0 array, a.Off bytes on),
	// sign-extended to int32 lanes, as members; StoreI8x32 writes the low
	// byte of every lane of the members qs (each lane in [−128, 127]) as
	// 32 bytes at a.
	LoadI8x32(a Arr) []V
	StoreI8x32(a Arr, qs []V)
	// LoadU16 is the 16-bit little-endian value at a (a byte array, a.Off
	// bytes on) zero-extended, in every lane; StoreU16 writes the low 16
	// bits of lane 0 of v at a.
	LoadU16(a Arr) V
	StoreU16(a Arr, v V)
	// If emits then, run when any lane of m holds, else els: a branch.
	// The per-block families pass a mask equal in every lane, so a target
	// may test one lane; a QuantGrouper's If (group.go) gets a mask that
	// differs across lanes and must test them all. Values made inside a
	// branch are not used after it.
	If(m Mask, then, els func())
}

// Summer is a Packer target's in-order sum across a block, the iq4_nl
// family's (iq4nl.go): ggml's sums over a block's values are a chain of
// float32 additions in value order, whose bits depend on that order, so
// no tree reduction (as MaxAcross's) will do.
type Summer interface {
	Packer

	// AddInOrder is s plus the values of xs added one at a time in
	// order, fl(…fl(fl(s + x_0) + x_1)… + x_{n−1}), every addition
	// rounded (no reassociation), in every lane of one V: xs are
	// consecutive members of a block (as Quantizer's), their lanes in
	// value order, and s holds one value in every lane (+0 or an earlier
	// AddInOrder's sum), so a family sums a block a member at a time.
	AddInOrder(s V, xs []V) V
}

// Native is the optional hook of a target with one-instruction
// conversions (F16C's VCVTPS2PH/VCVTPH2PS, NEON's FCVTN/FCVTL, RVV's
// vfncvt/vfwcvt). NarrowNative is, for the float32 lanes of x, the bits
// of e in 32-bit lanes, exactly as Narrow's generic path gives them, and
// true; or false when the target has no such form for e (the family then
// runs the generic path). WidenNative is the same for Widen: the float32
// lanes of the e bits in the 32-bit lanes of c. A hook must agree with the
// generic path bit for bit for every input, NaN payloads included (e.g.
// AVX512-BF16's VCVTNEPS2BF16 flushes float32 denormals to zero, so it
// cannot be the bf16 hook; VCVTPS2PH with imm8 0 rounds to nearest even
// and keeps NaN payloads as f32to16 does, so it can be f16's).
type Native interface {
	NarrowNative(e Elem, x V) (V, bool)
	WidenNative(e Elem, c V) (V, bool)
}
