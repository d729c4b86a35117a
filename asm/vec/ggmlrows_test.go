package vec_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
)

// ggmlRow is a row: the float32 input (little-endian bytes), the bytes
// ggml wrote and the float32 bits it read back.
type ggmlRow struct {
	x, q []byte
	y    []uint32
}

// ggmlRows are the rows verify/codec/testdata/ggml_quant_vectors.json
// recorded from ggml's own quantize_row_<type>_ref and dequantize_row_<type>
// (its README gives the provenance), of one type.
func ggmlRows(t *testing.T, typ string) (rows []ggmlRow) {
	t.Helper()
	raw, err := os.ReadFile("../../verify/codec/testdata/ggml_quant_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Type string   `json:"type"`
			X    []string `json:"x"`
			Q    string   `json:"q"`
			Y    []string `json:"y"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	bits := func(s []string) []uint32 {
		out := make([]uint32, len(s))
		for i, h := range s {
			u, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = uint32(u)
		}
		return out
	}
	for _, c := range v.Cases {
		if c.Type != typ {
			continue
		}
		q, err := hex.DecodeString(c.Q)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]byte, 4*len(c.X))
		for i, u := range bits(c.X) {
			binary.LittleEndian.PutUint32(x[4*i:], u)
		}
		rows = append(rows, ggmlRow{x, q, bits(c.Y)})
	}
	if len(rows) == 0 {
		t.Fatalf("no %s rows in ggml_quant_vectors.json", typ)
	}
	return rows
}

// f16Same reports whether the f16 fields at the offsets of a block are
// equal, two NaNs matching (ggml's NaN is its host's default NaN).
func f16Same(a, b []byte, offs []int) bool {
	for _, o := range offs {
		x, y := binary.LittleEndian.Uint16(a[o:]), binary.LittleEndian.Uint16(b[o:])
		nan := func(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
		if x != y && !(nan(x) && nan(y)) {
			return false
		}
	}
	return true
}

// TestFamiliesGGMLRows runs ggml's recorded rows through the families as
// written once (q8_0, q4_0, q4_1, q5_0, q5_1, mxfp4, iq4_nl, nvfp4 in
// blocks of 64) (the lane evaluator; TestKernels runs the same family code
// on every backend against verify/codec): each block's bytes are the bytes
// ggml's quantize_row_<type>_ref wrote (f16 fields compared as values, NaN
// as NaN, everything else byte for byte; an iq4_nl block with absolute
// maximum below 1e-15 d alone, its nibbles unwritten by ggml and 8s here,
// as verify/codec defines them), and dequantizing ggml's bytes gives the
// float32 bits its dequantize_row_<type> read (NaN as NaN).
func TestFamiliesGGMLRows(t *testing.T) {
	var l lane
	arr := func(b *[]byte, e vec.Elem) vec.Arr { return vec.Arr{Elem: e, P: b} }
	type family struct {
		typ  string
		e    vec.Elem
		f16  []int // the f16 fields' offsets
		q, d func(src, dst vec.Arr)
	}
	families := []family{
		{"q8_0", vec.Q8, []int{0}, func(s, d vec.Arr) { vec.Quantize(l, l, s, d) }, func(s, d vec.Arr) { vec.Dequantize(l, l, s, d) }},
	}
	for _, c := range qnElems {
		e := c.e
		offs := []int{0}
		if e == vec.Q4_1 || e == vec.Q5_1 {
			offs = []int{0, 2}
		}
		families = append(families, family{c.fm.Name, e, offs, func(s, d vec.Arr) { vec.QuantizeQN(l, l, e, s, d) }, func(s, d vec.Arr) { vec.DequantizeQN(l, l, e, s, d) }})
	}
	families = append(families,
		family{"mxfp4", vec.MXFP4, nil, func(s, d vec.Arr) { vec.QuantizeMXFP4(l, l, s, d) }, func(s, d vec.Arr) { vec.DequantizeMXFP4(l, l, s, d) }},
		family{"iq4_nl", vec.IQ4NL, []int{0}, func(s, d vec.Arr) { vec.QuantizeIQ4NL(l, l, s, d) }, func(s, d vec.Arr) { vec.DequantizeIQ4NL(l, l, s, d) }},
		family{"nvfp4", vec.NVFP4, nil, func(s, d vec.Arr) { vec.QuantizeNVFP4(l, l, s, d) }, func(s, d vec.Arr) { vec.DequantizeNVFP4(l, l, s, d) }})
	for _, f := range families {
		bb, bv := f.e.BlockBytes(), f.e.BlockValues()
		blocks, tiny := 0, 0
		for r, row := range ggmlRows(t, f.typ) {
			for b := 0; 4*bv*b < len(row.x); b++ {
				src := bytes.Clone(row.x[4*bv*b : 4*bv*(b+1)])
				want := row.q[bb*b : bb*b+bb]
				got := make([]byte, bb)
				f.q(arr(&src, vec.F32), arr(&got, f.e))
				head := 0
				if len(f.f16) > 0 {
					head = f.f16[len(f.f16)-1] + 2
				}
				if f.e == vec.IQ4NL && iq4nlTiny(src) {
					// ggml leaves the nibbles unwritten (the notes'
					// indeterminate blocks): d alone is ggml's; the
					// nibbles are verify/codec's 8s
					if !f16Same(got, want, f.f16) || !bytes.Equal(got[head:], bytes.Repeat([]byte{0x88}, 16)) {
						t.Errorf("%s row %d block %d (absolute maximum below 1e-15): the family wrote %x, want d %x and sixteen 0x88", f.typ, r, b, got, want[:2])
					}
					tiny++
				} else if !f16Same(got, want, f.f16) || !bytes.Equal(got[head:], want[head:]) {
					t.Errorf("%s row %d block %d: the family wrote %x, ggml %x", f.typ, r, b, got, want)
				}
				q := bytes.Clone(want)
				out := make([]byte, 4*bv)
				f.d(arr(&q, f.e), arr(&out, vec.F32))
				for j := range bv {
					g, w := binary.LittleEndian.Uint32(out[4*j:]), row.y[bv*b+j]
					nan := func(u uint32) bool { return math.IsNaN(float64(math.Float32frombits(u))) }
					if g != w && !(nan(g) && nan(w)) {
						t.Errorf("%s row %d block %d value %d: the family read %#08x, ggml %#08x", f.typ, r, b, j, g, w)
					}
				}
				blocks++
			}
		}
		if blocks < 16 {
			t.Errorf("%s: %d blocks checked, want the rows' 16 or more", f.typ, blocks)
		}
		if tiny > 0 {
			t.Logf("%s: %d blocks of ggml's rows, byte for byte (%d of them d alone: ggml leaves their nibbles unwritten)", f.typ, blocks, tiny)
		} else {
			t.Logf("%s: %d blocks of ggml's rows, byte for byte", f.typ, blocks)
		}
	}
}

// iq4nlTiny reports whether the block of 32 float32 (little-endian bytes)
// has absolute maximum below 1e-15 (NaNs passed over), where ggml's
// quantize_row_iq4_nl_ref writes d = 0 and leaves the nibbles unwritten.
func iq4nlTiny(x []byte) bool {
	amax := float32(0)
	for j := range 32 {
		if a := float32(math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(x[4*j:]))))); a > amax {
			amax = a
		}
	}
	return amax < 1e-15
}
