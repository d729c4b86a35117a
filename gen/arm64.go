package gen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// neonFormats are the element types, as the templates see them.
var neonFormats = map[string]templates.Format{
	"f32":  {Name: "f32", Size: 4},
	"f64":  {Name: "f64", Size: 8},
	"f16":  {Name: "f16", Size: 2},
	"bf16": {Name: "bf16", Size: 2},
}

// NEON register layout (templates.Kernel documents it): working sets of six
// registers (A, B, P0…P3) at V10 and V16, preloaded c values just below V10,
// preloaded s values from V22 up, constants at V0 and from V31 down.
const (
	neonWork0 = 10 // first working set: V10…V15
	neonWork1 = 16 // second working set: V16…V21
	neonS0    = 22 // s of preloaded block k: V(22+k); c: V(10−Preloaded+k)
)

// bf16 narrowing constants (templates.Narrow): the lowest kept bit, the
// rounding bias, a NaN's quiet bit.
const (
	bf16Lsb   = 0x10000
	bf16Bias  = 0x7fff
	bf16Quiet = 0x400000
)

// neonKernel is the template data for the shape's NEON kernels: for each
// function its Body, the block plan of one head (full blocks, then a 2-pair
// and a 1-pair tail), its registers, byte offsets and accesses, and which
// table values stay in registers across heads; a rotate-and-narrow kernel
// per uint16 cache type. Every name ends in NEON and the shape's suffix.
func (sh *shape) neonKernel(header string) *templates.Kernel {
	p := sh.p
	d := p.dtype()
	k := &templates.Kernel{
		Header:    header,
		Package:   p.Spec.Package,
		HeadDim:   p.HeadDim,
		RotaryDim: p.RotaryDim,
		Half:      p.Half,
		NeoX:      p.Spec.Layout == spec.NeoX,
		Layout:    p.Spec.Layout,
		RowLen:    p.RowLen,
		DType:     p.Spec.DType,
		OutDType:  strings.Join(sh.halfCaches(), " or "),
		About:     d.about,
	}
	in := neonFormats[p.Spec.DType]
	params := fmt.Sprintf("x []%s, stride, n int, r *%s", d.goType, d.compute)
	b := p.neonBody(in, in, false, false)
	rows := fmt.Sprintf("x []%s, stride, n int, rows []%s", d.goType, d.compute)
	rb := p.neonBody(in, in, false, true)
	rowBytes := p.RowLen * rb.TableSize
	sfx := "NEON" + sh.sfx
	k.Funcs = []templates.Func{
		{Name: "apply" + sfx, Kind: "fwd", Doc: "forward (A·R_p·x)", Params: params, AsmParams: params, ArgSize: 48, Body: b},
		{Name: "applyInverse" + sfx, Kind: "inv", Inverse: true, Doc: "backward (A·R_pᵀ·x)", Params: params, AsmParams: params, ArgSize: 48, Body: b},
		{Name: "applyRows" + sfx, Kind: "fwdRows", Doc: "forward (A·R_p·x)", Params: rows, AsmParams: rows, ArgSize: 64, RowBytes: rowBytes, Body: rb},
		{Name: "applyInverseRows" + sfx, Kind: "invRows", Inverse: true, Doc: "backward (A·R_pᵀ·x)", Params: rows, AsmParams: rows, ArgSize: 64, RowBytes: rowBytes, Body: rb},
	}
	for _, c := range sh.halfCaches() {
		o := dtypes[c]
		to := fmt.Sprintf("dst []%s, dstStride int, src []float32, srcStride int, n int, r *float32", o.goType)
		k.Funcs = append(k.Funcs, templates.Func{
			Name: "applyTo" + strings.ToUpper(c) + sfx, Kind: "to", Doc: "forward (A·R_p·x) into dst, narrowed to " + o.about + ",",
			Params: to, AsmParams: to, ArgSize: 80,
			Body: p.neonBody(in, neonFormats[c], true, false),
		})
	}
	for _, n := range sh.norms {
		k.Norms = append(k.Norms, sh.withNorm(n).neonNorm(sh.sfx))
	}
	return k
}

