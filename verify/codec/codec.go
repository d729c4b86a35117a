package codec

import "fmt"

// Scale says where a format keeps the scales that are not in its bytes.
type Scale int

const (
	// NoScale: every scale the values need is in the bytes (f32, f16, bf16
	// and ggml's block formats). Encode and Decode ignore their scale
	// argument and Encode returns 0.
	NoScale Scale = iota
	// TensorScale: one float32 for the whole tensor, chosen by the caller
	// and passed to Encode and Decode (e4m3 and e5m2: x/scale is stored;
	// nvfp4_gs: NVIDIA's global scale).
	TensorScale
	// HeadScale: one float32 per KV head, chosen by the caller; a call codes
	// values of one head and takes that head's scale.
	HeadScale
	// TokenHeadScale: one float32 per head of each token, computed by
	// Encode from the values it codes (one head of one token per call) and
	// returned; the caller keeps it beside the bytes and passes it to
	// Decode.
	TokenHeadScale
)

// String is the name of the placement, as the docs spell it.
func (s Scale) String() string {
	switch s {
	case NoScale:
		return "none"
	case TensorScale:
		return "per tensor"
	case HeadScale:
		return "per KV head"
	case TokenHeadScale:
		return "per token and head"
	}
	return fmt.Sprintf("Scale(%d)", int(s))
}

// Format is one KV-cache format: Block values are stored in Bytes bytes,
// blocks one after another, and Scale says where the scales outside the
// bytes live. The zero Format is not a format.
type Format struct {
	// Name is the format's -out-dtype spelling.
	Name string
	// Block is the number of values one block holds; Encode and Decode
	// take whole blocks.
	Block int
	// Bytes is the size of one block.
	Bytes int
	// Scale is where the format's scales outside the bytes live.
	Scale Scale

	enc func(dst []byte, x []float32, scale float32) float32
	dec func(dst []float32, src []byte, scale float32)
}

// Size is the number of bytes n values take; it panics unless n is a
// non-negative multiple of f.Block.
func (f Format) Size(n int) int {
	if n < 0 || f.Block <= 0 || n%f.Block != 0 {
		panic(fmt.Sprintf("codec: %s.Size: %d values: want a non-negative multiple of %d", f.Name, n, f.Block))
	}
	return n / f.Block * f.Bytes
}

// Encode stores the values of x in dst, len(dst) = f.Size(len(x)), and
// returns the scale the bytes are to be decoded with: for TokenHeadScale
// the one it computed, x being one head of one token; for TensorScale and
// HeadScale the scale it was given; 0 for NoScale. Any float32 value,
// NaN and Inf included, and any scale encode to the bytes the format's
// definition gives; Encode panics only on lengths that do not fit.
func (f Format) Encode(dst []byte, x []float32, scale float32) float32 {
	if f.enc == nil {
		panic("codec: Encode on the zero Format")
	}
	if len(x)%f.Block != 0 || len(dst) != len(x)/f.Block*f.Bytes {
		panic(fmt.Sprintf("codec: %s.Encode: %d values into %d bytes: want a multiple of %d values and %d bytes per %d",
			f.Name, len(x), len(dst), f.Block, f.Bytes, f.Block))
	}
	if f.Scale == TokenHeadScale && len(x) == 0 {
		panic(fmt.Sprintf("codec: %s.Encode: no values: a call codes one head of one token", f.Name))
	}
	return f.enc(dst, x, scale)
}

// Decode reads the blocks of src into dst, len(dst) = len(src)/f.Bytes
// blocks of f.Block values. Every byte pattern decodes to the values the
// format's definition gives (NaN and Inf scales, NaN codes and all) and
// Decode never panics on content; it panics only on lengths that do not
// fit.
func (f Format) Decode(dst []float32, src []byte, scale float32) {
	if f.dec == nil {
		panic("codec: Decode on the zero Format")
	}
	if len(src)%f.Bytes != 0 || len(dst) != len(src)/f.Bytes*f.Block {
		panic(fmt.Sprintf("codec: %s.Decode: %d bytes into %d values: want a multiple of %d bytes and %d values per %d",
			f.Name, len(src), len(dst), f.Bytes, f.Block, f.Bytes))
	}
	f.dec(dst, src, scale)
}

// Formats lists every format, in the order the docs give them.
var Formats = []Format{
	F32, F16, BF16,
	E4M3, E5M2, E4M3Head, E5M2Head,
	Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4NL, MXFP4, NVFP4,
	NVFP4GS, Int8PerTokenHead,
}

// Lookup returns the format spelled name, as -out-dtype spells it.
func Lookup(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// blocks calls fn on each block of x and the matching bytes of dst.
func blocks(dst []byte, x []float32, n, size int, fn func(d []byte, v []float32)) {
	for i := 0; i < len(x)/n; i++ {
		fn(dst[i*size:(i+1)*size], x[i*n:(i+1)*n])
	}
}

// unblocks calls fn on each block of src and the matching values of dst.
func unblocks(dst []float32, src []byte, n, size int, fn func(y []float32, b []byte)) {
	for i := 0; i < len(src)/size; i++ {
		fn(dst[i*n:(i+1)*n], src[i*size:(i+1)*size])
	}
}
