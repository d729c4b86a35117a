package spec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gw "github.com/ropegen/ropegen/internal/ggufwrite"
)

// smallGGUF is a llama file with llama3 factors and metadata of every
// value type: the subject of the truncation and corruption tests. Its last
// tensor ends at a multiple of the alignment, so that every proper prefix
// of it lacks bytes the reader needs.
func smallGGUF() *gw.File {
	factors := make([]float32, 32)
	for i := range factors {
		factors[i] = 1 + float32(i)/8
	}
	return &gw.File{
		KV: []gw.KV{
			gw.Str("general.architecture", "llama"),
			gw.Str("general.name", "small"),
			{Key: "test.u8", Type: gw.Uint8, Value: uint8(7)},
			{Key: "test.i8", Type: gw.Int8, Value: int8(-7)},
			{Key: "test.u16", Type: gw.Uint16, Value: uint16(700)},
			{Key: "test.i16", Type: gw.Int16, Value: int16(-700)},
			{Key: "test.i64", Type: gw.Int64, Value: int64(-1 << 40)},
			{Key: "test.f64", Type: gw.Float64, Value: 2.5},
			gw.BoolKV("test.bool", true),
			gw.Arr("test.nested", gw.ArrayValue{Elem: gw.Array, Items: []any{
				gw.ArrayValue{Elem: gw.String, Items: []any{"x", "yz"}},
				gw.ArrayValue{Elem: gw.Float64, Items: []any{1.0, 2.0}},
			}}),
			gw.U64("llama.context_length", 131072),
			gw.U32("llama.embedding_length", 4096),
			gw.I32s("llama.attention.head_count", 64, 64),
			gw.U32("llama.rope.dimension_count", 64),
			gw.F32("llama.rope.freq_base", 500000),
			gw.Strs("tokenizer.ggml.tokens", "<s>", "</s>", "hello"),
		},
		Tensors: []gw.Tensor{
			gw.F32Tensor("rope_freqs.weight", factors),
			{Name: "token_embd.weight", Dims: []uint64{8, 4}, Type: gw.TypeF16, Data: bytes.Repeat([]byte{0, 0x3c}, 32)},
		},
	}
}

func readBytes(data []byte, opt GGUFOptions) (Spec, GGUFInfo, error) {
	return ReadGGUF(bytes.NewReader(data), int64(len(data)), opt)
}

func TestGGUFSmall(t *testing.T) {
	data := smallGGUF().Bytes()
	if len(data)%32 != 0 {
		t.Fatalf("the small file is %d bytes: its last tensor should end at a multiple of 32", len(data))
	}
	s, info, err := readBytes(data, GGUFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.HeadDim != 64 || s.RotaryDim != 0 || s.Base != 500000 || s.Layout != Interleaved || s.Scaling.Kind() != ScalingNone || len(s.Scaling.FreqFactors) != 32 {
		t.Fatalf("spec %+v", s)
	}
	for i, f := range s.Scaling.FreqFactors {
		if f != 1+float64(i)/8 {
			t.Fatalf("factor %d = %v, want %v", i, f, 1+float64(i)/8)
		}
	}
	if info.ContextLength != 131072 || s.MaxPositions != 131072 || info.RopeType != "norm" || info.Version != 3 {
		t.Errorf("info %+v", info)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	// Version 2 reads the same; so does another alignment.
	f := smallGGUF()
	f.Version = 2
	if s2, _, err := readBytes(f.Bytes(), GGUFOptions{}); err != nil || s2.HeadDim != 64 {
		t.Errorf("version 2: %+v, %v", s2, err)
	}
	f = smallGGUF()
	f.Alignment = 64
	if s3, _, err := readBytes(f.Bytes(), GGUFOptions{}); err != nil || len(s3.Scaling.FreqFactors) != 32 || s3.Scaling.FreqFactors[31] != 1+31.0/8 {
		t.Errorf("alignment 64: %+v, %v", s3, err)
	}
}

// Every proper prefix of the small file is refused with a *GGUFError.
func TestGGUFTruncated(t *testing.T) {
	data := smallGGUF().Bytes()
	for n := range len(data) {
		_, _, err := readBytes(data[:n], GGUFOptions{})
		var ge *GGUFError
		if !errors.As(err, &ge) {
			t.Fatalf("truncated to %d of %d bytes: error %v, want a *GGUFError", n, len(data), err)
		}
		if ge.Msg == "" || ge.Offset > int64(n) {
			t.Fatalf("truncated to %d bytes: %+v", n, ge)
		}
	}
	// And through a file.
	path := filepath.Join(t.TempDir(), "cut.gguf")
	must(t, os.WriteFile(path, data[:len(data)-1], 0o644))
	_, _, err := LoadGGUF(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+`: tensor "token_embd.weight" at byte `) || !strings.Contains(err.Error(), "past the end of the file") {
		t.Errorf("LoadGGUF of a cut file: %v", err)
	}
}

// patch returns a copy of data with b written at the offset of the first
// occurrence of marker plus skip.
func patch(t *testing.T, data []byte, marker string, skip int, b []byte) []byte {
	t.Helper()
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("marker %q not in the file", marker)
	}
	out := bytes.Clone(data)
	copy(out[i+skip:], b)
	return out
}

func le32(v uint32) []byte  { return binary.LittleEndian.AppendUint32(nil, v) }
func le64b(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// withKV is the small file with kv changed: entries with the same key
// replaced, others added at the end.
func withKV(kv ...gw.KV) *gw.File {
	f := smallGGUF()
	for _, e := range kv {
		found := false
		for i := range f.KV {
			if f.KV[i].Key == e.Key {
				f.KV[i], found = e, true
			}
		}
		if !found {
			f.KV = append(f.KV, e)
		}
	}
	return f
}

func without(f *gw.File, keys ...string) *gw.File {
	var kv []gw.KV
	for _, e := range f.KV {
		drop := false
		for _, k := range keys {
			drop = drop || e.Key == k
		}
		if !drop {
			kv = append(kv, e)
		}
	}
	f.KV = kv
	return f
}

func withTensor(f *gw.File, ts ...gw.Tensor) *gw.File {
	for _, t := range ts {
		found := false
		for i := range f.Tensors {
			if f.Tensors[i].Name == t.Name {
				f.Tensors[i], found = t, true
			}
		}
		if !found {
			f.Tensors = append([]gw.Tensor{t}, f.Tensors...)
		}
	}
	return f
}

func filledF32(n int, v float32) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = v
	}
	return l
}