// neonBody plans one function that loads in and stores out; to says it is
// ApplyTo's kernel (src and dst apart, the values past RotaryDim narrowed
// too); rows, that each head has its own table row (nothing preloaded).
func (p *Plan) neonBody(in, out templates.Format, to, rows bool) *templates.Body {
	neox := p.Spec.Layout == spec.NeoX
	tsize, lanes, fp := 4, 4, "S"
	if in.Name == "f64" {
		tsize, lanes, fp = 8, 2, "D"
	}
	half16 := in.Size == 2 || out.Size == 2 // some access is 16-bit: no LD2/ST2 or scalar tails
	b := &templates.Body{In: in, Out: out, TableSize: tsize, Lanes: lanes}
	switch in.Name {
	case "f16":
		b.Widen = "fcvtl"
	case "bf16":
		b.Widen = "shll"
	}
	switch out.Name {
	case "f16":
		b.Narrow = "fcvtn"
	case "bf16":
		b.Narrow = "bf16"
	}
	H, R, h := p.HeadDim, p.RotaryDim, p.Half
	copyVals := 0
	if to {
		copyVals = H - R
	}

	// Constants take V0 up and V31 down, out of the preload ranges.
	lo, hi := 0, 0
	if b.Narrow == "bf16" {
		b.Lsb, b.Bias = 0, 31
		b.Consts = append(b.Consts,
			templates.Const{Reg: 0, Value: bf16Lsb, What: "bf16 rounding: the lowest kept bit"},
			templates.Const{Reg: 31, Value: bf16Bias, What: "bf16 rounding: the bias"})
		lo, hi = 1, 1
		if copyVals > 0 {
			b.Quiet = 30
			b.Consts = append(b.Consts, templates.Const{Reg: 30, Value: bf16Quiet, What: "bf16: a NaN's quiet bit"})
			hi = 2
		}
	}
	b.MaxPreload = templates.MaxPreload - max(lo, hi)
	if rows {
		b.MaxPreload = 0 // the row changes every head
	}

	// Pointers: loads through R3 (x_a) and R5 (x_b), stores through R4
	// and R6. Each walks its part of the head (the copy walks the loads'
	// and stores' last pointers over [R, H)); its advance register, the
	// head stride in bytes less that walk, takes it on to the next head.
	src, dst := "R0", "R0"
	if to {
		dst = "R9"
	}
	if neox {
		b.Ptrs = []templates.Ptr{
			{Reg: "R3", From: src, Walk: h * in.Size},
			{Reg: "R4", From: dst, Walk: h * out.Size},
			{Reg: "R5", From: src, Off: h * in.Size, Walk: h * in.Size},
			{Reg: "R6", From: "R5", Walk: h * out.Size},
		}
		if to {
			b.Ptrs[2].Walk = (H - h) * in.Size
			b.Ptrs[3] = templates.Ptr{Reg: "R6", From: dst, Off: h * out.Size, Walk: (H - h) * out.Size}
		}
	} else {
		b.Ptrs = []templates.Ptr{
			{Reg: "R3", From: src, Walk: R * in.Size},
			{Reg: "R4", From: dst, Walk: R * out.Size},
		}
		if to {
			b.Ptrs[0].Walk, b.Ptrs[1].Walk = H*in.Size, H*out.Size
		}
	}
	b.Advances = neonAdvances(b.Ptrs, to, in, out)

	// The block plan: lanes are pairs.
	var sizes []int
	for i := 0; i < h; {
		w := lanes
		for w > h-i {
			w /= 2
		}
		sizes = append(sizes, w)
		i += w
	}
	b.Preloaded = min(len(sizes), b.MaxPreload)

	var sLoads []templates.Load
	b.Blocks = make([]templates.Block, 0, len(sizes))
	b.Groups = make([]templates.Group, 0, (len(sizes)+1)/2)
	pair := 0
	for n, w := range sizes {
		a, bb := p.Pair(pair)
		blk := templates.Block{
			Index:     n,
			Pair:      pair,
			Last:      pair + w - 1,
			Pairs:     w,
			XA:        a * in.Size,
			XB:        bb * in.Size,
			YA:        a * out.Size,
			YB:        bb * out.Size,
			COff:      a * tsize,
			SOff:      (R + bb) * tsize,
			Preloaded: n < b.Preloaded,
		}
		base := neonWork0
		if n%2 == 1 {
			base = neonWork1
		}
		blk.A, blk.B, blk.P0, blk.P1, blk.P2, blk.P3 = base, base+1, base+2, base+3, base+4, base+5
		if blk.Preloaded {
			blk.C, blk.S = neonWork0-b.Preloaded+n, neonS0+n
		} else {
			blk.C, blk.S = blk.P0, blk.P3
		}
		switch {
		case !neox && w >= 2 && (w == lanes || !half16):
			blk.Form = "ld2"
		case !neox && half16:
			blk.Form = "swap"
		case w == 1 && !half16:
			blk.Form, blk.Scalar = "scalar", true
		default:
			blk.Form = "ld1"
		}
		blk.CLoad, blk.SLoad = blk.COff, blk.SOff
		switch blk.Form {
		case "ld2":
			blk.Arr = fmt.Sprintf("%d%s", w, fp)
			blk.SLoad -= tsize // LD2 from S[a]: the odd lanes are S[b]
			blk.XBytes, blk.YBytes, blk.TBytes = 2*w*in.Size, 2*w*out.Size, 2*w*tsize
			blk.Loads = []templates.Access{{Kind: "ld2", Arr: goArr(in.Size, w), Ptr: "R3", Post: true, Bytes: blk.XBytes, Regs: []int{blk.A, blk.B}}}
			blk.Stores = []templates.Access{{Kind: "ld2", Arr: goArr(out.Size, w), Ptr: "R4", Post: true, Bytes: blk.YBytes, Regs: []int{blk.P0, blk.P1}}}
			blk.TLoads = []templates.Access{
				{Kind: "ld2", Arr: goArr(tsize, w), Ptr: "R7", Post: true, Bytes: blk.TBytes, Regs: []int{blk.P0, blk.P1}},
				{Kind: "ld2", Arr: goArr(tsize, w), Ptr: "R8", Post: true, Bytes: blk.TBytes, Regs: []int{blk.P2, blk.P3}},
			}
		case "swap":
			blk.Arr = fmt.Sprintf("%dS", 2*w) // a and b side by side
			blk.XB, blk.YB = blk.XA+in.Size, blk.YA+out.Size
			blk.SLoad -= tsize // S[a], S[b], …: all of them
			blk.XBytes, blk.YBytes, blk.TBytes = 2*w*in.Size, 2*w*out.Size, 2*w*tsize
			blk.Loads = []templates.Access{vecAccess("R3", in.Size, 2*w, blk.A)}
			blk.Stores = []templates.Access{vecAccess("R4", out.Size, 2*w, blk.P0)}
			blk.TLoads = []templates.Access{tableAccess("R7", blk.CLoad, tsize, 2*w, blk.C), tableAccess("R8", blk.SLoad, tsize, 2*w, blk.S)}
		case "ld1":
			blk.Arr = "2S"
			if tsize == 8 {
				blk.Arr = "2D"
			} else if w == 4 {
				blk.Arr = "4S"
			}
			blk.XBytes, blk.YBytes, blk.TBytes = w*in.Size, w*out.Size, w*tsize
			blk.Loads = []templates.Access{vecAccess("R3", in.Size, w, blk.A), vecAccess("R5", in.Size, w, blk.B)}
			blk.Stores = []templates.Access{vecAccess("R4", out.Size, w, blk.P0), vecAccess("R6", out.Size, w, blk.P1)}
			blk.TLoads = []templates.Access{tableAccess("R7", blk.CLoad, tsize, w, blk.C), tableAccess("R8", blk.SLoad, tsize, w, blk.S)}
		case "scalar":
			blk.FP, blk.TBytes = fp, tsize
			if neox {
				blk.XBytes, blk.YBytes = in.Size, out.Size
				blk.Loads = []templates.Access{
					{Kind: "fp", Arr: fp, Ptr: "R3", Post: true, Bytes: in.Size, Regs: []int{blk.A}},
					{Kind: "fp", Arr: fp, Ptr: "R5", Post: true, Bytes: in.Size, Regs: []int{blk.B}},
				}
				blk.Stores = []templates.Access{
					{Kind: "fp", Arr: fp, Ptr: "R4", Post: true, Bytes: out.Size, Regs: []int{blk.P0}},
					{Kind: "fp", Arr: fp, Ptr: "R6", Post: true, Bytes: out.Size, Regs: []int{blk.P1}},
				}
			} else {
				blk.XBytes, blk.YBytes = 2*in.Size, 2*out.Size
				blk.Loads = []templates.Access{{Kind: "fp2", Arr: fp, Ptr: "R3", Post: true, Bytes: 2 * in.Size, Regs: []int{blk.A, blk.B}}}
				blk.Stores = []templates.Access{{Kind: "fp2", Arr: fp, Ptr: "R4", Post: true, Bytes: 2 * out.Size, Regs: []int{blk.P0, blk.P1}}}
			}
			blk.TLoads = []templates.Access{tableAccess("R7", blk.CLoad, tsize, 1, blk.C), tableAccess("R8", blk.SLoad, tsize, 1, blk.S)}
		}
		if blk.Arr != "" {
			blk.GoArr = blk.Arr[len(blk.Arr)-1:] + blk.Arr[:len(blk.Arr)-1]
		}
		// Preload the same loads, once, into C and S.
		if blk.Preloaded {
			for i, what := range []string{"c", "s"} {
				t := blk.TLoads[i]
				reg := []int{blk.C, blk.S}[i]
				l := templates.Load{What: what, Block: n, Off: []int{blk.CLoad, blk.SLoad}[i], Pairs: w, Kind: t.Kind, Scalar: t.Kind == "fp", Arr: t.Arr, Regs: []int{reg}, Keep: reg}
				if t.Kind == "ld2" {
					l.Regs = []int{reg, reg + 1} // c: the next block's c, or V10
					if what == "s" {
						l.Regs = []int{reg - 1, reg} // s: the previous block's s, or V21
					}
				}
				if what == "c" {
					b.Preload = append(b.Preload, l)
				} else {
					sLoads = append(sLoads, l)
				}
			}
			blk.TLoads = nil
		} else if blk.TLoads[0].Post && !b.LoopTable {
			b.LoopTable, b.LoopC, b.LoopS = true, blk.CLoad, blk.SLoad
		}
		if b.Widen != "" {
			blk.Widen = []int{blk.A, blk.B}
			if blk.Form == "swap" {
				blk.Widen = blk.Widen[:1]
			}
		}
		if b.Narrow != "" {
			outs, temps := []int{blk.P0, blk.P1}, [][2]int{{blk.P2, blk.P3}, {blk.A, blk.B}}
			if blk.Form == "swap" {
				outs = outs[:1]
			}
			for i, y := range outs {
				blk.Narrows = append(blk.Narrows, neonNarrow(b, y, temps[i][0], temps[i][1], y, false, false))
			}
		}
		b.Blocks = append(b.Blocks, blk)
		pair += w
	}
	// Preloads: every c in block order (an interleaved LD2 also writes the
	// next register, which the next c load or, last, V10 takes), then every
	// s in reverse block order (the LD2's other register is the one below:
	// the previous block's s, loaded later, or, last, V21).
	for i := len(sLoads) - 1; i >= 0; i-- {
		b.Preload = append(b.Preload, sLoads[i])
	}
	for i := 0; i < len(b.Blocks); i += 2 {
		g := templates.Group{Blocks: b.Blocks[i:min(i+2, len(b.Blocks))]}
		g.First, g.Last = g.Blocks[0].Pair, g.Blocks[len(g.Blocks)-1].Last
		for _, blk := range g.Blocks {
			g.Narrows = append(g.Narrows, blk.Narrows...)
		}
		b.Groups = append(b.Groups, g)
	}
	if copyVals > 0 {
		b.Copy = neonCopy(b, neox, R, H)
	}
	return b
}

