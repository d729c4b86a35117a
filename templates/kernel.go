package templates

// Kernel is the template contract: everything the arm64 templates print is
// read from it, and the generator (gen.Plan → Kernel) makes every decision.
// Field meanings are stable; a template may rely on every invariant stated
// here and on nothing else. Besides the fields, a template has the encoder's
// functions (fmul, fadd, fsub, fcvtl, shll, fcvtn, shrn, fcmeq, … of
// [neon.Emitter.FuncMap], destination first, one checked WORD line each)
// and [Helpers]; see [Execute].
//
// # The computation
//
// A table row holds C[0:RotaryDim] then S[0:RotaryDim] of the compute type
// (gen.Plan): float32, or float64 for f64. For pair i with indices (a, b),
// C[a] = C[b] = c and S[a] = −s, S[b] = s (= +A·sin), and docs/contract.md §5 is
//
//	forward:  y_a = fl(fl(x_a·c) − fl(x_b·s)),  y_b = fl(fl(x_b·c) + fl(x_a·s))
//	inverse:  y_a = fl(fl(x_a·c) + fl(x_b·s)),  y_b = fl(fl(x_b·c) − fl(x_a·s))
//
// which the templates evaluate on whole blocks of pairs, one pair per lane:
// register A holds the blocks' x_a, B the x_b, C the c and S the s, and
//
//	P1 = B·C   P0 = A·C   P2 = B·S   P3 = A·S      (FMUL: four rounded products)
//	P0 = P0 ∓ P2  (y_a)   P1 = P1 ± P3  (y_b)      (FSUB/FADD: one rounded sum)
//
// in exactly that order (it lets C be P0 and S be P3, see [Block]). A
// "swap" block (interleaved tails of 16-bit data, [Block.Form]) holds a
// and b values side by side instead: A = (x_a, x_b, …) as in memory, B = A
// with adjacent lanes swapped (REV64), C = (C[a], C[b], …) = (c, c, …) and
// S = (S[a], S[b], …) = (−s, s, …) read straight from the row, and
//
//	P0 = A·C   P2 = B·S      forward: P0 = P0 + P2    inverse: P0 = P0 − P2
//
// which is the same arithmetic bit for bit: negation is exact and rounding
// symmetric, so fl(x_b·(−s)) = −fl(x_b·s) and x + (−y) is x − y. There is
// no fused multiply-add anywhere.
//
// # Element types
//
// f32 and f64 compute in their own type (arrangements 4S/2S and 2D, scalar
// S and D). f16 and bf16 compute in float32: after its loads a block widens
// A and B exactly ([Body.Widen]: FCVTL from 4H, or SHLL #16 for bfloat16)
// and before its stores narrows P0 and P1 with round-to-nearest-even
// ([Body.Narrow], [Narrow]). ApplyTo's kernel ([Func.Kind] "to") loads
// float32 and narrows to the out dtype; it also narrows the values
// [RotaryDim, HeadDim) of every head unrotated ([Body.Copy]).
//
// # The layouts
//
// Interleaved (pairs (2i, 2i+1)): LD2 de-interleaves 2·Pairs values of x
// into A (even indices) and B (odd), ST2 re-interleaves P0 and P1; the table
// is read with LD2 too, keeping C's even lanes (c) and S's odd lanes (+s).
// Interleaved tails of 16-bit data, which LD2/ST2 cannot load or store
// without touching values outside the head, are swap blocks.
// NeoX (pairs (i, i+RotaryDim/2)): A and B are plain loads of the two
// halves and C, S plain loads of C[i…] and S[RotaryDim/2+i…]; no shuffles.
//
// # Calling convention
//
// Every function rotates n heads at a run-time element stride, so that one
// call serves the strided views of docs/contract.md §8:
//
//	fwd, inv: func(x []T, stride, n int, r *[RowLen]C)
//	          head h is x[h·stride:][:HeadDim], rotated in place
//	fwdRows, invRows: func(x []T, stride, n int, rows []C)
//	          as fwd, inv, head h with its own row rows[h·RowLen:][:RowLen]
//	to:       func(dst []O, dstStride int, src []float32, srcStride int, n int, r *[RowLen]float32)
//	          head h of src[h·srcStride:] rotated into dst[h·dstStride:][:HeadDim]
//
// A function returns at once when n ≤ 0. It reads and writes exactly the
// values [0, RotaryDim) of each head in place ("fwd", "inv"), or reads
// [0, HeadDim) of each src head and writes [0, HeadDim) of each dst head
// ("to"); never a gap between heads, never the slices' lengths, which the
// Go caller has checked. Strides are any value when n = 1 and at least
// HeadDim otherwise; the base pointers may have any element alignment.
//
// # Registers
//
// General: R0 x (src for "to"), R1 the heads left (n, counted down to 0),
// R2 the row; R3/R4 load/store pointers of the x_a values, R5/R6 of the x_b
// values (neox only; the interleaved accesses use R3/R4 for both); R7/R8
// table pointers; R9 dst for "to"; R10 scratch for the constants; R11 the
// copy loop counter; R12… the per-head advances ([Body.Advances]). All x
// pointers walk with post-increment over a head, then each moves by its
// advance register to the same place in the next head; R27 (REGTMP) is left
// to the assembler.
//
// Vector: Blocks alternate between two working sets, V10–V15 and V16–V21
// (A, B, P0…P3). Preloaded table values live in V0–V9 (c) and V22–V31 (s):
// c of preloaded block k in V(10−Preloaded+k), s in V(22+k), so at most
// [MaxPreload] blocks are preloaded, fewer when constants take the ends of
// that range ([Body.Consts]: from V0 up and from V31 down). An interleaved
// table LD2 writes two consecutive registers; the half that is not kept
// lands in a register that a later preload load overwrites, or in a
// working register (V10, V21), never in a constant.
type Kernel struct {
	// Header is the first line of every file, ropegen's
	// `// Code generated by "ropegen …"; DO NOT EDIT.`
	Header string
	// Package is the Go package name.
	Package string

	HeadDim   int    // values per head
	RotaryDim int    // leading values of each head that rotate; even, ≤ HeadDim
	Half      int    // RotaryDim/2: the number of pairs
	NeoX      bool   // pairs are (i, i+Half); otherwise (2i, 2i+1)
	Layout    string // "interleaved" or "neox", for comments
	RowLen    int    // values per table row: 2·RotaryDim

	// DType is the element type of x for Apply and ApplyInverse: "f32",
	// "f64", "f16" or "bf16". OutDType is ApplyTo's dst type, "f16" or
	// "bf16" (DType is then "f32"), or "" when the package has no ApplyTo.
	DType, OutDType string
	// About says in words what the elements are, for comments: e.g.
	// "IEEE binary16 (bits in uint16)".
	About string

	// Funcs are the functions to emit: the forward kernel, the inverse,
	// then, with OutDType, the rotate-and-narrow kernel. Empty when there
	// are no NEON kernels for the package (rope_arm64.go then offers no
	// assembly backend, and rope_arm64.s is not written).
	Funcs []Func

	// Norms are the shape's QK-norm kernels (norm.go): their own template
	// writes them; rope_arm64.go.tmpl declares them.
	Norms []*Norm
}