// mrope is a qwen2vl file with the given sections.
func mrope(sections ...int32) *gw.File {
	return &gw.File{KV: []gw.KV{
		gw.Str("general.architecture", "qwen2vl"),
		gw.U32("qwen2vl.embedding_length", 3584), gw.U32("qwen2vl.attention.head_count", 28),
		gw.I32s("qwen2vl.rope.dimension_sections", sections...),
	}}
}

func TestGGUFMalformed(t *testing.T) {
	small := smallGGUF().Bytes()
	big := uint64(1) << 62
	for _, tt := range []struct {
		name   string
		data   []byte
		opt    GGUFOptions
		key    string // GGUFError.Key
		tensor string // GGUFError.Tensor
		at     bool   // an offset is given
		msg    string
	}{
		{"empty", nil, GGUFOptions{}, "", "", true, "the file ends (size 0) inside the magic number"},
		{"magic", patch(t, small, "GGUF", 0, []byte("GGML")), GGUFOptions{}, "", "", true, `not a GGUF file: it begins with "GGML", want "GGUF"`},
		{"big-endian", patch(t, small, "GGUF", 4, []byte{0, 0, 0, 3}), GGUFOptions{}, "", "", true, "a big-endian GGUF file (version bytes 00 00 00 03): ropegen reads little-endian files only"},
		{"version 1", patch(t, small, "GGUF", 4, le32(1)), GGUFOptions{}, "", "", true, "GGUF version 1 (32-bit counts and lengths) is not supported"},
		{"version 4", patch(t, small, "GGUF", 4, le32(4)), GGUFOptions{}, "", "", true, "unknown GGUF version 4: ropegen reads versions 2 and 3"},
		{"metadata count", patch(t, small, "GGUF", 16, le64b(big)), GGUFOptions{}, "", "", true, "4611686018427387904 metadata entries cannot fit in the"},
		{"tensor count", patch(t, small, "GGUF", 8, le64b(big)), GGUFOptions{}, "", "", true, "4611686018427387904 tensors cannot fit in the"},
		{"key length", patch(t, small, "general.architecture", -8, le64b(big)), GGUFOptions{}, "", "", true, "inside the key of metadata entry 0: 4611686018427387904 bytes needed"},
		{"key too long", (&gw.File{KV: []gw.KV{gw.U32(strings.Repeat("k", 70000), 1)}}).Bytes(), GGUFOptions{}, "", "", true, "the key of metadata entry 0 is 70000 bytes long: want at most 65535"},
		{"string length", patch(t, small, "general.name", 16, le64b(big)), GGUFOptions{}, "general.name", "", true, "inside a string value: 4611686018427387904 bytes needed"},
		{"array length", patch(t, small, "tokenizer.ggml.tokens", 29, le64b(big)), GGUFOptions{}, "tokenizer.ggml.tokens", "", true, "an array of 4611686018427387904 string values cannot fit in the"},
		{"array of u64s", patch(t, small, "test.nested", 62, le64b(big)), GGUFOptions{}, "test.nested", "", true, "an array of 4611686018427387904 float64 values cannot fit in the"},
		{"value type", patch(t, small, "general.name", 12, le32(13)), GGUFOptions{}, "general.name", "", true, "value type 13 is not a GGUF value type (0…12)"},
		{"element type", patch(t, small, "tokenizer.ggml.tokens", 25, le32(99)), GGUFOptions{}, "tokenizer.ggml.tokens", "", true, "array element type 99 is not a GGUF value type"},
		{"nested too deep", withKV(gw.Arr("deep", nest(10))).Bytes(), GGUFOptions{}, "deep", "", true, "arrays nested deeper than 8"},
		{"alignment 0", withKV(gw.U32("general.alignment", 0)).Bytes(), GGUFOptions{}, "general.alignment", "", true, "uint32 0: want a power of two"},
		{"alignment 48", withKV(gw.U32("general.alignment", 48)).Bytes(), GGUFOptions{}, "general.alignment", "", true, "uint32 48: want a power of two"},
		{"alignment string", withKV(gw.Str("general.alignment", "32")).Bytes(), GGUFOptions{}, "general.alignment", "", true, `the string "32": want a power of two`},
		{"no architecture", without(smallGGUF(), "general.architecture").Bytes(), GGUFOptions{}, "general.architecture", "", false, "missing: ropegen needs the architecture"},
		{"architecture type", withKV(gw.U32("general.architecture", 1)).Bytes(), GGUFOptions{}, "general.architecture", "", true, "a uint32: want a string"},
		{"architecture twice", func() []byte {
			f := smallGGUF()
			f.KV = append(f.KV, gw.Str("general.architecture", "llama"))
			return f.Bytes()
		}(), GGUFOptions{}, "general.architecture", "", true, "given twice"},
		{"key twice", func() []byte {
			f := smallGGUF()
			f.KV = append(f.KV, gw.F32("llama.rope.freq_base", 10000))
			return f.Bytes()
		}(), GGUFOptions{}, "llama.rope.freq_base", "", true, "given twice"},
		{"dims", patch(t, small, "token_embd.weight", 17, le32(5)), GGUFOptions{}, "", "token_embd.weight", true, "5 dimensions: ggml allows at most 4"},
		{"dims overflow", withTensor(smallGGUF(), gw.Tensor{Name: "huge", Dims: []uint64{1 << 40, 1 << 40}, Type: gw.TypeF32}).Bytes(), GGUFOptions{}, "", "huge", true, "the element count overflows int64"},
		{"dim above int64", withTensor(smallGGUF(), gw.Tensor{Name: "huge", Dims: []uint64{1 << 63}, Type: gw.TypeF32}).Bytes(), GGUFOptions{}, "", "huge", true, "dimension 0 is 9223372036854775808"},
		{"offset alignment", patch(t, small, "token_embd.weight", 17+4+16+4, le64b(136)), GGUFOptions{}, "", "token_embd.weight", true, "data offset 136 is not a multiple of the alignment 32"},
		{"offset past the end", patch(t, small, "token_embd.weight", 17+4+16+4, le64b(1<<40)), GGUFOptions{}, "", "token_embd.weight", true, "past the end of the file (size "},
		{"offset overflow", patch(t, small, "token_embd.weight", 17+4+16+4, le64b(math.MaxUint64-31)), GGUFOptions{}, "", "token_embd.weight", true, "the end overflows"},
		{"block size", withTensor(smallGGUF(), gw.Tensor{Name: "q", Dims: []uint64{8}, Type: gw.TypeQ8_0, Data: make([]byte, 34)}).Bytes(), GGUFOptions{}, "", "q", true, "Q8_0 rows of 8 elements: want a multiple of the block size 32"},
		{"rope_freqs F16", withTensor(smallGGUF(), gw.Tensor{Name: "rope_freqs.weight", Dims: []uint64{32}, Type: gw.TypeF16, Data: make([]byte, 64)}).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "type F16: want F32"},
		{"rope_freqs length", withTensor(smallGGUF(), gw.F32Tensor("rope_freqs.weight", filledF32(64, 1))).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "64 values: want RotaryDim/2 = 32"},
		{"rope_freqs shape", withTensor(smallGGUF(), gw.Tensor{Name: "rope_freqs.weight", Dims: []uint64{16, 2}, Type: gw.TypeF32, Data: make([]byte, 128)}).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "shape [16 2]: want one dimension of RotaryDim/2 = 32 values"},
		{"rope_freqs zero", withTensor(smallGGUF(), gw.F32Tensor("rope_freqs.weight", filledF32(32, 0))).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "value 0 is 0: want a finite number > 0"},
		{"rope_freqs NaN", withTensor(smallGGUF(), gw.F32Tensor("rope_freqs.weight", filledF32(32, float32(math.NaN())))).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "value 0 is NaN"},
		{"rope_freqs twice", func() []byte {
			f := smallGGUF()
			f.Tensors = append(f.Tensors, gw.F32Tensor("rope_freqs.weight", filledF32(32, 1)))
			return f.Bytes()
		}(), GGUFOptions{}, "", "rope_freqs.weight", true, "given twice"},
		{"unknown arch", withKV(gw.Str("general.architecture", "newarch")).Bytes(), GGUFOptions{}, "general.architecture", "", false,
			`"newarch" is not in ropegen's table of llama.cpp architectures, so the pair layout is unknown: give -layout interleaved if llama.cpp runs it with LLAMA_ROPE_TYPE_NORM`},
		{"unknown rope key", withKV(gw.F32("llama.rope.scaling.alpha", 1000)).Bytes(), GGUFOptions{}, "llama.rope.scaling.alpha", "", true, "a RoPE key ropegen does not know (it reads rope.dimension_count,"},
		{"scaling type", withKV(gw.Str("llama.rope.scaling.type", "dynamic")).Bytes(), GGUFOptions{}, "llama.rope.scaling.type", "", true, `"dynamic": llama.cpp knows "none", "linear", "yarn" and "longrope"`},
		{"scaling type number", withKV(gw.U32("llama.rope.scaling.type", 2)).Bytes(), GGUFOptions{}, "llama.rope.scaling.type", "", true, "uint32 2: want a string"},
		{"ext factor", withKV(gw.Str("llama.rope.scaling.type", "yarn"), gw.F32("llama.rope.scaling.factor", 4), gw.F32("llama.rope.scaling.yarn_ext_factor", 0.5)).Bytes(), GGUFOptions{}, "llama.rope.scaling.yarn_ext_factor", "", true, "0.5: ropegen's YaRN mixes with the full ramp"},
		{"factor negative", withKV(gw.Str("llama.rope.scaling.type", "linear"), gw.F32("llama.rope.scaling.factor", -2)).Bytes(), GGUFOptions{}, "llama.rope.scaling.factor", "", true, "float32 -2: want a finite number > 0 (or 0 for none)"},
		{"log multiplier", withKV(gw.Str("llama.rope.scaling.type", "yarn"), gw.F32("llama.rope.scaling.factor", 4), gw.F32("llama.rope.scaling.yarn_log_multiplier", -1)).Bytes(), GGUFOptions{}, "llama.rope.scaling.yarn_log_multiplier", "", true, "-1: want a finite number > 0"},
		{"yarn without a context", without(withKV(gw.Str("llama.rope.scaling.type", "yarn"), gw.F32("llama.rope.scaling.factor", 4)), "llama.context_length").Bytes(), GGUFOptions{}, "llama.rope.scaling.original_context_length", "", false, "missing, and so is context_length: scaling yarn needs the original context length"},
		{"attn factor on linear", withKV(gw.Str("llama.rope.scaling.type", "linear"), gw.F32("llama.rope.scaling.factor", 4), gw.F32("llama.rope.scaling.attn_factor", 1.25)).Bytes(), GGUFOptions{}, "llama.rope.scaling.attn_factor", "", true, "1.25 with scaling linear: ropegen's linear RoPE has no attention factor"},
		{"sections on llama", withKV(gw.I32s("llama.rope.dimension_sections", 16, 8, 8, 0)).Bytes(), GGUFOptions{}, "llama.rope.dimension_sections", "", true, `given for "llama", whose llama.cpp rope type is NORM`},
		{"sections missing", without(mrope(16, 24, 24, 0), "qwen2vl.rope.dimension_sections").Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", false, "missing: llama.cpp's MROPE needs the pairs per axis"},
		{"sections sum", mrope(16, 24, 20, 0).Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", true, "[16 24 20 0] sum to 60 pairs: want RotaryDim/2 = 64"},
		{"fourth section", mrope(16, 24, 20, 4).Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", true, "the fourth axis has 4 pairs"},
		{"five sections", mrope(16, 24, 24, 0, 0).Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", true, "5 values: want up to 4"},
		{"negative section", mrope(-16, 40, 40, 0).Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", true, "value 0 is -16: want a count of pairs"},
		{"sections of floats", withKV(gw.Str("general.architecture", "qwen2vl"), gw.Arr("qwen2vl.rope.dimension_sections", gw.ArrayValue{Elem: gw.Float32, Items: []any{float32(16)}})).Bytes(), GGUFOptions{}, "qwen2vl.rope.dimension_sections", "", true, "an array of float32: want a number or an array of integers"},
		{"key length 0", withKV(gw.U32("llama.attention.key_length", 0)).Bytes(), GGUFOptions{}, "llama.attention.key_length", "", true, "uint32 0: want a positive integer, at most 4096"},
		{"key length string", withKV(gw.Str("llama.attention.key_length", "128")).Bytes(), GGUFOptions{}, "llama.attention.key_length", "", true, `the string "128": want a positive integer`},
		{"no head count", without(smallGGUF(), "llama.attention.head_count").Bytes(), GGUFOptions{}, "llama.attention.head_count", "", false, "missing, and so is attention.key_length"},
		{"long head count", withKV(gw.I32s("llama.attention.head_count", make([]int32, 20000)...)).Bytes(), GGUFOptions{}, "llama.attention.head_count", "", true, "an array of 20000 values: ropegen reads at most 16384"},
		{"empty head count", withKV(gw.I32s("llama.attention.head_count")).Bytes(), GGUFOptions{}, "llama.attention.head_count", "", true, "an empty array"},
		{"head count divides", withKV(gw.I32s("llama.attention.head_count", 60)).Bytes(), GGUFOptions{}, "llama.embedding_length", "", true, "4096 is not a multiple of attention.head_count 60"},
		{"huge head", withKV(gw.U32("llama.embedding_length", 1<<20), gw.I32s("llama.attention.head_count", 2)).Bytes(), GGUFOptions{}, "llama.embedding_length", "", true, "gives a head dim of 524288 (over attention.head_count): ropegen generates at most 4096"},
		{"rotary above head", withKV(gw.U32("llama.rope.dimension_count", 96)).Bytes(), GGUFOptions{}, "llama.rope.dimension_count", "", true, "96 exceeds the head dim 64 (embedding_length)"},
		{"one longrope set", withTensor(smallGGUF(), gw.F32Tensor("rope_factors_long.weight", filledF32(32, 1))).Bytes(), GGUFOptions{}, "", "rope_factors_short.weight", false, "missing: longrope needs both"},
		{"longrope and rope_freqs", withTensor(smallGGUF(), gw.F32Tensor("rope_factors_long.weight", filledF32(32, 1)), gw.F32Tensor("rope_factors_short.weight", filledF32(32, 1))).Bytes(), GGUFOptions{}, "", "rope_freqs.weight", true, "ropegen reads one set of per-pair factors"},
		{"longrope type without factors", withKV(gw.Str("llama.rope.scaling.type", "longrope")).Bytes(), GGUFOptions{}, "llama.rope.scaling.type", "", true, "the file has no rope_factors_short.weight"},
		{"local on llama", small, GGUFOptions{Local: true}, "", "", false, `-rope-local: llama.cpp gives every layer of "llama" one RoPE`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readBytes(tt.data, tt.opt)
			var ge *GGUFError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v, want a *GGUFError", err)
			}
			if ge.Key != tt.key || ge.Tensor != tt.tensor || (ge.Offset >= 0) != tt.at || !strings.Contains(ge.Msg, tt.msg) {
				t.Errorf("error %q (key %q, tensor %q, offset %d), want key %q, tensor %q, an offset %v, and %q", err, ge.Key, ge.Tensor, ge.Offset, tt.key, tt.tensor, tt.at, tt.msg)
			}
		})
	}
}

// nest is an array nested depth deep.
func nest(depth int) gw.ArrayValue {
	a := gw.ArrayValue{Elem: gw.Uint8, Items: []any{uint8(1)}}
	for range depth - 1 {
		a = gw.ArrayValue{Elem: gw.Array, Items: []any{a}}
	}
	return a
}

// Errors give the key and the offset in a readable order.
func TestGGUFErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    GGUFError
		want string
	}{
		{GGUFError{Path: "m.gguf", Key: "llama.rope.freq_base", Offset: 120, Msg: "bad"}, `m.gguf: key "llama.rope.freq_base" at byte 120: bad`},
		{GGUFError{Tensor: "rope_freqs.weight", Offset: 8, Msg: "bad"}, `tensor "rope_freqs.weight" at byte 8: bad`},
		{GGUFError{Path: "m.gguf", Offset: -1, Msg: "bad"}, `m.gguf: bad`},
		{GGUFError{Offset: 0, Msg: "bad"}, `at byte 0: bad`},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
	_, _, err := LoadGGUF(filepath.Join(t.TempDir(), "missing.gguf"))
	if err == nil || !strings.HasSuffix(err.Error(), "missing.gguf: cannot open the file: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
	_, _, err = LoadGGUF(t.TempDir())
	if err == nil || !strings.HasSuffix(err.Error(), ": not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}

// Hostile counts and lengths are refused before anything of their size is
// allocated.
func TestGGUFBoundedAllocations(t *testing.T) {
	small := smallGGUF().Bytes()
	huge := uint64(1) << 61
	for name, data := range map[string][]byte{
		"metadata count": patch(t, small, "GGUF", 16, le64b(huge)),
		"tensor count":   patch(t, small, "GGUF", 8, le64b(huge)),
		"key length":     patch(t, small, "general.architecture", -8, le64b(huge)),
		"string length":  patch(t, small, "general.name", 16, le64b(huge)),
		"array length":   patch(t, small, "tokenizer.ggml.tokens", 29, le64b(huge)),
		"int array":      patch(t, small, "llama.attention.head_count", 34, le64b(1<<40)),
		"long int array": withKV(gw.I32s("llama.attention.head_count", make([]int32, 100000)...)).Bytes(),
		"name length":    patch(t, small, "token_embd.weight", -8, le64b(huge)),
		"dims":           patch(t, small, "token_embd.weight", 17, le32(1<<31)),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err := readBytes(data, GGUFOptions{})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 256<<10 {
			t.Errorf("%s: %d bytes allocated, want at most 256 KiB", name, a)
		}
	}
}

// Integer keys may have any integer type, float keys float32 or float64,
// per-layer arrays give layer 0; keys and tensors the mapping does not
// read are skipped whatever their type.
func TestGGUFValueTypes(t *testing.T) {
	f := &gw.File{KV: []gw.KV{
		{Key: "qwen3.context_length", Type: gw.Int64, Value: int64(40960)},
		gw.Str("general.architecture", "qwen3"),
		{Key: "qwen3.attention.key_length", Type: gw.Uint16, Value: uint16(128)},
		{Key: "qwen3.rope.freq_base", Type: gw.Float64, Value: 1e6},
		{Key: "qwen3.rope.scaling.type", Type: gw.String, Value: "yarn"},
		{Key: "qwen3.rope.scaling.factor", Type: gw.Float64, Value: 4.0},
		{Key: "qwen3.rope.scaling.original_context_length", Type: gw.Uint8, Value: uint8(255)},
		gw.BoolKV("qwen3.rope.scaling.finetuned", true),
		gw.Arr("qwen3.unrelated", gw.ArrayValue{Elem: gw.Array, Items: []any{gw.ArrayValue{Elem: gw.Bool, Items: []any{true}}}}),
	}, Tensors: []gw.Tensor{{Name: "blk.0.x", Dims: []uint64{64}, Type: 200, Data: make([]byte, 3)}}}
	s, info, err := readBytes(f.Bytes(), GGUFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.HeadDim != 128 || s.Base != 1e6 || s.Scaling.Type != ScalingYaRN || s.Scaling.Factor != 4 || s.Scaling.OrigCtx != 255 || info.ContextLength != 40960 || s.Layout != NeoX {
		t.Errorf("spec %+v, info %+v", s, info)
	}
}

// The architecture table: llama_model_rope_type's answer for each entry,
// written out here from llama.cpp's src/llama-model.cpp.
func TestGGUFArchTable(t *testing.T) {
	want := map[string]string{
		"llama": "norm", "deci": "norm", "granite": "norm", "granitemoe": "norm", "smollm3": "norm", "arcee": "norm",
		"internlm2": "norm", "olmo": "norm", "llama4": "norm", "command-r": "norm", "cohere2": "norm", "glm4": "norm",
		"deepseek": "norm", "deepseek2": "norm",
		"qwen": "neox", "qwen2": "neox", "qwen2moe": "neox", "qwen3": "neox", "qwen3moe": "neox", "phi2": "neox",
		"phi3": "neox", "phimoe": "neox", "gemma": "neox", "gemma2": "neox", "gemma3": "neox", "stablelm": "neox",
		"gptneox": "neox", "starcoder2": "neox", "olmo2": "neox", "olmoe": "neox", "exaone": "neox", "nemotron": "neox",
		"falcon": "neox", "dbrx": "neox", "seed_oss": "neox", "gpt-oss": "neox",
		"qwen2vl": "mrope", "qwen3vl": "imrope", "qwen3vlmoe": "imrope",
		"gpt2": "none", "mpt": "none", "refact": "none", "bloom": "none", "jais": "none", "t5": "none",
		"t5encoder": "none", "mamba": "none", "mamba2": "none", "jamba": "none", "rwkv6": "none", "rwkv7": "none",
	}
	for arch, e := range ggufArchs {
		w, ok := want[arch]
		if !ok {
			t.Errorf("%q is in ggufArchs but has no expectation here", arch)
			continue
		}
		f := &gw.File{KV: []gw.KV{gw.Str("general.architecture", arch), gw.U32(arch+".attention.key_length", 128), gw.U32(arch+".rope.dimension_count", 64)}}
		switch w {
		case "mrope", "imrope":
			f.KV = append(f.KV, gw.I32s(arch+".rope.dimension_sections", 8, 12, 12, 0))
		}
		if e.qk == ggufQKKey {
			f.KV = append(f.KV, gw.F32(arch+".attention.scale", 0.0078125)) // granite: llama.cpp requires it
		}
		if w == "none" {
			// No RoPE: refused, whatever the layout given.
			_, _, err := readBytes(f.Bytes(), GGUFOptions{Layout: NeoX})
			var ge *GGUFError
			if !errors.As(err, &ge) || ge.Key != "general.architecture" || !strings.Contains(ge.Msg, "llama.cpp runs it with no RoPE (LLAMA_ROPE_TYPE_NONE)") {
				t.Errorf("%s: %v, want a refusal: no RoPE", arch, err)
			}
			continue
		}
		s, info, err := readBytes(f.Bytes(), GGUFOptions{})
		if err != nil {
			t.Errorf("%s: %v", arch, err)
			continue
		}
		layout := NeoX
		if w == "norm" {
			layout = Interleaved
		}
		if info.RopeType != w || e.rope != w || s.Layout != layout {
			t.Errorf("%s: rope type %q, layout %q; want %q, %q", arch, info.RopeType, s.Layout, w, layout)
		}
		if e.mla {
			if s.HeadDim != 64 || s.RotaryDim != 0 {
				t.Errorf("%s (MLA): head %d rotary %d, want the rotary part 64", arch, s.HeadDim, s.RotaryDim)
			}
		} else if s.HeadDim != 128 || s.RotaryDim != 64 {
			t.Errorf("%s: head %d rotary %d, want 128, 64", arch, s.HeadDim, s.RotaryDim)
		}
		wantAxes := map[string]string{"mrope": AxesMRoPE, "imrope": AxesInterleaved}[w]
		if s.Axes != wantAxes {
			t.Errorf("%s: axes %q, want %q", arch, s.Axes, wantAxes)
		}
	}
	for arch := range want {
		if _, ok := ggufArchs[arch]; !ok {
			t.Errorf("%q expected in ggufArchs", arch)
		}
	}
}

// An architecture outside the table is read with the layout given.
func TestGGUFUnknownArchWithLayout(t *testing.T) {
	data := withKV(gw.Str("general.architecture", "newarch"), gw.U32("newarch.attention.key_length", 64)).Bytes()
	for _, layout := range []Layout{NeoX, Interleaved} {
		s, info, err := readBytes(data, GGUFOptions{Layout: layout})
		if err != nil || s.Layout != layout || s.HeadDim != 64 || !strings.Contains(strings.Join(info.Notes, "\n"), "read with the layout given (-layout "+string(layout)+")") {
			t.Errorf("layout %s: %+v, %+v, %v", layout, s, info, err)
		}
	}
}

// The YaRN attention factor: given, from the log multiplier (DeepSeek's
// convention and the others'), and times rope.scaling.attn_factor, as
// llama-context.cpp computes it.
func TestGGUFYaRNAttention(t *testing.T) {
	yarn := func(arch string, extra ...gw.KV) *gw.File {
		return &gw.File{KV: append([]gw.KV{
			gw.Str("general.architecture", arch), gw.U32(arch+".attention.key_length", 64), gw.U32(arch+".rope.dimension_count", 64),
			gw.U32(arch+".context_length", 4096), gw.Str(arch+".rope.scaling.type", "yarn"), gw.F32(arch+".rope.scaling.factor", 16),
		}, extra...)}
	}
	g := func(s, m float64) float64 { return 0.1*m*math.Log(s) + 1 }
	for _, tt := range []struct {
		name string
		f    *gw.File
		want float64
	}{
		{"derived", yarn("qwen2"), g(16, 1)},
		{"given", yarn("qwen2", gw.F32("qwen2.rope.scaling.yarn_attn_factor", 1.5)), 1.5},
		{"times attn_factor", yarn("qwen2", gw.F32("qwen2.rope.scaling.attn_factor", 0.5)), g(16, 1) * 0.5},
		{"given times attn_factor", yarn("qwen2", gw.F32("qwen2.rope.scaling.yarn_attn_factor", 1.5), gw.F32("qwen2.rope.scaling.attn_factor", 0.5)), 0.75},
		// Mistral's converter stores mscale_all_dim itself: 1 cancels the
		// magnitude, A = g(s, 1)/g(s, 1).
		{"log multiplier, llama", yarn("llama", gw.F32("llama.rope.scaling.yarn_log_multiplier", 1)), 1},
		{"log multiplier 0.5, llama", yarn("llama", gw.F32("llama.rope.scaling.yarn_log_multiplier", 0.5)), g(16, 1) / g(16, 0.5)},
		// deepseek2 stores 0.1·mscale_all_dim and mscale = mscale_all_dim.
		{"log multiplier, deepseek2", yarn("deepseek2", gw.F32("deepseek2.rope.scaling.yarn_log_multiplier", float32(0.1*0.707))), 1},
		{"log multiplier and attn_factor, deepseek2", yarn("deepseek2", gw.F32("deepseek2.rope.scaling.yarn_log_multiplier", 0.1), gw.F32("deepseek2.rope.scaling.attn_factor", 2)), 2},
	} {
		s, _, err := readBytes(tt.f.Bytes(), GGUFOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		p, err := Resolve(s)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !relClose(p.Attn, tt.want, 1e-15) {
			t.Errorf("%s: A = %.17g, want %.17g", tt.name, p.Attn, tt.want)
		}
	}
}

// The notes say how the file's RoPE was read (-explain prints them).
func TestGGUFNotes(t *testing.T) {
	c := ggufCases[0] // Llama 3.1
	path, _ := c.write(t, t.TempDir())
	_, info, err := LoadGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(info.Notes, "\n")
	for _, w := range []string{
		"pairs (2i, 2i+1): llama.cpp runs \"llama\" with LLAMA_ROPE_TYPE_NORM",
		"per-pair factors: the float32 tensor rope_freqs.weight",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// FuzzReadGGUF: whatever the bytes, ReadGGUF returns a spec or a
// *GGUFError, and never panics; a spec it returns resolves or fails
// validation without panicking either. The seeds (the converted model
// files and the small file, whole, cut and corrupted) run in go test.
func FuzzReadGGUF(f *testing.F) {
	small := smallGGUF().Bytes()
	f.Add(small)
	f.Add(small[:len(small)/2])
	f.Add(withTensor(smallGGUF(), gw.F32Tensor("rope_factors_long.weight", filledF32(32, 1))).Bytes())
	f.Add(mrope(16, 24, 24, 0).Bytes())
	f.Add(withKV(gw.Arr("deep", nest(9))).Bytes())
	for _, c := range ggufCases {
		p, err := readHFParams(c.file)
		if err != nil {
			f.Fatal(err)
		}
		kv, ts := c.convert(c.arch, p)
		f.Add((&gw.File{KV: kv, Tensors: ts}).Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opt := range []GGUFOptions{{}, {Local: true, Layout: NeoX}} {
			s, _, err := readBytes(data, opt)
			if err != nil {
				var ge *GGUFError
				if !errors.As(err, &ge) || err.Error() == "" {
					t.Fatalf("error %v (%T), want a *GGUFError", err, err)
				}
				continue
			}
			if p, err := Resolve(s); err == nil && len(p.Freqs) != p.Half() {
				t.Fatalf("Resolve: %d frequencies for %d pairs", len(p.Freqs), p.Half())
			}
		}
	})
}

// BenchmarkReadGGUF reads a file with a tokenizer of Llama 3's size
// (128256 tokens and 280147 merges, which the reader skips twice) and
// Llama 3.1's rope_freqs.
func BenchmarkReadGGUF(b *testing.B) {
	f := smallGGUF()
	tokens := gw.ArrayValue{Elem: gw.String}
	for i := range 128256 {
		tokens.Items = append(tokens.Items, strings.Repeat("t", i%12+1))
	}
	merges := gw.ArrayValue{Elem: gw.String}
	for i := range 280147 {
		merges.Items = append(merges.Items, strings.Repeat("m", i%9+3))
	}
	f.KV = append(f.KV, gw.Arr("tokenizer.ggml.vocab", tokens), gw.Arr("tokenizer.ggml.merges", merges))
	data := f.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, _, err := readBytes(data, GGUFOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