// neonAdvances assigns each pointer its advance register, R12 up, one per
// distinct (stride argument, element size, walk): in place every pointer
// walks x with the same stride, and interleaved or neox alike its pointers
// walk as far, so one register serves them all; ApplyTo's src and dst
// pointers have a stride each, and neox src and dst pointers walk h and
// H−h values.
func neonAdvances(ptrs []templates.Ptr, to bool, in, out templates.Format) []templates.Advance {
	var advs []templates.Advance
	region := map[string]bool{} // pointer → it walks dst
	for i := range ptrs {
		p := &ptrs[i]
		isDst := p.From == "R9" || region[p.From]
		region[p.Reg] = isDst
		a := templates.Advance{Arg: "stride", ArgOff: 24, Shift: bits.TrailingZeros(uint(in.Size)), Walk: p.Walk}
		switch {
		case to && isDst:
			a.Arg, a.ArgOff, a.Shift = "dstStride", 24, bits.TrailingZeros(uint(out.Size))
		case to:
			a.Arg, a.ArgOff = "srcStride", 56
		}
		found := false
		for _, b := range advs {
			if b.Arg == a.Arg && b.Shift == a.Shift && b.Walk == a.Walk {
				p.Adv, found = b.Reg, true
			}
		}
		if !found {
			a.Reg = fmt.Sprintf("R%d", 12+len(advs))
			p.Adv = a.Reg
			advs = append(advs, a)
		}
	}
	return advs
}

