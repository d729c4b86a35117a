package codec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// refDecode is a second decoder of every format, written from the block
// layouts of testdata/ggml_quant_vectors.json ("layout") and the formats'
// comments, with x448/float16 for f16 fields and the OFP8 formula for fp8:
// the values any byte pattern must decode to.
func refDecode(name string, b []byte, scale float32) []float32 {
	f16 := func(o int) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b[o:])).Float32() }
	nib := func(o, j int) int { // q_j of 32 nibbles packed as byte j = q_j | q_{j+16}<<4 from offset o
		return int(b[o+j%16]>>(4*(j/16))) & 0xf
	}
	var y []float32
	switch name {
	case "f32":
		for i := 0; i < len(b); i += 4 {
			y = append(y, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
		}
	case "f16":
		for i := 0; i < len(b); i += 2 {
			y = append(y, f16(i))
		}
	case "bf16":
		for i := 0; i < len(b); i += 2 {
			y = append(y, math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[i:]))<<16))
		}
	case "e4m3", "e4m3_head", "e5m2", "e5m2_head":
		s8 := fp8Specs[0]
		if name[1] == '5' {
			s8 = fp8Specs[1]
		}
		for _, c := range b {
			y = append(y, float32(s8.value(c))*scale)
		}
	case "int8_per_token_head":
		for _, c := range b {
			y = append(y, float32(int8(c))*scale)
		}
	case "q8_0":
		d := f16(0)
		for j := 0; j < 32; j++ {
			y = append(y, float32(int8(b[2+j]))*d)
		}
	case "q4_0", "iq4_nl":
		d := f16(0)
		for j := 0; j < 32; j++ {
			if name == "q4_0" {
				y = append(y, float32(nib(2, j)-8)*d)
			} else {
				y = append(y, d*float32([]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}[nib(2, j)]))
			}
		}
	case "q4_1":
		d, m := f16(0), f16(2)
		for j := 0; j < 32; j++ {
			y = append(y, float32(float32(nib(4, j))*d)+m)
		}
	case "q5_0", "q5_1":
		o, d, m := 2, f16(0), float32(0)
		if name == "q5_1" {
			o, m = 4, f16(2)
		}
		qh := binary.LittleEndian.Uint32(b[o:])
		for j := 0; j < 32; j++ {
			q := nib(o+4, j) | int(qh>>j&1)<<4
			if name == "q5_0" {
				y = append(y, float32(q-16)*d)
			} else {
				y = append(y, float32(float32(q)*d)+m)
			}
		}
	case "mxfp4", "nvfp4":
		kv := []float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
		if name == "mxfp4" {
			d := float32(math.Ldexp(1, int(b[0])-128)) // 2^(e−128), e = 255 included
			for j := 0; j < 32; j++ {
				y = append(y, kv[nib(1, j)]*d)
			}
			break
		}
		for s := 0; s < 4; s++ {
			c := b[s]
			var d float64 // ue4m3(d[s])/2, 0 for 0 and 0x7f, bit 7 ignored
			if c != 0 && c != 0x7f {
				e, m := int(c>>3&15), float64(c&7)
				if e == 0 {
					d = m / 8 * math.Ldexp(1, -6)
				} else {
					d = (1 + m/8) * math.Ldexp(1, e-7)
				}
			}
			for j := 0; j < 16; j++ {
				q := int(b[4+8*s+j%8]>>(4*(j/8))) & 0xf
				y = append(y, kv[q]*float32(d/2))
			}
		}
	case "nvfp4_gs":
		s := float32(fp8Specs[0].value(b[8])) / scale
		for j := 0; j < 16; j++ {
			c := b[j/2] >> (4 * (j % 2)) & 0xf
			v := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}[c&7]
			if c&8 != 0 {
				v = -v
			}
			y = append(y, v*s)
		}
	default:
		panic("refDecode: no format " + name)
	}
	return y
}

// checkDecode decodes b with f and with refDecode, block by block, and
// reports the first value that differs (NaN matching NaN).
func checkDecode(t *testing.T, f Format, b []byte, scale float32) {
	t.Helper()
	b = b[:len(b)/f.Bytes*f.Bytes]
	y := make([]float32, len(b)/f.Bytes*f.Block)
	f.Decode(y, b, scale)
	for blk := 0; blk < len(b)/f.Bytes; blk++ {
		want := refDecode(f.Name, b[blk*f.Bytes:(blk+1)*f.Bytes], scale)
		for j, w := range want {
			if got := y[blk*f.Block+j]; !sameBits(got, w) {
				t.Fatalf("%s: block %x, scale %v: value %d = %v (%#08x), want %v (%#08x)",
					f.Name, b[blk*f.Bytes:(blk+1)*f.Bytes], scale, j, got, math.Float32bits(got), w, math.Float32bits(w))
			}
		}
	}
}

