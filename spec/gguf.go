package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// This file reads the GGUF container (ggml's docs/gguf.md; gguf-py's
// constants.py and reader.py, llama.cpp's ggml/src/gguf.cpp): the header,
// every metadata key/value, every tensor info, and the data of the few
// tensors that carry RoPE factors. gguf_spec.go turns what it read into a
// Spec. Nothing here trusts a count or a length from the file: each is
// checked against the bytes the file has left before it is used, so a
// truncated or malformed file gets a *GGUFError and no allocation is larger
// than a few tensors of RotaryDim/2 float32 and one 64 KiB read window.

// GGUFError is a problem with a GGUF file: where it was found and what is
// wrong.
type GGUFError struct {
	Path   string // the file as given to LoadGGUF; "" from ReadGGUF
	Key    string // the metadata key concerned, e.g. "llama.rope.freq_base"; "" for none
	Tensor string // the tensor concerned, e.g. "rope_freqs.weight"; "" for none
	Offset int64  // the byte offset in the file the problem is at; -1 for none
	Msg    string
}

func (e *GGUFError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	var where []string
	if e.Key != "" {
		where = append(where, "key "+strconv.Quote(e.Key))
	}
	if e.Tensor != "" {
		where = append(where, "tensor "+strconv.Quote(e.Tensor))
	}
	if e.Offset >= 0 {
		where = append(where, fmt.Sprintf("at byte %d", e.Offset))
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, " "))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// GGUF value types (docs/gguf.md, gguf_metadata_value_type).
const (
	ggufU8 uint32 = iota
	ggufI8
	ggufU16
	ggufI16
	ggufU32
	ggufI32
	ggufF32
	ggufBool
	ggufString
	ggufArray
	ggufU64
	ggufI64
	ggufF64
)

var ggufTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// ggufValueWhat describes a value of each type, for messages.
var ggufValueWhat = func() (w [len(ggufTypeNames)]string) {
	for i, n := range ggufTypeNames {
		w[i] = "a " + n + " value"
	}
	return w
}()

func ggufTypeName(t uint32) string {
	if t < uint32(len(ggufTypeNames)) {
		return ggufTypeNames[t]
	}
	return fmt.Sprintf("type %d (unknown)", t)
}

// ggufScalarSize is the size in bytes of a fixed-size value type; 0 for
// strings, arrays and unknown types.
func ggufScalarSize(t uint32) int64 {
	switch t {
	case ggufU8, ggufI8, ggufBool:
		return 1
	case ggufU16, ggufI16:
		return 2
	case ggufU32, ggufI32, ggufF32:
		return 4
	case ggufU64, ggufI64, ggufF64:
		return 8
	}
	return 0
}

// Limits of the format and of this reader.
const (
	ggufMagic          = "GGUF"
	ggufMaxKey         = 65535   // docs/gguf.md: keys are at most 2^16-1 bytes
	ggufMaxDims        = 4       // GGML_MAX_DIMS
	ggufDefaultAlign   = 32      // GGUF_DEFAULT_ALIGNMENT
	ggufMaxArrayDepth  = 8       // arrays of arrays are skipped to this depth
	ggufMaxShortString = 256     // the string values read (architecture, scaling type)
	ggufMaxIntArray    = 1 << 14 // the integer arrays read (per-layer head counts, sections)
	ggufWindow         = 64 << 10
	// The fewest bytes a metadata entry (key length, type, a uint8) and a
	// tensor info (name length, dims count, type, offset) can take: the
	// counts in the header are checked against them.
	ggufMinKV     = 8 + 4 + 1
	ggufMinTensor = 8 + 4 + 4 + 8
)

