package templates

// Norm is the template contract of the QK-norm kernel, norm_arm64.s.tmpl
// (docs/contract.md §10), which gen renders into rope_norm_arm64.s; its
// Name and Params also give rope_arm64.go.tmpl the declaration and the
// backend field norm. Everything the template prints is decided here.
//
// # The computation
//
//	func applyNormRMSHeadNEONS(x []T, stride, n int, r *C, w []C, eps float64)
//
// normalizes and rotates the n heads of x, head h at x[h·stride:][:HeadDim],
// with table row r (RowLen values), ε = eps and weights w: each head alone with the HeadDim weights
// w, or (Token) the n heads as one vector, head h weighted by
// w[h·HeadDim:]; Kind "l2" reads no weights. A head goes through a scratch
// head on the stack (Frame bytes, the compute type C), in passes:
//
//	widen      x → scratch, exactly (FCVTL for f16, SHLL #16 for bf16)
//	rotate     scratch in place, forward (After: before the sum)
//	sum        the 8 partial sums of squares in float64: value j of the
//	           vector into lane j mod 8 of V24…V27 (V24 lanes 0, 1; V25
//	           2, 3; V26 4, 5; V27 6, 7), each square exact (float32 C) or
//	           rounded (float64), each sum rounded, in increasing j
//	combine    V24+V26, V25+V27, their sum, FADDP: ((s0+s4)+(s2+s6)) +
//	           ((s1+s5)+(s3+s7)); then /count (SCVTFD), +ε (the eps
//	           argument, at 72(FP)), FSQRTD, 1/q,
//	           FCVTDS for float32: r in lane 0 of V28
//	scale      y = fl(fl(x·r)·w) (FMUL by element, then FMUL), gemma
//	           fl(1 + w) first (FADD with V29 = 1), l2 fl(x·r) alone
//	rotate     (before the norm: now)
//	store      scratch → x, narrowed once (FCVTN; bf16: the integer
//	           rounding of [Narrow] with V30 = 0x10000, V31 = 0x7fff; every
//	           value went through an FMUL, so a NaN is quiet already)
//
// After fuses scale and store. Token runs widen, (rotate) and sum for every
// head first, then widen, (rotate), scale, (rotate), store for every head.
// No fused multiply-add anywhere; the rotation is docs/contract.md §5's
// y_a = fl(fl(x_a·c) − fl(x_b·s)), y_b = fl(fl(x_b·c) + fl(x_a·s)) with c =
// C[a] and s = S[b] of the row.
//
// # Registers
//
// R0 the head, R1 heads left, R2 the row, R3 w, R4 the scratch head, R5
// the head stride in bytes, R6/R7 load/store pointers, R8/R9 the second
// pair of them (neox partners), R10/R12 the row's C and S pointers, R11 a
// loop counter, R13 the weights pointer, R14/R15/R16 the token passes'
// saved head, count and weights, R17 scratch for constants. V0–V7 and
// V16–V18 are temporaries, V24–V27 the partial sums, V28 r, V29 1 (gemma),
// V30 and V31 the bf16 constants.
type Norm struct {
	Header string // the first line of the file
	Name   string // "applyNormRMSHeadNEONH128N"
	// OnlyName is the norm alone, without the rotation (r unused; the
	// separate pass tests and benchmarks compare Name with):
	// "applyNormOnlyRMSHeadNEONH128N". The file holds both.
	OnlyName string
	Params   string // Go parameter list
	AsmArgs  string // the same, for the comment above TEXT
	ArgSize  int    // 80: a slice, two ints, a pointer, a slice, eps (a float64 at 72)
	// Frame is the bytes of the scratch head, HeadDim·TableSize, and of one
	// head's weights (token scope: the weights pointer's step per head).
	Frame int

	Kind  string // "rms", "gemma" or "l2"
	Token bool   // the n heads are one normed vector
	After bool   // normalize the rotated head
	NeoX  bool   // pairs (i, i+RotaryDim/2); otherwise (2i, 2i+1)

	// HeadDim is also the values of a head-scope vector (the count a
	// head's mean divides by).
	HeadDim, RotaryDim int
	In                 Format // x's format
	TableSize          int    // bytes of a compute value: 4 or 8
	Arr, GoArr         string // the compute type's full arrangement: "4S"/"S4" or "2D"/"D2"
	FP                 string // its scalar width: "S" or "D"
	Widen, Narrow      string // as Body's: "fcvtl", "shll" or ""; "fcvtn", "bf16" or ""

	// Vecs full registers of compute values cover a head; Tail2 says two
	// more values follow (float32 with HeadDim ≡ 2 mod 4).
	Vecs  int
	Tail2 bool
	// Groups full groups of 8 values; TailSum the values of the last
	// group (0, 2, 4 or 6).
	Groups, TailSum int
	// The rotation: Blocks full blocks of a register's pairs (4 float32,
	// 2 float64), then (float32) a block of 2 pairs when Block2, then one
	// pair when Block1.
	Blocks         int
	Block2, Block1 bool
	// Byte offsets: the partners' (neox: RotaryDim/2 values on) in the
	// scratch head, and the row's S values the rotation reads from (S[b] of
	// the first pair for neox; S[a] for the interleaved LD2, whose odd
	// lanes are S[b]).
	PartnerBytes, SBytes int
}