// MaxPreload is the most blocks whose table values stay in registers: 10
// c registers (V0–V9) and 10 s registers (V22–V31), when no constant takes
// any of them (see [Body.MaxPreload]).
const MaxPreload = 10

// Func is one assembly function and its Go declaration.
type Func struct {
	Name string // Go name, e.g. "applyNEON"
	// Kind is "fwd" (A·R_p·x in place), "inv" (A·R_pᵀ·x in place: FADD
	// for y_a, FSUB for y_b), "fwdRows" and "invRows" (the same with a
	// table row per head: Params ends "rows []C" and the frame has
	// rows_base+40; after each head R2 moves RowBytes on) or "to" (forward
	// from src into dst, narrowed). It names the backend field too.
	Kind     string
	Inverse  bool   // Kind == "inv" or "invRows"
	RowBytes int    // the rows kinds: bytes of one table row; else 0
	Doc      string // what it computes, e.g. "forward (A·R_p·x)"
	// Params is the Go parameter list, as declared in rope_arm64.go:
	// "x []float32, stride, n int, r *[rowLen]float32" or, for "to",
	// "dst []uint16, dstStride int, src []float32, srcStride int, n int,
	// r *[rowLen]float32" (the names are the frame's: the template reads
	// x_base+0, n+32, r+40, resp. dst_base+0, src_base+32, n+64, r+72, and
	// Advance.Arg the strides). AsmParams is the same with rowLen spelled
	// out, for the comment above the TEXT line.
	Params, AsmParams string
	// ArgSize is the argument frame size: 48 (a slice, two ints and a
	// pointer), 64 (rows: two slices and two ints) or 80 ("to": two
	// slices, three ints and a pointer).
	ArgSize int
	// Body is the function's plan. Forward and inverse share one.
	Body *Body
}

