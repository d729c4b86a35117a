// Package ggufwrite writes small GGUF files for tests: a header, metadata
// key/values of every GGUF value type and tensors with their data, laid out
// as ggml's docs/gguf.md describes and gguf-py's GGUFWriter writes them
// (little-endian, strings as a uint64 length and bytes, each tensor's data
// at an offset that is a multiple of the alignment, padded in between).
//
// It is written apart from package spec's reader, from the format's
// description, so that a test of the reader does not check it against
// itself. Only tests import it.
package ggufwrite

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Value types (docs/gguf.md, gguf_metadata_value_type).
const (
	Uint8 uint32 = iota
	Int8
	Uint16
	Int16
	Uint32
	Int32
	Float32
	Bool
	String
	Array
	Uint64
	Int64
	Float64
)

// ggml tensor types used by the tests.
const (
	TypeF32  uint32 = 0
	TypeF16  uint32 = 1
	TypeQ8_0 uint32 = 8
)

// KV is one metadata entry. Value is a Go value of the type's kind:
// uint8…int64, float32, float64, bool, string, or for Array an ArrayValue.
type KV struct {
	Key   string
	Type  uint32
	Value any
}

// ArrayValue is an array's element type and elements (Go values as for KV,
// or ArrayValue for nested arrays).
type ArrayValue struct {
	Elem  uint32
	Items []any
}

// Tensor is a tensor info and its data.
type Tensor struct {
	Name string
	Dims []uint64 // ne[0] first
	Type uint32
	Data []byte
}

// File is a GGUF file to write.
type File struct {
	Version   uint32 // 0 means 3
	Alignment uint64 // 0 means 32; written as general.alignment only when set
	KV        []KV
	Tensors   []Tensor
	// EndPadding pads the last tensor's data to the alignment too, as
	// gguf-py does.
	EndPadding bool
}

// Helpers for common entries.
func U32(key string, v uint32) KV     { return KV{key, Uint32, v} }
func U64(key string, v uint64) KV     { return KV{key, Uint64, v} }
func F32(key string, v float32) KV    { return KV{key, Float32, v} }
func Str(key, v string) KV            { return KV{key, String, v} }
func BoolKV(key string, v bool) KV    { return KV{key, Bool, v} }
func Arr(key string, a ArrayValue) KV { return KV{key, Array, a} }

// I32s is an array of int32.
func I32s(key string, v ...int32) KV {
	a := ArrayValue{Elem: Int32}
	for _, x := range v {
		a.Items = append(a.Items, x)
	}
	return KV{key, Array, a}
}

// Strs is an array of strings.
func Strs(key string, v ...string) KV {
	a := ArrayValue{Elem: String}
	for _, x := range v {
		a.Items = append(a.Items, x)
	}
	return KV{key, Array, a}
}

// F32Tensor is a one-dimensional F32 tensor of vals.
func F32Tensor(name string, vals []float32) Tensor {
	var b bytes.Buffer
	for _, v := range vals {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(v))
	}
	return Tensor{Name: name, Dims: []uint64{uint64(len(vals))}, Type: TypeF32, Data: b.Bytes()}
}

func writeString(b *bytes.Buffer, s string) {
	binary.Write(b, binary.LittleEndian, uint64(len(s)))
	b.WriteString(s)
}

func writeValue(b *bytes.Buffer, typ uint32, v any) error {
	le := binary.LittleEndian
	switch typ {
	case Uint8:
		b.WriteByte(v.(uint8))
	case Int8:
		b.WriteByte(byte(v.(int8)))
	case Uint16:
		binary.Write(b, le, v.(uint16))
	case Int16:
		binary.Write(b, le, v.(int16))
	case Uint32:
		binary.Write(b, le, v.(uint32))
	case Int32:
		binary.Write(b, le, v.(int32))
	case Float32:
		binary.Write(b, le, math.Float32bits(v.(float32)))
	case Bool:
		if v.(bool) {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	case String:
		writeString(b, v.(string))
	case Array:
		a := v.(ArrayValue)
		binary.Write(b, le, a.Elem)
		binary.Write(b, le, uint64(len(a.Items)))
		for _, it := range a.Items {
			if err := writeValue(b, a.Elem, it); err != nil {
				return err
			}
		}
	case Uint64:
		binary.Write(b, le, v.(uint64))
	case Int64:
		binary.Write(b, le, v.(int64))
	case Float64:
		binary.Write(b, le, math.Float64bits(v.(float64)))
	default:
		return fmt.Errorf("ggufwrite: value type %d", typ)
	}
	return nil
}

func pad(b *bytes.Buffer, align uint64) {
	for uint64(b.Len())%align != 0 {
		b.WriteByte(0)
	}
}

// Bytes returns the file. It panics on a value of the wrong Go type: the
// tests build their files by hand.
func (f *File) Bytes() []byte {
	version := f.Version
	if version == 0 {
		version = 3
	}
	align := f.Alignment
	kv := f.KV
	if align == 0 {
		align = 32
	} else {
		kv = append([]KV{U32("general.alignment", uint32(align))}, kv...)
	}
	var b bytes.Buffer
	b.WriteString("GGUF")
	le := binary.LittleEndian
	binary.Write(&b, le, version)
	binary.Write(&b, le, uint64(len(f.Tensors)))
	binary.Write(&b, le, uint64(len(kv)))
	for _, e := range kv {
		writeString(&b, e.Key)
		binary.Write(&b, le, e.Type)
		if err := writeValue(&b, e.Type, e.Value); err != nil {
			panic(err)
		}
	}
	// Tensor infos: offsets relative to the start of the data, each a
	// multiple of the alignment.
	var off uint64
	offsets := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		offsets[i] = off
		off += uint64(len(t.Data))
		off = (off + align - 1) / align * align
	}
	for i, t := range f.Tensors {
		writeString(&b, t.Name)
		binary.Write(&b, le, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			binary.Write(&b, le, d)
		}
		binary.Write(&b, le, t.Type)
		binary.Write(&b, le, offsets[i])
	}
	pad(&b, align)
	start := uint64(b.Len())
	for i, t := range f.Tensors {
		for uint64(b.Len()) < start+offsets[i] {
			b.WriteByte(0)
		}
		b.Write(t.Data)
	}
	if f.EndPadding {
		pad(&b, align)
	}
	return b.Bytes()
}
