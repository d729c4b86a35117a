package vec

// Packer is a Quantizer target's operations for ggml's 4- and 5-bit block
// formats (the qn family: q4_0, q4_1, q5_0, q5_1; docs/contract.md §11):
// variable shifts and an OR across a block (q5's 32 high bits in one
// word), and the nibble and word accesses of their blocks. Blocks of 32
// values are held as members, as Quantizer's (ops.go).
type Packer interface {
	Quantizer

	// Shlv32 and Shrv32 shift each lane of a left, right (logical: zeros
	// in) by the count in the same lane of b, 0 ≤ b < 32.
	Shlv32(a, b V) V
	Shrv32(a, b V) V
	// OrAcross is the bitwise OR of the lanes of every member of xs (a
	// block of 32 values), in every lane of one V.
	OrAcross(xs []V) V

	// StoreNibbles writes the members qs of a block (every lane in
	// [0, 15]) as 16 bytes at a (a byte array, a.Off bytes on): byte j is
	// q_j | q_{j+16}<<4, j = 0…15.
	StoreNibbles(a Arr, qs []V)
	// LoadNibbles is the 16 bytes at a as the members of a block:
	// q_j = byte j & 15, q_{j+16} = byte j >> 4, j = 0…15.
	LoadNibbles(a Arr) []V
	// LoadU32 is the 32-bit little-endian value at a (a byte array, a.Off
	// bytes on, any alignment) in every lane; StoreU32 writes lane 0 of v
	// there.
	LoadU32(a Arr) V
	StoreU32(a Arr, v V)
}