// Body is the plan of one function: what it loads and stores, the blocks
// of one head, the table values kept in registers, the constants.
type Body struct {
	// In and Out are the formats of the values the blocks load (x, or src)
	// and store (x, or dst).
	In, Out Format
	// TableSize is the bytes per table value: 4 (float32) or 8 (float64).
	TableSize int
	// Lanes is the pairs of a full block, one per lane of a 128-bit
	// register of the compute type: 4 (float32) or 2 (float64).
	Lanes int
	// Widen is how loaded 16-bit values become float32, in place, .4H to
	// .4S: "fcvtl" (f16, exact) or "shll" (bf16: SHLL #16, exact); "" when
	// In is the compute type.
	Widen string
	// Narrow is how results become Out: "fcvtn" (f16: FCVTN, which rounds
	// to nearest even under Go's FPCR and keeps NaNs NaN, quieted), "bf16"
	// (the integer rounding of [Narrow]) or "" when Out is the compute
	// type.
	Narrow string

	// Ptrs are the x pointers: each is set before the head loop (Reg =
	// From + Off) and, at the end of every head, after the blocks' (and the
	// copy's) post-increments have moved it Walk bytes, advanced by its
	// Adv register to the same place in the next head.
	Ptrs []Ptr
	// Advances are the advance registers, set before the head loop from
	// the stride arguments; several pointers may share one.
	Advances []Advance
	// Consts are vector constants set before the head loop, every lane of
	// the .4S register Reg holding Value.
	Consts []Const
	// Lsb, Bias and Quiet are the registers of the bf16 narrowing
	// constants 0x10000 (the lowest kept bit), 0x7fff (the rounding bias)
	// and 0x400000 (a NaN's quiet bit); valid when Narrow is "bf16"
	// (Quiet only when Copy narrows values that did not go through the
	// arithmetic).
	Lsb, Bias, Quiet int

	// Blocks is the block plan of one head, in memory order: runs of Lanes
	// pairs, then (float32 arithmetic) at most one block of 2 pairs, then
	// at most one of 1. Decided at generation time: the run-time loops are
	// over heads and, in Copy, over the pass-through values.
	Blocks []Block
	// Groups is Blocks two at a time, in order: the unit of the schedule
	// (both blocks' loads, widenings, products, sums, narrowings, then their
	// stores), so that two independent dependency chains are always in
	// flight.
	Groups []Group
	// MaxPreload is the most blocks that can keep their table values in
	// registers: [MaxPreload] less the constants' registers at either end.
	MaxPreload int
	// Preloaded is how many leading Blocks keep their table values in
	// registers across heads: min(len(Blocks), MaxPreload).
	Preloaded int
	// Preload lists the table loads done once per call, before the head
	// loop, in the order they must run.
	Preload []Load
	// LoopC and LoopS are the row byte offsets where the table pointers R7
	// and R8 start every head: the CLoad and SLoad of the first block that
	// is not preloaded and reads its table through them. Valid when
	// LoopTable.
	LoopC, LoopS int
	// LoopTable says whether any block loads its table values in the head
	// loop through R7 and R8, with post-increment.
	LoopTable bool

	// Copy, for Kind "to" with RotaryDim < HeadDim, narrows the values
	// [RotaryDim, HeadDim) of each head after its blocks; nil otherwise.
	Copy *Copy
}

// Format is how one element type sits in memory.
type Format struct {
	Name string // "f32", "f64", "f16" or "bf16"
	Size int    // bytes per value: 4, 8, 2, 2
}

// Ptr is one x pointer register.
type Ptr struct {
	Reg  string // "R3"…"R6"
	From string // the register it starts from: R0 (x or src), R9 (dst) or an earlier Ptr
	Off  int    // bytes added to From; 0 is a MOVD
	// Walk is how far the post-increments of one head move Reg, in bytes.
	Walk int
	// Adv is the register (an Advance's Reg) added to Reg at the end of
	// every head: its head stride in bytes less Walk.
	Adv string
}