// neonNarrow is the narrowing of y into out (its upper half when upper)
// with the temporaries t and m (bf16); quiet for values that did not go
// through the arithmetic (templates.Narrow).
func neonNarrow(b *templates.Body, y, t, m, out int, upper, quiet bool) templates.Narrow {
	n := templates.Narrow{Op: b.Narrow, Y: y, Out: out, Upper: upper}
	if b.Narrow == "bf16" {
		n.T, n.M, n.Lsb, n.Bias = t, m, b.Lsb, b.Bias
		if quiet {
			n.Quiet, n.QuietReg = true, b.Quiet
		}
	}
	return n
}

// neonCopy plans the pass-through narrowing of values [r, h) of each head
// of a "to" kernel: a loop over 16 values (two chunks of 8, one per working
// set) when it would run at least twice, then chunks of 8, 4 and 2.
func neonCopy(b *templates.Body, neox bool, r, h int) *templates.Copy {
	c := &templates.Copy{First: r, Last: h - 1, Src: "R3", Dst: "R4"}
	if neox {
		c.Src, c.Dst = "R5", "R6"
	}
	// chunk narrows n values (8, 4 or 2) with working set base.
	chunk := func(n, base int) templates.Chunks {
		y0, y1 := base, base+1
		ch := templates.Chunks{Values: n}
		if n == 8 {
			ch.Loads = []templates.Access{{Kind: "ld1", Arr: "S4", Ptr: c.Src, Post: true, Bytes: 32, Regs: []int{y0, y1}}}
		} else {
			ch.Loads = []templates.Access{vecAccess(c.Src, 4, n, y0)}
		}
		out := y0 // f16: FCVTN into Y0; bf16: SHRN from T0 into T0
		if b.Narrow == "bf16" {
			out = base + 2
		}
		ch.Narrows = append(ch.Narrows, neonNarrow(b, y0, base+2, base+3, out, false, true))
		if n == 8 {
			ch.Narrows = append(ch.Narrows, neonNarrow(b, y1, base+4, base+5, out, true, true))
			ch.Stores = []templates.Access{{Kind: "ld1", Arr: "H8", Ptr: c.Dst, Post: true, Bytes: 16, Regs: []int{out}}}
		} else {
			ch.Stores = []templates.Access{vecAccess(c.Dst, 2, n, out)}
		}
		return ch
	}
	merge := func(a, b templates.Chunks) templates.Chunks {
		return templates.Chunks{
			Values:  a.Values + b.Values,
			Loads:   append(append([]templates.Access(nil), a.Loads...), b.Loads...),
			Narrows: append(append([]templates.Narrow(nil), a.Narrows...), b.Narrows...),
			Stores:  append(append([]templates.Access(nil), a.Stores...), b.Stores...),
		}
	}
	n := h - r
	eights := n / 8
	if eights/2 >= 2 {
		c.Loop = eights / 2
		body := merge(chunk(8, neonWork0), chunk(8, neonWork1))
		c.Body = &body
		eights %= 2
	}
	var rest []int
	for range eights {
		rest = append(rest, 8)
	}
	if n%8 >= 4 {
		rest = append(rest, 4)
	}
	if n%4 != 0 {
		rest = append(rest, 2)
	}
	// Two at a time, on alternate working sets.
	for i := 0; i < len(rest); i += 2 {
		g := chunk(rest[i], neonWork0)
		if i+1 < len(rest) {
			g = merge(g, chunk(rest[i+1], neonWork1))
		}
		c.Rest = append(c.Rest, g)
	}
	return c
}

