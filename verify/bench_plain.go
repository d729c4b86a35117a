package verify

import (
	"math"
	"unsafe"

	"github.com/x448/float16"
)

// baseline is the plain-loop comparison: cos and sin tables indexed
// [pos*half+i] with A folded in.
type baseline[T Elem] struct {
	s            *suite[T]
	cos32, sin32 []float32
	cos64, sin64 []float64
}

func newBaseline[T Elem](s *suite[T], rows int) *baseline[T] {
	bl := &baseline[T]{s: s}
	n := rows * s.hf
	if s.c.kind == kF64 {
		bl.cos64, bl.sin64 = make([]float64, n), make([]float64, n)
	} else {
		bl.cos32, bl.sin32 = make([]float32, n), make([]float32, n)
	}
	for p := range rows {
		for i, th := range s.k.Freqs {
			sin, cos := math.Sincos(float64(p) * th)
			if s.c.kind == kF64 {
				bl.cos64[p*s.hf+i], bl.sin64[p*s.hf+i] = s.attn*cos, s.attn*sin
			} else {
				bl.cos32[p*s.hf+i], bl.sin32[p*s.hf+i] = float32(s.attn*cos), float32(s.attn*sin)
			}
		}
	}
	return bl
}

// apply runs the plain loop matching the dtype on x at pos.
func (bl *baseline[T]) apply(x []T, pos int) {
	s := bl.s
	neox := s.k.Layout == "neox"
	p := unsafe.Pointer(unsafe.SliceData(x))
	switch s.c.kind {
	case kF32:
		plainF32(unsafe.Slice((*float32)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	case kF64:
		plainF64(unsafe.Slice((*float64)(p), len(x)), bl.cos64, bl.sin64, pos, s.hd, s.rd, neox)
	case kF16:
		plainF16(unsafe.Slice((*uint16)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	case kBF16:
		plainBF16(unsafe.Slice((*uint16)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	}
}

func plainF32(x, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		if neox {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[i], v[i+half]
				v[i] = float32(a*c) - float32(b*s)
				v[i+half] = float32(b*c) + float32(a*s)
			}
		} else {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[2*i], v[2*i+1]
				v[2*i] = float32(a*c) - float32(b*s)
				v[2*i+1] = float32(b*c) + float32(a*s)
			}
		}
	}
}

func plainF64(x, cos, sin []float64, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		if neox {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[i], v[i+half]
				v[i] = float64(a*c) - float64(b*s)
				v[i+half] = float64(b*c) + float64(a*s)
			}
		} else {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[2*i], v[2*i+1]
				v[2*i] = float64(a*c) - float64(b*s)
				v[2*i+1] = float64(b*c) + float64(a*s)
			}
		}
	}
}

func plainF16(x []uint16, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		for i := 0; i < half; i++ {
			ia, ib := 2*i, 2*i+1
			if neox {
				ia, ib = i, i+half
			}
			c, s := cos[pos*half+i], sin[pos*half+i]
			a, b := float16.Frombits(v[ia]).Float32(), float16.Frombits(v[ib]).Float32()
			v[ia] = float16.Fromfloat32(float32(a*c) - float32(b*s)).Bits()
			v[ib] = float16.Fromfloat32(float32(b*c) + float32(a*s)).Bits()
		}
	}
}

func plainBF16(x []uint16, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		for i := 0; i < half; i++ {
			ia, ib := 2*i, 2*i+1
			if neox {
				ia, ib = i, i+half
			}
			c, s := cos[pos*half+i], sin[pos*half+i]
			a, b := bf16ToF32(v[ia]), bf16ToF32(v[ib])
			v[ia] = f32ToBF16(float32(a*c) - float32(b*s))
			v[ib] = f32ToBF16(float32(b*c) + float32(a*s))
		}
	}
}
