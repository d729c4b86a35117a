package rt

import (
	"testing"

	"github.com/ropegen/ropegen/verify"
)

// cacheOf describes r's forms of the cache type dtype to verify: mk makes a
// Cache of that type from a buffer, its view and (e4m3) its scale.
func cacheOf[C verify.CacheElem](r *Rotary, dtype string, mk func(buf []C, s Strides, scale float32) Cache) verify.CacheForms {
	step := func(p verify.PrepStep[C]) Step {
		s := Step{
			Q: p.Q, QS: Strides(p.QS), QW: p.QW,
			K: p.K, KS: Strides(p.KS), KW: p.KW,
			KCache: mk(p.KCache, Strides(p.KC), p.KScale),
			Slots:  p.Slots,
		}
		if p.VCache != nil {
			s.V, s.VS, s.VCache = p.V, Strides(p.VS), mk(p.VCache, Strides(p.VC), p.VScale)
		}
		return s
	}
	return &verify.Cache[C]{
		DType:     dtype,
		CacheHead: r.CacheHead(dtype),
		ApplyStore: func(t verify.Table[float32], dst []C, scale float32, ds verify.Strides, slots []int64, src []float32, ss verify.Strides, pos []int32) {
			tableOf(t).ApplyStore(mk(dst, Strides(ds), scale), slots, src, Strides(ss), textPos(t, pos))
		},
		Store: func(dst []C, scale float32, ds verify.Strides, slots []int64, src []float32, ss verify.Strides) {
			r.Store(mk(dst, Strides(ds), scale), slots, src, Strides(ss))
		},
		Load: func(dst []float32, scale float32, ds verify.Strides, src []C, ss verify.Strides, slots []int64) {
			r.Load(dst, Strides(ds), mk(src, Strides(ss), scale), slots)
		},
		Shift: func(t verify.Table[float32], c []C, scale float32, cs verify.Strides, slots []int64, delta []int32) {
			tableOf(t).Shift(mk(c, Strides(cs), scale), slots, delta)
		},
		BatchApplyStore: func(b verify.Batch[float32], dst []C, scale float32, ds verify.Strides, slots []int64, src []float32, ss verify.Strides) {
			batchOf(b).ApplyStore(mk(dst, Strides(ds), scale), slots, src, Strides(ss), batchOf(b).Pos())
		},
		Prep: func(t verify.Table[float32], p verify.PrepStep[C], pos []int32) {
			tableOf(t).Prep(step(p), textPos(t, pos))
		},
		BatchPrep: func(b verify.Batch[float32], p verify.PrepStep[C]) {
			batchOf(b).Prep(step(p), batchOf(b).Pos())
		},
	}
}

// hadamardOf is cacheOf for the views mk makes with the Hadamard option
// (Cache.WithHadamard), with Load of their Original views and
// Rotary.Hadamard; nil where r's HeadDim has not the option (blocks of 16
// or more, a head of at most 1024), and with -short (as under qemu) but at the package's first shape:
// the run-time's code is the same at every shape, and asm/vec's
// TestKernels checks every target's Hadamard kernel at every block size.
func hadamardOf[C verify.CacheElem](r *Rotary, dtype string, mk func(buf []C, s Strides, scale float32) Cache) verify.CacheForms {
	if r.hd&-r.hd < 16 || r.hd > 1024 || testing.Short() && r.si != 0 {
		return nil
	}
	c := cacheOf(r, dtype, func(buf []C, s Strides, scale float32) Cache { return mk(buf, s, scale).WithHadamard() }).(*verify.Cache[C])
	c.Hadamard = true
	c.LoadOriginal = func(dst []float32, scale float32, ds verify.Strides, src []C, ss verify.Strides, slots []int64) {
		r.Load(dst, Strides(ds), mk(src, Strides(ss), scale).WithHadamard().Original(), slots)
	}
	c.Rows = func(x []float32, xs verify.Strides, n int) { r.Hadamard(x, Strides(xs), n) }
	return c
}

// headScalesOf is cacheOf for the e4m3 or e5m2 views mk makes with a
// scale per KV head (Cache.WithHeadScales), verify.HeadScales of the call's
// scale; with -short (as under qemu) at the package's first shape only, as
// hadamardOf.
func headScalesOf[C verify.CacheElem](r *Rotary, dtype string, mk func(buf []C, s Strides, scale float32) Cache) verify.CacheForms {
	if testing.Short() && r.si != 0 {
		return nil
	}
	c := cacheOf(r, dtype, func(buf []C, s Strides, scale float32) Cache {
		return mk(buf, s, scale).WithHeadScales(verify.HeadScales(scale, s.Heads))
	}).(*verify.Cache[C])
	c.HeadScales = true
	return c
}

// narrowOf describes the rotate-and-narrow kernels of r's uint16 cache
// type dtype ("f16" or "bf16") on every assembly backend to
// verify.NarrowExhaustive: at position 0, whose row holds C = A and S = ±0.
func narrowOf(r *Rotary, dtype string) verify.Narrowing {
	i := map[string]int{"f16": 0, "bf16": 1}[dtype]
	tab := r.NewTable(1)
	n := verify.Narrowing{OutDType: dtype, HeadDim: r.hd, AttentionFactor: r.p.Attn}
	for p := range r.rd / 2 {
		n.Firsts = append(n.Firsts, map[bool]int{false: 2 * p, true: p}[r.neox])
	}
	for bi := range backends[:len(backends)-1] {
		b := &backends[bi]
		to := b.shapes[r.si].half[i].to
		n.Backends = append(n.Backends, verify.NarrowBackend{Name: b.name, To: func(dst []uint16, src []float32) {
			to(dst, r.hd, src, r.hd, len(src)/r.hd, tab.row(0))
		}})
	}
	return n
}