// TestDecodeAnyBytes decodes random blocks and every special byte a
// format's scale can hold (NaN and Inf f16 scales, e8m0 0xFF, UE4M3 0x7F
// and 0xFF, the fp8 NaN codes) under ordinary and odd scales, against
// refDecode.
func TestDecodeAnyBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	scales := []float32{1, 0.37, 3e-5, 0, float32(math.Inf(1)), float32(math.NaN()), -2}
	specials := []byte{0x00, 0x7c, 0x7e, 0x7f, 0x80, 0xfc, 0xfe, 0xff, 0x01, 0x88}
	for _, f := range Formats {
		b := make([]byte, 64*f.Bytes)
		for it := 0; it < 50; it++ {
			for i := range b {
				b[i] = byte(r.Uint32())
				if r.IntN(4) == 0 {
					b[i] = specials[r.IntN(len(specials))]
				}
			}
			for _, s := range scales {
				checkDecode(t, f, b, s)
			}
		}
		for _, c := range specials { // every byte of a block the same special
			for i := range b {
				b[i] = c
			}
			for _, s := range scales {
				checkDecode(t, f, b, s)
			}
		}
	}
	// Named cases: e8m0 0xFF is 2^127 (±8, ±12 overflow to ±Inf); UE4M3
	// 0x7F reads 0 and 0xFF 480; the e4m3 NaN code; a NaN f16 scale.
	y := make([]float32, 32)
	MXFP4.Decode(y, append([]byte{0xff, 0x71}, make([]byte, 15)...), 0)
	if y[0] != 0x1p127 || !math.IsInf(float64(y[16]), 1) {
		t.Errorf("mxfp4 e = 0xFF: %v, %v: want 2^127, +Inf", y[0], y[16])
	}
	y = make([]float32, 64)
	NVFP4.Decode(y, append([]byte{0x7f, 0xff, 0x80, 0x08}, append([]byte{0x77}, make([]byte, 31)...)...), 0)
	if y[0] != 0 || y[16] != 0 {
		t.Errorf("nvfp4 UE4M3 0x7F: %v, %v, want 0", y[0], y[16])
	}
	NVFP4.Decode(y, append([]byte{0xff, 0, 0, 0}, append([]byte{0x07}, make([]byte, 31)...)...), 0)
	if y[0] != 6*480 { // 0xFF: exponent field 15, mantissa 7: 1.875·2⁸
		t.Errorf("nvfp4 UE4M3 0xFF with E2M1 6: %v, want 2880", y[0])
	}
	y = make([]float32, 1)
	E4M3.Decode(y, []byte{0xff}, 2)
	if y[0] == y[0] {
		t.Errorf("e4m3 0xFF: %v, want NaN", y[0])
	}
	y = make([]float32, 32)
	Q8_0.Decode(y, append([]byte{0x00, 0x7e, 0}, make([]byte, 31)...), 0)
	for _, v := range y {
		if v == v {
			t.Errorf("q8_0 with NaN d: %v, want NaN", v)
			break
		}
	}
}

// FuzzDecode: any bytes, any scale, any format decode without panic to
// refDecode's values.
func FuzzDecode(f *testing.F) {
	for i := range Formats {
		f.Add(uint8(i), float32(1), make([]byte, Formats[i].Bytes))
		f.Add(uint8(i), float32(math.NaN()), []byte{0xff, 0x7e, 0x7f, 0x7c, 0x80, 0x00, 0xff, 0x7e, 0x7f, 0x7c, 0x80, 0x00, 0xff, 0x7e, 0x7f, 0x7c, 0x80, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12})
	}
	f.Fuzz(func(t *testing.T, idx uint8, scale float32, data []byte) {
		checkDecode(t, Formats[int(idx)%len(Formats)], data, scale)
	})
}

// FuzzEncode: any values encode without panic, and to bytes that decode
// to finite values or the NaN and Inf the format's definition allows.
func FuzzEncode(f *testing.F) {
	f.Add(uint8(0), float32(1), []byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, idx uint8, scale float32, data []byte) {
		fm := Formats[int(idx)%len(Formats)]
		x := make([]float32, len(data)/4/fm.Block*fm.Block)
		if len(x) == 0 {
			return
		}
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		b := make([]byte, fm.Size(len(x)))
		s := fm.Encode(b, x, scale)
		checkDecode(t, fm, b, s)
	})
}

// TestIQ4NLZeroBlocks pins ropegen's definition where ggml leaves the
// nibbles unwritten: d = +0 and every nibble 8, whatever came before.
func TestIQ4NLZeroBlocks(t *testing.T) {
	nan := float32(math.NaN())
	for _, x := range [][]float32{
		make([]float32, 32),
		{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan},
		{1e-16, -3e-20, 0x1p-149},
	} {
		xx := append(make([]float32, 32), x...) // a written block first
		xx = xx[:64]
		for i := 0; i < 32; i++ {
			xx[i] = float32(i) - 15.5
		}
		copy(xx[32:], x)
		b := make([]byte, 36)
		IQ4NL.Encode(b, xx, 0)
		if b[18] != 0 || b[19] != 0 {
			t.Errorf("d = %02x%02x, want 0000", b[19], b[18])
		}
		for j := 20; j < 36; j++ {
			if b[j] != 0x88 {
				t.Errorf("byte %d = %#02x, want 0x88", j, b[j])
			}
		}
		y := make([]float32, 64)
		IQ4NL.Decode(y, b, 0)
		for j := 32; j < 64; j++ {
			if y[j] != 0 || math.Signbit(float64(y[j])) {
				t.Errorf("y[%d] = %v, want +0", j, y[j])
			}
		}
	}
}