// goArr is the Go register-list arrangement of n values of size bytes:
// "S4", "S2", "D2", "H4", "H8", or "" where there is none.
func goArr(size, n int) string {
	switch [2]int{size, n} {
	case [2]int{4, 4}:
		return "S4"
	case [2]int{4, 2}:
		return "S2"
	case [2]int{8, 2}:
		return "D2"
	case [2]int{2, 4}:
		return "H4"
	case [2]int{2, 8}:
		return "H8"
	}
	return ""
}

// fpWidth is the FMOV width letter of size bytes: "S" (4), "D" (8), "Q" (16).
func fpWidth(size int) string {
	switch size {
	case 4:
		return "S"
	case 8:
		return "D"
	case 16:
		return "Q"
	}
	return ""
}

// vecAccess is a post-incremented load or store of n values of size bytes
// through ptr into (from) vector register reg: a one-register VLD1/VST1
// list where there is an arrangement, else an FMOVS/FMOVD of 4 or 8 bytes,
// else (one 16-bit value) lane 0.
func vecAccess(ptr string, size, n, reg int) templates.Access {
	a := templates.Access{Ptr: ptr, Post: true, Bytes: size * n, Regs: []int{reg}}
	switch {
	case goArr(size, n) != "":
		a.Kind, a.Arr = "ld1", goArr(size, n)
	case a.Bytes == 4 || a.Bytes == 8:
		a.Kind, a.Arr = "fp", fpWidth(a.Bytes)
	default:
		a.Kind, a.Arr = "lane", "H"
	}
	return a
}

// tableAccess is a table load of n values of size bytes into reg: a vector
// list through the walking pointer ptr (R7 or R8), or, for one value, an
// FMOVS/FMOVD at off in the row (R2).
func tableAccess(ptr string, off, size, n, reg int) templates.Access {
	if n >= 2 {
		return templates.Access{Kind: "ld1", Arr: goArr(size, n), Ptr: ptr, Post: true, Bytes: size * n, Regs: []int{reg}}
	}
	return templates.Access{Kind: "fp", Arr: fpWidth(size), Ptr: "R2", Off: off, Bytes: size, Regs: []int{reg}}
}