// ggmlTypes are the element types of ggml tensors whose storage size this
// reader knows: block size (elements) and bytes per block, as ggml's
// type_traits and gguf-py's GGML_QUANT_SIZES give them. A tensor of another
// type has its offset checked but not its extent.
var ggmlTypes = map[uint32]struct {
	name          string
	block, nbytes uint64
}{
	0: {"F32", 1, 4}, 1: {"F16", 1, 2},
	2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20}, 6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24}, 8: {"Q8_0", 32, 34},
	10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 12: {"Q4_K", 256, 144}, 13: {"Q5_K", 256, 176}, 14: {"Q6_K", 256, 210},
	16: {"IQ2_XXS", 256, 66}, 17: {"IQ2_XS", 256, 74}, 18: {"IQ3_XXS", 256, 98}, 19: {"IQ1_S", 256, 50},
	20: {"IQ4_NL", 32, 18}, 21: {"IQ3_S", 256, 110}, 22: {"IQ2_S", 256, 82}, 23: {"IQ4_XS", 256, 136},
	24: {"I8", 1, 1}, 25: {"I16", 1, 2}, 26: {"I32", 1, 4}, 27: {"I64", 1, 8}, 28: {"F64", 1, 8},
	29: {"IQ1_M", 256, 56}, 30: {"BF16", 1, 2}, 34: {"TQ1_0", 256, 54}, 35: {"TQ2_0", 256, 66}, 39: {"MXFP4", 32, 17},
}

const ggmlF32 = 0

func ggmlTypeName(t uint32) string {
	if g, ok := ggmlTypes[t]; ok {
		return g.name
	}
	return fmt.Sprintf("ggml type %d", t)
}

// ggufReader reads a GGUF file through a window of ggufWindow bytes.
type ggufReader struct {
	r     io.ReaderAt
	size  int64
	path  string
	off   int64 // the next byte to read
	win   []byte
	winAt int64 // the file offset of win[0]
}