// Advance is a register set before the head loop to a head stride in
// bytes less the bytes a pointer walks over one head:
//
//	Reg = Arg·(1<<Shift) − Walk
//
// where Arg is the stride argument, in elements, at ArgOff in the frame.
// With n = 1 the stride may be anything, and the value (wrapping, never
// used to address memory) with it.
type Advance struct {
	Reg    string // "R12"…"R15"
	Arg    string // "stride" (fwd, inv), "srcStride" or "dstStride" ("to")
	ArgOff int    // the argument's frame offset: 24, 56 or 24
	Shift  int    // log2 of the strided buffer's bytes per element: 1, 2 or 3
	Walk   int    // the walk of the pointers that use it, > 0
}

// Const is one vector constant.
type Const struct {
	Reg   int    // Vn, all four .4S lanes
	Value uint32 // each lane's bits
	What  string // for the comment
}

// Group is up to two consecutive blocks scheduled together.
type Group struct {
	First, Last int     // first and last pair of the group
	Blocks      []Block // one or two blocks, in memory order
	// Narrows is every narrowing of the group's blocks, in block order;
	// the template interleaves them step by step.
	Narrows []Narrow
}

// Block is a run of Pairs consecutive pairs, one per lane.
type Block struct {
	Index int // position in Body.Blocks
	Pair  int // first pair i
	Last  int // last pair: Pair+Pairs−1
	Pairs int // Lanes, 2 or 1
	// Form is the block's shape:
	//
	//	"ld2"    interleaved, A and B de-interleaved by the x load (LD2,
	//	         or FLDP for a scalar pair), four products
	//	"ld1"    neox: A from the x_a half, B from the x_b half, four
	//	         products
	//	"swap"   interleaved 16-bit tails: A = the pairs' values as in
	//	         memory, B = REV64 of A, C and S read as stored (see Kernel),
	//	         two products and one sum, one result register (P0)
	//	"scalar" one f32 or f64 pair in scalar registers (FMULS/FMULD…)
	Form string
	// Scalar is Form == "scalar".
	Scalar bool
	// Arr is the arithmetic's arrangement for the encoder functions ("4S",
	// "2S", "2D"), GoArr the same in the Go assembler's spelling ("S4",
	// "S2", "D2", for VREV64); both "" for a scalar block. FP is the scalar
	// width, "S" or "D", of a scalar block.
	Arr, GoArr, FP string

	// XA and XB are the byte offsets in the loaded head (x or src) of the
	// block's first x_a and first x_b (for a swap block XB = XA + In.Size).
	// XBytes is how far each load pointer moves over the block. YA, YB and
	// YBytes are the same for the stored head (x or dst).
	XA, XB, XBytes int
	YA, YB, YBytes int
	// COff and SOff are the row byte offsets of C[a] and S[b] of the first
	// pair. CLoad and SLoad are where the block's table loads start: equal
	// to them, except that an interleaved vector block reads S from S[a]
	// (SLoad = SOff − TableSize): an ld2 block keeps the odd lanes, a swap
	// block all of them. TBytes is the bytes of each table load.
	COff, SOff, CLoad, SLoad, TBytes int

	// Preloaded says the table values are in registers before the loop
	// (C and S below); otherwise TLoads loads them every head into P0 and
	// P3 (interleaved ld2: the LD2s fill P0,P1 and P2,P3, keeping P0 = c,
	// P3 = s).
	Preloaded bool

	// Loads are the x (src) loads, Stores the x (dst) stores, in order, and
	// TLoads the table loads of a block that is not preloaded (c, then s).
	Loads, TLoads, Stores []Access

	// Registers, as numbers 0…31 (Vn, or Fn for a scalar block). B = A+1
	// and P1 = P0+1 (LD2/ST2 register lists), P3 = P2+1.
	A, B, P0, P1, P2, P3 int
	// C and S hold c and s when the products are computed.
	C, S int
	// Widen lists the registers widened in place after the loads (A, B;
	// a swap block only A, before B = REV64 A). Empty when Body.Widen is "".
	Widen []int
	// Narrows are the block's narrowings, P0 (then P1) into itself. Empty
	// when Body.Narrow is "".
	Narrows []Narrow
}

