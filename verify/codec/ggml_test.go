package codec

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// vectors is testdata/ggml_quant_vectors.json (see testdata/README.md).
type vectors struct {
	Commit  string `json:"ggml_commit"`
	Skipped []struct {
		Type, Name, Reason string
	} `json:"skipped"`
	Types map[string]struct {
		Block int `json:"block"`
		Bytes int `json:"bytes"`
	} `json:"types"`
	Cases []struct {
		Name          string   `json:"name"`
		Type          string   `json:"type"`
		N             int      `json:"n"`
		X             []string `json:"x"`
		Q             string   `json:"q"`
		Y             []string `json:"y"`
		Indeterminate []int    `json:"indeterminate_blocks"`
	} `json:"cases"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/ggml_quant_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func parseBits(t *testing.T, s []string) []float32 {
	t.Helper()
	out := make([]float32, len(s))
	for i, h := range s {
		u, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = math.Float32frombits(uint32(u))
	}
	return out
}

// f16Fields are the offsets of the f16 fields in a block of each type,
// compared as values (two NaNs match: the NaN ggml computes is the host's
// default NaN, ffc00000 on x86, 7fc00000 on arm64).
var f16Fields = map[string][]int{
	"q8_0": {0}, "q4_0": {0}, "q4_1": {0, 2}, "q5_0": {0}, "q5_1": {0, 2}, "iq4_nl": {0},
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestGGMLVectors checks every recorded row: the bytes Encode writes are
// ggml's (f16 NaNs as NaN), Decode of ggml's bytes gives ggml's float32
// bits, and Decode of Encode's bytes too (NaN as NaN). iq4_nl blocks with
// absolute maximum below 1e-15 compare only d, and values up to the sign
// of zero: ggml leaves their nibbles unwritten (README).
func TestGGMLVectors(t *testing.T) {
	v := loadVectors(t)
	if v.Commit != "d99724f2b141fed9e1a9f402213506c081433465" || len(v.Cases) != 133 {
		t.Fatalf("vectors: commit %s, %d cases: want d99724f2…, 133", v.Commit, len(v.Cases))
	}
	perType := map[string]int{}
	for _, c := range v.Cases {
		f, ok := Lookup(c.Type)
		if !ok {
			t.Fatalf("%s/%s: no format %q", c.Type, c.Name, c.Type)
		}
		if ty := v.Types[c.Type]; ty.Block != f.Block || ty.Bytes != f.Bytes {
			t.Fatalf("%s: vectors say %d values in %d bytes, the format %d in %d", c.Type, ty.Block, ty.Bytes, f.Block, f.Bytes)
		}
		perType[c.Type]++
		x, y := parseBits(t, c.X), parseBits(t, c.Y)
		q, err := hex.DecodeString(c.Q)
		if err != nil || len(x) != c.N || len(y) != c.N || len(q) != f.Size(c.N) {
			t.Fatalf("%s/%s: malformed row (%v)", c.Type, c.Name, err)
		}
		// zero[b]: an iq4_nl block ggml leaves unwritten.
		zero := make([]bool, c.N/f.Block)
		if c.Type == "iq4_nl" {
			for b := range zero {
				amax, _ := absMax(x[b*32 : b*32+32])
				zero[b] = amax < 1e-15
			}
			for _, b := range c.Indeterminate {
				if !zero[b] {
					t.Fatalf("%s/%s: indeterminate block %d is not below 1e-15", c.Type, c.Name, b)
				}
			}
		}

		got := make([]byte, len(q))
		f.Encode(got, x, 0)
		for b := 0; b < len(zero); b++ {
			gb, wb := got[b*f.Bytes:(b+1)*f.Bytes], q[b*f.Bytes:(b+1)*f.Bytes]
			for i := range gb {
				if gb[i] == wb[i] {
					continue
				}
				if zero[b] && i >= 2 {
					continue // unwritten nibbles: only d counts
				}
				if isNaNF16Field(c.Type, gb, wb, i) {
					continue
				}
				t.Errorf("%s/%s: block %d byte %d = %#02x, ggml wrote %#02x\n got  %x\n want %x", c.Type, c.Name, b, i, gb[i], wb[i], gb, wb)
				break
			}
		}

		fromGGML := make([]float32, c.N)
		f.Decode(fromGGML, q, 0)
		fromOurs := make([]float32, c.N)
		f.Decode(fromOurs, got, 0)
		for i := range y {
			if !sameBits(fromGGML[i], y[i]) {
				t.Errorf("%s/%s: Decode(ggml's bytes)[%d] = %08x, ggml read %08x", c.Type, c.Name, i, math.Float32bits(fromGGML[i]), math.Float32bits(y[i]))
			}
			ok := sameBits(fromOurs[i], y[i]) || (zero[i/f.Block] && fromOurs[i] == 0 && y[i] == 0)
			if !ok {
				t.Errorf("%s/%s: Decode(Encode(x))[%d] = %08x, ggml read %08x", c.Type, c.Name, i, math.Float32bits(fromOurs[i]), math.Float32bits(y[i]))
			}
		}
	}
	for _, ty := range []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "mxfp4", "nvfp4"} {
		if perType[ty] < 16 {
			t.Errorf("%s: %d rows, want at least 16", ty, perType[ty])
		}
	}
}

// isNaNF16Field reports whether byte i of the blocks a and b lies in an f16
// field that is NaN in both.
func isNaNF16Field(ty string, a, b []byte, i int) bool {
	for _, off := range f16Fields[ty] {
		if i == off || i == off+1 {
			ha := uint16(a[off]) | uint16(a[off+1])<<8
			hb := uint16(b[off]) | uint16(b[off+1])<<8
			return ha&0x7fff > 0x7c00 && hb&0x7fff > 0x7c00
		}
	}
	return false
}

// TestGGMLSkippedRowsDefined covers the rows the vectors leave out
// (undefined in ggml) with ropegen's definitions: NaN and Inf blocks for
// the integer formats, Inf for mxfp4, tiny scales whose reciprocal
// overflows.
func TestGGMLSkippedRowsDefined(t *testing.T) {
	v := loadVectors(t)
	if len(v.Skipped) == 0 {
		t.Fatal("no skipped rows listed")
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	block := func(vals ...float32) []float32 {
		x := make([]float32, 32)
		copy(x, vals)
		for i := len(vals); i < 32; i++ {
			x[i] = float32(i%7) - 3 // -3…3
		}
		return x
	}
	dec := func(f Format, x []float32) ([]byte, []float32) {
		b := make([]byte, f.Size(len(x)))
		f.Encode(b, x, 0)
		y := make([]float32, len(x))
		f.Decode(y, b, 0)
		return b, y
	}

	// A NaN among finite values: the NaN is passed over by the block
	// maximum and its product counts as 0, so it stores the zero quant and
	// reads back as 0 (q4_1, q5_1: as min, the quant 0).
	x := block(nan)
	for _, f := range []Format{Q8_0, Q4_0, Q5_0} {
		_, y := dec(f, x)
		if y[0] != 0 {
			t.Errorf("%s: NaN reads back as %v, want 0", f.Name, y[0])
		}
		// |d| away at most: the clamped side of q4_0 and q5_0 (d = 3/8,
		// 3/16), half a step for q8_0; d is exact in f16 here.
		tol := map[string]float64{"q8_0": 3.0 / 254, "q4_0": 3.0 / 8, "q5_0": 3.0 / 16}[f.Name]
		for i := 1; i < 32; i++ {
			if math.Abs(float64(y[i]-x[i])) > tol {
				t.Errorf("%s: x[%d] = %v reads back as %v, more than %v away", f.Name, i, x[i], y[i], tol)
			}
		}
	}
	for _, f := range []Format{Q4_1, Q5_1} {
		b, y := dec(f, x)
		if lo := getF16(b[2:]); y[0] != lo || lo != -3 {
			t.Errorf("%s: NaN reads back as %v, want min %v = -3", f.Name, y[0], lo)
		}
	}
	// q8_0's MAX: a NaN last makes amax NaN, d NaN, every product NaN.
	b, y := dec(Q8_0, block(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, nan))
	if h := uint16(b[0]) | uint16(b[1])<<8; h&0x7fff <= 0x7c00 {
		t.Errorf("q8_0 with a NaN last: d = %#04x, want NaN", h)
	}
	for j := 0; j < 32; j++ {
		if b[2+j] != 0 || y[j] == y[j] {
			t.Errorf("q8_0 with a NaN last: q[%d] = %d, y = %v: want 0 and NaN", j, int8(b[2+j]), y[j])
		}
	}

	// +Inf: the block maximum is Inf, d = ∓Inf, id = ∓0, every product
	// 0·x = 0 except Inf·0 = NaN, which counts as 0 too: the zero quant.
	for _, f := range []Format{Q8_0, Q4_0, Q5_0} {
		b, y := dec(f, block(inf, -inf, 1))
		zq := map[string]byte{"q8_0": 0, "q4_0": 0x88, "q5_0": 0}[f.Name]
		off := map[string]int{"q8_0": 2, "q4_0": 2, "q5_0": 6}[f.Name]
		for j := off; j < f.Bytes; j++ {
			if b[j] != zq {
				t.Errorf("%s with ±Inf: byte %d = %#02x, want %#02x", f.Name, j, b[j], zq)
			}
		}
		for _, v := range y {
			if v == v {
				t.Errorf("%s with ±Inf reads back %v, want NaN (0·Inf)", f.Name, v)
				break
			}
		}
	}
	// q4_1 with -Inf: min = -Inf, d = Inf, id = 0, (x − min)·0 = Inf·0: NaN
	// counted as 0, every quant 0; m = -Inf; all read back NaN or -Inf.
	b, y = dec(Q4_1, block(-inf, 1))
	for j := 4; j < 20; j++ {
		if b[j] != 0 {
			t.Errorf("q4_1 with -Inf: byte %d = %#02x, want 0", j, b[j])
		}
	}
	for _, v := range y {
		if !(v != v || math.IsInf(float64(v), -1)) {
			t.Errorf("q4_1 with -Inf reads back %v", v)
		}
	}

	// Tiny nonzero scales whose reciprocal overflows: id = ±Inf; positive
	// products clamp to the top quant, negative to the bottom, zeros
	// (0·Inf = NaN) to the zero quant.
	tiny := math.Float32frombits(8) // 8·2⁻¹⁴⁹: q4_0's d = max/−8 = −2⁻¹⁴⁹
	tinyBlock := func(vals ...float32) []float32 {
		x := make([]float32, 32)
		copy(x, vals)
		return x
	}
	bt, _ := dec(Q4_0, tinyBlock(-tiny, tiny, 0))
	if id := 1 / (-tiny / -8); !math.IsInf(float64(id), 1) {
		t.Fatalf("setup: id = %v, want +Inf", id)
	}
	// d = −tiny/−8 > 0: x = −tiny → −Inf → 0; x = tiny → +Inf → 15; 0 → 8.
	if q0, q1, q2 := bt[2]&0xf, bt[3]&0xf, bt[4]&0xf; q0 != 0 || q1 != 15 || q2 != 8 {
		t.Errorf("q4_0 tiny d: quants %d %d %d, want 0 15 8", q0, q1, q2)
	}
	bt, _ = dec(Q8_0, tinyBlock(64*tiny, -64*tiny, 0)) // d = 512·2⁻¹⁴⁹/127, 1/d = +Inf
	if q0, q1, q2 := int8(bt[2]), int8(bt[3]), int8(bt[4]); q0 != 127 || q1 != -127 || q2 != 0 {
		t.Errorf("q8_0 tiny d: quants %d %d %d, want 127 -127 0", q0, q1, q2)
	}

	// mxfp4: Inf gives e = 254 and the whole block index 0; amax below
	// 2^-125 gives e = 0.
	bm, ym := dec(MXFP4, block(inf, 5))
	if bm[0] != 254 {
		t.Errorf("mxfp4 with Inf: e = %d, want 254", bm[0])
	}
	for j := 1; j < 17; j++ {
		if bm[j] != 0 {
			t.Errorf("mxfp4 with Inf: byte %d = %#02x, want 0", j, bm[j])
		}
	}
	for _, v := range ym {
		if v != 0 || math.Signbit(float64(v)) {
			t.Errorf("mxfp4 with Inf reads back %v, want +0", v)
			break
		}
	}
	small := make([]float32, 32)
	small[3] = 0x1p-126
	small[9] = -0x1p-130
	bm, ym = dec(MXFP4, small)
	if bm[0] != 0 {
		t.Errorf("mxfp4 amax 2^-126: e = %d, want 0", bm[0])
	}
	if ym[3] != 0x1p-126 || ym[9] != 0 {
		t.Errorf("mxfp4 amax 2^-126 reads %v, %v: want 2^-126 (4·2^-128) and -0 or 0", ym[3], ym[9])
	}
}