func (g *ggufReader) errf(off int64, key, format string, args ...any) *GGUFError {
	return &GGUFError{Path: g.path, Key: key, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (g *ggufReader) tensorErr(off int64, name, format string, args ...any) *GGUFError {
	return &GGUFError{Path: g.path, Tensor: name, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// left is the number of bytes after g.off.
func (g *ggufReader) left() int64 { return g.size - g.off }

// need checks that n more bytes follow g.off.
func (g *ggufReader) need(n uint64, key, what string) error {
	if n > uint64(g.left()) {
		return g.errf(g.off, key, "the file ends (size %d) inside %s: %d bytes needed, %d left", g.size, what, n, g.left())
	}
	return nil
}

// bytes returns the next n ≤ ggufWindow bytes and advances past them. The
// slice is valid until the next call.
func (g *ggufReader) bytes(n int, key, what string) ([]byte, error) {
	if err := g.need(uint64(n), key, what); err != nil {
		return nil, err
	}
	if g.off < g.winAt || g.off+int64(n) > g.winAt+int64(len(g.win)) {
		want := min(int64(ggufWindow), g.left())
		if cap(g.win) < ggufWindow {
			g.win = make([]byte, 0, ggufWindow)
		}
		g.win = g.win[:want]
		got, err := g.r.ReadAt(g.win, g.off)
		if int64(got) < want {
			g.win = g.win[:0]
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, g.errf(g.off, key, "reading %s: %v", what, err)
		}
		g.winAt = g.off
	}
	b := g.win[g.off-g.winAt : g.off-g.winAt+int64(n)]
	g.off += int64(n)
	return b, nil
}

func (g *ggufReader) u32(key, what string) (uint32, error) {
	b, err := g.bytes(4, key, what)
	if err != nil {
		return 0, err
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, nil
}

func (g *ggufReader) u64(key, what string) (uint64, error) {
	b, err := g.bytes(8, key, what)
	if err != nil {
		return 0, err
	}
	return le64(b), nil
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// skip advances past n bytes, which must be in the file.
func (g *ggufReader) skip(n uint64, key, what string) error {
	if err := g.need(n, key, what); err != nil {
		return err
	}
	g.off += int64(n)
	return nil
}

// str reads a gguf_string (uint64 length, bytes) of at most max bytes.
func (g *ggufReader) str(max int, key, what string) (string, error) {
	at := g.off
	n, err := g.u64(key, "the length of "+what)
	if err != nil {
		return "", err
	}
	if n > uint64(max) {
		if err := g.need(n, key, what); err != nil {
			return "", err
		}
		return "", g.errf(at, key, "%s is %d bytes long: want at most %d", what, n, max)
	}
	b, err := g.bytes(int(n), key, what)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// skipStr skips a gguf_string value of any length.
func (g *ggufReader) skipStr(key string) error {
	n, err := g.u64(key, "the length of a string value")
	if err != nil {
		return err
	}
	return g.skip(n, key, "a string value")
}

// ggufHeader is a GGUF file's fixed header.
type ggufHeader struct {
	version          uint32
	tensors, entries uint64
	kvStart          int64 // the offset of the first metadata entry
}

func (g *ggufReader) header() (ggufHeader, error) {
	var h ggufHeader
	magic, err := g.bytes(4, "", "the magic number")
	if err != nil {
		return h, err
	}
	if string(magic) != ggufMagic {
		return h, g.errf(0, "", "not a GGUF file: it begins with %q, want %q", magic, ggufMagic)
	}
	if h.version, err = g.u32("", "the version"); err != nil {
		return h, err
	}
	switch {
	case h.version&0xffff == 0 && h.version != 0:
		// gguf-py writes the magic little-endian and the rest in the
		// file's byte order: a big-endian file's version reads as
		// version<<24 here.
		return h, g.errf(4, "", "a big-endian GGUF file (version bytes % x): ropegen reads little-endian files only", magic4(h.version))
	case h.version == 1:
		return h, g.errf(4, "", "GGUF version 1 (32-bit counts and lengths) is not supported: ropegen reads versions 2 and 3; convert the model again")
	case h.version != 2 && h.version != 3:
		return h, g.errf(4, "", "unknown GGUF version %d: ropegen reads versions 2 and 3", h.version)
	}
	if h.tensors, err = g.u64("", "the tensor count"); err != nil {
		return h, err
	}
	if h.entries, err = g.u64("", "the metadata count"); err != nil {
		return h, err
	}
	if h.entries > uint64(g.left())/ggufMinKV {
		return h, g.errf(16, "", "%d metadata entries cannot fit in the %d bytes after the header (each takes at least %d)", h.entries, g.left(), ggufMinKV)
	}
	if h.tensors > uint64(g.left())/ggufMinTensor {
		return h, g.errf(8, "", "%d tensors cannot fit in the %d bytes after the header (each tensor info takes at least %d)", h.tensors, g.left(), ggufMinTensor)
	}
	h.kvStart = g.off
	return h, nil
}

func magic4(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// ggufValue is a metadata value that the mapping reads: a number, a short
// string or an array of integers.
type ggufValue struct {
	key  string
	off  int64  // where the value starts, for errors
	typ  uint32 // the value type
	elem uint32 // the element type of an array
	num  float64
	int  int64 // integer values (exact)
	big  bool  // an unsigned integer above math.MaxInt64
	str  string
	ints []int64
}

// entry reads the key and value type of the next metadata entry.
func (g *ggufReader) entry(i uint64) (key string, typ uint32, err error) {
	what := fmt.Sprintf("the key of metadata entry %d", i)
	if key, err = g.str(ggufMaxKey, "", what); err != nil {
		return "", 0, err
	}
	typ, err = g.u32(key, "its value type")
	return key, typ, err
}

// skipValue skips a value of type typ, nested depth arrays deep.
func (g *ggufReader) skipValue(typ uint32, key string, depth int) error {
	if n := ggufScalarSize(typ); n > 0 {
		return g.skip(uint64(n), key, ggufValueWhat[typ])
	}
	switch typ {
	case ggufString:
		return g.skipStr(key)
	case ggufArray:
		at := g.off
		elem, err := g.u32(key, "its array element type")
		if err != nil {
			return err
		}
		n, err := g.u64(key, "its array length")
		if err != nil {
			return err
		}
		return g.skipElems(elem, n, key, at, depth)
	}
	return g.errf(g.off-4, key, "value type %d is not a GGUF value type (0…12)", typ)
}

// skipElems skips the n elements of type elem of the array at offset at,
// whose element type and length have been read.
func (g *ggufReader) skipElems(elem uint32, n uint64, key string, at int64, depth int) error {
	if sz := ggufScalarSize(elem); sz > 0 {
		hi, lo := bits.Mul64(n, uint64(sz))
		if hi != 0 || lo > uint64(g.left()) {
			return g.errf(at, key, "an array of %d %s values cannot fit in the %d bytes left", n, ggufTypeName(elem), g.left())
		}
		return g.skip(lo, key, "an array")
	}
	var min uint64
	switch elem {
	case ggufString:
		min = 8
	case ggufArray:
		if depth >= ggufMaxArrayDepth {
			return g.errf(at, key, "arrays nested deeper than %d", ggufMaxArrayDepth)
		}
		min = 12
	default:
		return g.errf(at, key, "array element type %d is not a GGUF value type (0…12)", elem)
	}
	if n > uint64(g.left())/min {
		return g.errf(at, key, "an array of %d %s values cannot fit in the %d bytes left (each takes at least %d)", n, ggufTypeName(elem), g.left(), min)
	}
	for range n {
		if err := g.skipValue(elem, key, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// value reads a value of type typ for the mapping: numbers, bools, short
// strings and arrays of integers; anything else is an error naming the key.
func (g *ggufReader) value(key string, typ uint32) (ggufValue, error) {
	v := ggufValue{key: key, off: g.off, typ: typ}
	switch typ {
	case ggufString:
		s, err := g.str(ggufMaxShortString, key, "its string value")
		v.str = s
		return v, err
	case ggufArray:
		elem, err := g.u32(key, "its array element type")
		if err != nil {
			return v, err
		}
		v.elem = elem
		n, err := g.u64(key, "its array length")
		if err != nil {
			return v, err
		}
		sz := ggufScalarSize(elem)
		if sz == 0 || elem == ggufF32 || elem == ggufF64 || elem == ggufBool {
			if err := g.skipElems(elem, n, key, v.off, 1); err != nil {
				return v, err
			}
			return v, g.errf(v.off, key, "an array of %s: want a number or an array of integers", ggufTypeName(elem))
		}
		if n > ggufMaxIntArray {
			if err := g.skipElems(elem, n, key, v.off, 1); err != nil {
				return v, err
			}
			return v, g.errf(v.off, key, "an array of %d values: ropegen reads at most %d", n, ggufMaxIntArray)
		}
		if err := g.need(n*uint64(sz), key, fmt.Sprintf("its array of %d %s values", n, ggufTypeName(elem))); err != nil {
			return v, err
		}
		v.ints = make([]int64, n)
		for i := range v.ints {
			x, big, err := g.scalar(elem, key)
			if err != nil {
				return v, err
			}
			if big {
				return v, g.errf(v.off, key, "element %d is above %d", i, int64(math.MaxInt64))
			}
			v.ints[i] = x.int
		}
		return v, nil
	}
	if ggufScalarSize(typ) == 0 {
		return v, g.errf(g.off-4, key, "value type %d is not a GGUF value type (0…12)", typ)
	}
	x, big, err := g.scalar(typ, key)
	x.key, x.off, x.typ, x.big = key, v.off, typ, big
	return x, err
}

// scalar reads a fixed-size value: v.num holds its value as a float64
// (exactly, for every float32 and for integers up to 2^53), v.int its
// value as an integer type; big reports a uint64 above math.MaxInt64.
func (g *ggufReader) scalar(typ uint32, key string) (v ggufValue, big bool, err error) {
	b, err := g.bytes(int(ggufScalarSize(typ)), key, ggufValueWhat[typ])
	if err != nil {
		return v, false, err
	}
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch typ {
	case ggufU8, ggufU16, ggufU32, ggufBool:
		v.int = int64(u)
	case ggufU64:
		v.int, big = int64(u), u > math.MaxInt64
	case ggufI8:
		v.int = int64(int8(u))
	case ggufI16:
		v.int = int64(int16(u))
	case ggufI32:
		v.int = int64(int32(u))
	case ggufI64:
		v.int = int64(u)
	case ggufF32:
		v.num = float64(math.Float32frombits(uint32(u)))
		return v, false, nil
	case ggufF64:
		v.num = math.Float64frombits(u)
		return v, false, nil
	}
	v.num = float64(v.int)
	if big {
		v.num = float64(u)
	}
	return v, big, nil
}

// isInt reports whether v is an integer scalar.
func (v ggufValue) isInt() bool {
	switch v.typ {
	case ggufU8, ggufI8, ggufU16, ggufI16, ggufU32, ggufI32, ggufU64, ggufI64:
		return true
	}
	return false
}

// ggufTensor is the tensor info of a tensor whose data the mapping reads.
type ggufTensor struct {
	name   string
	infoAt int64 // where its info starts
	dims   []uint64
	typ    uint32
	offset uint64 // relative to the start of the tensor data
}

// ggufFile is what the mapping needs of a GGUF file.
type ggufFile struct {
	version   uint32
	arch      string
	kv        map[string]ggufValue  // the metadata under "<arch>." that the mapping reads, by the key without the prefix
	unknown   []ggufValue           // other keys under "<arch>.rope.", which the mapping refuses
	tensors   map[string]ggufTensor // the tensors the mapping may read
	dataStart int64
}

// ggufTensorsRead are the tensors whose data the mapping may read: ggml's
// freq_factors for every layer (llama3 via convert_hf_to_gguf.py), and
// longrope's two factor sets (Phi-3).
var ggufTensorsRead = []string{"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"}

// parse reads everything but tensor data. keep reports, for a key under
// "<arch>.", whether the mapping reads it.
func (g *ggufReader) parse(keep func(suffix string) bool) (*ggufFile, error) {
	h, err := g.header()
	if err != nil {
		return nil, err
	}
	f := &ggufFile{version: h.version, kv: map[string]ggufValue{}, tensors: map[string]ggufTensor{}}

	// Pass 1: the architecture and the alignment.
	alignment := uint64(ggufDefaultAlign)
	archSeen, alignSeen := false, false
	for i := range h.entries {
		at := g.off
		key, typ, err := g.entry(i)
		if err != nil {
			return nil, err
		}
		switch key {
		case "general.architecture":
			if archSeen {
				return nil, g.errf(at, key, "given twice")
			}
			archSeen = true
			if typ != ggufString {
				return nil, g.errf(at, key, "a %s: want a string", ggufTypeName(typ))
			}
			if f.arch, err = g.str(ggufMaxShortString, key, "its string value"); err != nil {
				return nil, err
			}
			continue
		case "general.alignment":
			if alignSeen {
				return nil, g.errf(at, key, "given twice")
			}
			alignSeen = true
			v, err := g.value(key, typ)
			if err != nil {
				return nil, err
			}
			if !v.isInt() || v.big || v.int <= 0 || v.int > 1<<30 || v.int&(v.int-1) != 0 {
				return nil, g.errf(v.off, key, "%s: want a power of two, 1…2^30 (gguf.cpp reads a uint32)", v.show())
			}
			alignment = uint64(v.int)
			continue
		}
		if err := g.skipValue(typ, key, 0); err != nil {
			return nil, err
		}
	}
	kvEnd := g.off
	if !archSeen {
		return nil, g.errf(-1, "general.architecture", "missing: ropegen needs the architecture to pick the pair layout and the keys to read")
	}

	// Pass 2: the keys under "<arch>.".
	g.off = h.kvStart
	prefix := f.arch + "."
	for i := range h.entries {
		at := g.off
		key, typ, err := g.entry(i)
		if err != nil {
			return nil, err
		}
		suffix, ok := strings.CutPrefix(key, prefix)
		if !ok || !keep(suffix) {
			if ok && strings.HasPrefix(suffix, "rope.") {
				f.unknown = append(f.unknown, ggufValue{key: key, off: at})
			}
			if err := g.skipValue(typ, key, 0); err != nil {
				return nil, err
			}
			continue
		}
		if _, dup := f.kv[suffix]; dup {
			return nil, g.errf(at, key, "given twice")
		}
		v, err := g.value(key, typ)
		if err != nil {
			return nil, err
		}
		f.kv[suffix] = v
	}
	if g.off != kvEnd {
		return nil, g.errf(g.off, "", "internal error: the metadata read twice ends at bytes %d and %d", kvEnd, g.off)
	}

	// The tensor infos.
	type extent struct {
		name string
		at   int64
		end  uint64 // offset + bytes, relative to the data start
	}
	var last extent
	for i := range h.tensors {
		at := g.off
		name, err := g.str(ggufMaxKey, "", fmt.Sprintf("the name of tensor %d", i))
		if err != nil {
			return nil, err
		}
		terr := func(format string, args ...any) error { return g.tensorErr(at, name, format, args...) }
		nd, err := g.u32("", fmt.Sprintf("the dimension count of tensor %q", name))
		if err != nil {
			return nil, err
		}
		if nd > ggufMaxDims {
			return nil, terr("%d dimensions: ggml allows at most %d", nd, ggufMaxDims)
		}
		dims := make([]uint64, nd)
		elems := uint64(1)
		overflow := false
		for d := range dims {
			if dims[d], err = g.u64("", fmt.Sprintf("dimension %d of tensor %q", d, name)); err != nil {
				return nil, err
			}
			if dims[d] > math.MaxInt64 {
				return nil, terr("dimension %d is %d: want at most %d", d, dims[d], int64(math.MaxInt64))
			}
			hi, lo := bits.Mul64(elems, dims[d])
			overflow = overflow || hi != 0 || lo > math.MaxInt64
			elems = lo
		}
		if overflow {
			return nil, terr("dimensions %v: the element count overflows int64", dims)
		}
		typ, err := g.u32("", fmt.Sprintf("the type of tensor %q", name))
		if err != nil {
			return nil, err
		}
		off, err := g.u64("", fmt.Sprintf("the data offset of tensor %q", name))
		if err != nil {
			return nil, err
		}
		if off%alignment != 0 {
			return nil, terr("data offset %d is not a multiple of the alignment %d", off, alignment)
		}
		end := off
		if gt, ok := ggmlTypes[typ]; ok {
			ne0 := uint64(1)
			if nd > 0 {
				ne0 = dims[0]
			}
			if ne0%gt.block != 0 {
				return nil, terr("%s rows of %d elements: want a multiple of the block size %d", gt.name, ne0, gt.block)
			}
			hi, n := bits.Mul64(elems/gt.block, gt.nbytes)
			sum, carry := bits.Add64(off, n, 0)
			if hi != 0 || carry != 0 {
				return nil, terr("%d %s elements at offset %d: the end overflows", elems, gt.name, off)
			}
			end = sum
		}
		if end >= last.end {
			last = extent{name, at, end}
		}
		for _, w := range ggufTensorsRead {
			if name != w {
				continue
			}
			if _, dup := f.tensors[name]; dup {
				return nil, terr("given twice")
			}
			f.tensors[name] = ggufTensor{name: name, infoAt: at, dims: dims, typ: typ, offset: off}
		}
	}
	// The data starts at the next multiple of the alignment.
	pad := (alignment - uint64(g.off)%alignment) % alignment
	f.dataStart = g.off + int64(pad)
	if h.tensors > 0 {
		if f.dataStart > g.size {
			return nil, g.errf(g.off, "", "the file ends (size %d) before the tensor data, which starts at byte %d (alignment %d)", g.size, f.dataStart, alignment)
		}
		if last.end > uint64(g.size-f.dataStart) {
			return nil, g.tensorErr(last.at, last.name, "its data ends at byte %d, past the end of the file (size %d)", uint64(f.dataStart)+last.end, g.size)
		}
	}
	return f, nil
}

// show formats a scalar value for a message.
func (v ggufValue) show() string {
	switch {
	case v.typ == ggufString:
		return fmt.Sprintf("the string %q", v.str)
	case v.typ == ggufArray:
		return fmt.Sprintf("an array of %s", ggufTypeName(v.elem))
	case v.typ == ggufF32 || v.typ == ggufF64:
		return fmt.Sprintf("%s %s", ggufTypeName(v.typ), shortFloat(v.num))
	case v.big:
		return fmt.Sprintf("%s %s", ggufTypeName(v.typ), strconv.FormatFloat(v.num, 'f', -1, 64))
	}
	return fmt.Sprintf("%s %d", ggufTypeName(v.typ), v.int)
}

// float32s reads the data of tensor t, n float32 values, which the caller
// has checked to be a small count.
func (g *ggufReader) float32s(f *ggufFile, t ggufTensor, n int) ([]float64, error) {
	if t.typ != ggmlF32 {
		return nil, g.tensorErr(t.infoAt, t.name, "type %s: want F32 (convert_hf_to_gguf.py writes these factors as float32)", ggmlTypeName(t.typ))
	}
	g.off = f.dataStart + int64(t.offset) // parse checked the extent
	out := make([]float64, n)
	b, err := g.bytes(4*n, "", "the data of tensor "+strconv.Quote(t.name))
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = float64(math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
	}
	return out, nil
}

// LoadGGUF is LoadGGUFWith with the zero GGUFOptions.
func LoadGGUF(path string) (Spec, GGUFInfo, error) {
	return LoadGGUFWith(path, GGUFOptions{})
}

// LoadGGUFWith reads the RoPE of the GGUF file at path: see ReadGGUF.
// Errors are *GGUFError naming the path.
func LoadGGUFWith(path string, opt GGUFOptions) (Spec, GGUFInfo, error) {
	fail := func(msg string) (Spec, GGUFInfo, error) {
		return Spec{}, GGUFInfo{}, &GGUFError{Path: path, Offset: -1, Msg: msg}
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail("cannot open the file: " + err.Error())
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail("cannot stat the file: " + err.Error())
	}
	if !st.Mode().IsRegular() {
		return fail("not a regular file")
	}
	return readGGUF(f, st.Size(), path, opt)
}

// ReadGGUF reads the RoPE of a GGUF file of size bytes through r, as
// LoadGGUFWith does for a path: the header, the metadata, the tensor infos
// and the data of the tensors rope_freqs.weight, rope_factors_long.weight
// and rope_factors_short.weight when the file has them; never the weights.
// What it reads into the Spec, and from which keys, is described at
// GGUFOptions. Errors are *GGUFError naming the key or tensor and the byte
// offset.
func ReadGGUF(r io.ReaderAt, size int64, opt GGUFOptions) (Spec, GGUFInfo, error) {
	return readGGUF(r, size, "", opt)
}

func readGGUF(r io.ReaderAt, size int64, path string, opt GGUFOptions) (Spec, GGUFInfo, error) {
	if size < 0 {
		return Spec{}, GGUFInfo{}, &GGUFError{Path: path, Offset: -1, Msg: fmt.Sprintf("size %d: want ≥ 0", size)}
	}
	g := &ggufReader{r: r, size: size, path: path}
	f, err := g.parse(ggufKeyRead)
	if err != nil {
		return Spec{}, GGUFInfo{}, err
	}
	return ggufSpec(g, f, opt)
}