// Access is one load or store.
type Access struct {
	// Kind is the instruction form:
	//
	//	"ld2"  VLD2/VST2 of Regs (two registers), Arr the list arrangement
	//	"ld1"  VLD1/VST1 of Regs (one register), Arr the list arrangement
	//	"fp"   FMOVS/FMOVD/FMOVQ (Arr "S", "D", "Q") of F(Regs[0])
	//	"fp2"  FLDPS/FLDPD, FSTPS/FSTPD (Arr "S", "D") of F(Regs[0]), F(Regs[1])
	//	"lane" VLD1/VST1 of lane 0 of V(Regs[0]), Arr the lane size "H"
	Kind string
	Arr  string
	Ptr  string // base register
	// Post says the access post-increments Ptr by Bytes; otherwise it is
	// at Off(Ptr) ("fp" only: table values read from the row in R2).
	Post  bool
	Off   int
	Bytes int   // bytes read or written
	Regs  []int // the registers
}

// Narrow is one narrowing of a .4S register Y into the .4H half of Out:
// the low half, or the upper one (keeping the low) when Upper.
//
// Op "fcvtn": FCVTN (FCVTN2) Out, Y.
//
// Op "bf16": f32tobf16 lane by lane, docs/contract.md §5's round to nearest even
// with the NaN rule, in integer arithmetic with the temporaries T and M:
//
//	T = Y & Lsb ≠ 0 ? −1 : 0          CMTST   (−(u>>16 & 1))
//	T = Bias − T                      SUB     (0x7fff + (u>>16 & 1))
//	T = Y + T                         ADD     (u + 0x7fff + (u>>16 & 1))
//	M = Y == Y ? −1 : 0               FCMEQ   (not NaN)
//	Y = Y | Quiet                     ORR     (Quiet only)
//	T = M ? T : Y                     BIF     (a NaN keeps its bits)
//	Out = T >> 16                     SHRN (SHRN2) #16
//
// A NaN lane thus becomes (u>>16) | 0x40, as f32tobf16 has it: with Quiet
// the ORR sets the quiet bit; without it the bit is already set, because Y
// is the result of an FADD/FSUB (or FMUL), and Arm's arithmetic returns
// every NaN quiet (FPProcessNaN, FPDefaultNaN). Quiet is therefore only
// needed for values narrowed without arithmetic (Body.Copy).
type Narrow struct {
	Op    string // "fcvtn" or "bf16"
	Y     int    // the float32 values (.4S); changed when Quiet
	T, M  int    // bf16 temporaries; the result is in T before the shift
	Out   int    // destination register (may be Y, or T)
	Upper bool   // FCVTN2/SHRN2: into the upper half of Out
	Quiet bool   // bf16: ORR the quiet bit into NaN lanes (see above)
	// Lsb, Bias, Quiet registers (Body's), copied here for the template.
	Lsb, Bias, QuietReg int
}

// Load is one table load done before the head loop.
type Load struct {
	What  string // "c" or "s", for the comment
	Block int    // index in Body.Blocks
	Off   int    // row byte offset the load starts at
	Pairs int    // the block's pairs
	// Kind is "fp" (one FMOVS/FMOVD, FP width in Arr, into Regs[0]), "ld1"
	// (VLD1 of Regs[0]) or "ld2" (VLD2 of two consecutive registers, of
	// which Keep is kept); the vector forms read from R7 = R2+Off.
	Kind string
	// Scalar is Kind == "fp".
	Scalar bool
	// Arr is the register-list arrangement ("S4", "S2", "D2") of a vector
	// load, the FP width ("S", "D") of an "fp" one.
	Arr  string
	Regs []int
	Keep int
}

// Copy is the pass-through narrowing of a "to" kernel: the float32 values
// [RotaryDim, HeadDim) of each head (First…Last), from Src to Dst, both
// post-incremented. When Loop > 0, Body (16 values: two chunks of 8, one per
// working set) runs Loop times first, counted down in R11; then Rest, each
// one or two chunks of 8, 4 or 2 values.
type Copy struct {
	First, Last int
	Src, Dst    string
	Loop        int
	Body        *Chunks
	Rest        []Chunks
}

// Chunks is one step of a Copy: Loads fill the .4S registers Y of Narrows,
// the Narrows (interleaved step by step) narrow them into their Out, and
// Stores write the Outs. Each chunk of 8 values loads two registers Y0, Y1
// and narrows them into the low and upper halves of one Out (.8H); one of 4
// or 2 values loads and narrows one.
type Chunks struct {
	Values        int // values loaded and stored
	Loads, Stores []Access
	Narrows       []Narrow
}
