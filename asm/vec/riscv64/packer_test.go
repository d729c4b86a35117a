package riscv64

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/internal/qemu"
)

// packerBlocks and packerOut are the blocks the Packer test kernel runs
// and the bytes it writes a block.
const packerBlocks, packerOut = 4, 160

// packerKernel is the test kernel at LMUL l (8/l members a block): for
// each block of 32 words x_j at src (32 apart), at dst (160 bytes apart)
//
//	bytes 0…15    StoreNibbles of q_j = x_j & 15
//	bytes 16…143  y_j = Shlv32(q'_j, c_j) ^ Shrv32(x_j, c_j), q' = LoadNibbles
//	              of bytes 0…15, c_j = (x_j >> 4) & 31
//	bytes 145…148 StoreU32 of OrAcross(x)
//	bytes 149…152 StoreU32 of LoadU32(the block's bytes 7…10) + 1
func packerKernel(l int) (*Target, *vec.Func) {
	f := &vec.Func{Kind: vec.Store, Shape: vec.Shape{HeadDim: 32, RotaryDim: 32, NeoX: true}, X: vec.F32, Cache: vec.Q8, Level: "rvv"}
	for local := range 3 {
		t := &Target{f: f, lmul: l, consts: map[string]*reg{}, scaled: map[*reg]int{}, local: local, kbits: map[*reg]uint32{}}
		src, dst := t.Ptr("src", vec.F32), t.Ptr("dst", vec.Q8)
		t.Blocks32(nil, packerBlocks, src, 32, dst, packerOut, func(s, d vec.Arr) {
			xs := t.LoadF32x32(s)
			n := len(xs)
			qs, cs := make([]vec.V, n), make([]vec.V, n)
			for i, x := range xs {
				xs[i] = t.AsU32(x)
				qs[i] = t.And(xs[i], t.U32(15))
				cs[i] = t.And(t.Shr32(xs[i], 4), t.U32(31))
			}
			t.StoreNibbles(d, qs)
			ln := t.LoadNibbles(d)
			ys := make([]vec.V, n)
			for i := range ys {
				ys[i] = t.AsF32(t.Xor(t.Shlv32(ln[i], cs[i]), t.Shrv32(xs[i], cs[i])))
			}
			t.StoreF32x32(d.At(16), ys)
			t.StoreU32(d.At(145), t.OrAcross(xs))
			w := t.LoadU32(vec.Arr{Elem: vec.Q8, P: s.P, Off: s.Off*4 + 7})
			t.StoreU32(d.At(149), t.Add32(w, t.U32(1)))
		})
		t.emit("RET")
		if t.alloc() {
			return t, f
		}
	}
	return nil, f
}

// packerRef is the test kernel's bytes for a block of words x.
func packerRef(x []uint32, raw []byte) []byte {
	out := make([]byte, packerOut)
	var or uint32
	for j := range 32 {
		or |= x[j]
		if j < 16 {
			out[j] = byte(x[j]&15 | (x[j+16]&15)<<4)
		}
		c := (x[j] >> 4) & 31
		binary.LittleEndian.PutUint32(out[16+4*j:], (x[j]&15)<<c^x[j]>>c)
	}
	binary.LittleEndian.PutUint32(out[145:], or)
	binary.LittleEndian.PutUint32(out[149:], binary.LittleEndian.Uint32(raw[7:])+1)
	return out
}

// TestPacker runs the Packer operations (packer.go) at LMUL 4, 2 and 1
// (2, 4 and 8 members a block) under qemu-riscv64-static at VLEN 128, 256
// and 512 against packerRef on random words.
func TestPacker(t *testing.T) {
	qemuBin, err := exec.LookPath("qemu-riscv64-static")
	if err != nil {
		t.Skip("qemu-riscv64-static not found")
	}
	var asm, stubs, calls strings.Builder
	asm.WriteString("//go:build riscv64\n\n#include \"textflag.h\"\n")
	for _, l := range []int{4, 2, 1} {
		tg, f := packerKernel(l)
		if tg == nil {
			t.Fatalf("LMUL %d: the values do not fit", l)
		}
		_, size := f.Frame()
		fmt.Fprintf(&asm, "\nTEXT ·packer%d(SB), NOSPLIT, $%d-%d\n", l, tg.frame, size)
		tg.print(&asm)
		fmt.Fprintf(&stubs, "\n//go:noescape\nfunc packer%d(dst []uint8, ds int, src []float32, ss int, n int, scale float32)\n", l)
		fmt.Fprintf(&calls, "\tdst = make([]byte, %d)\n\tpacker%d(dst, 0, src, 0, 0, 0)\n\tos.Stdout.Write(dst)\n", packerBlocks*packerOut, l)
	}
	main := "package main\n\nimport (\n\t\"os\"\n\t\"unsafe\"\n)\n\nfunc main() {\n\traw, _ := os.ReadFile(os.Args[1])\n" +
		"\tsrc := unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), len(raw)/4)\n\tvar dst []byte\n" + calls.String() + "}\n" + stubs.String()
	dir := t.TempDir()
	for name, data := range map[string]string{"go.mod": "module packer\n\ngo 1.26\n", "main.go": main, "packer_riscv64.s": asm.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "packer")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOARCH=riscv64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, asm.String())
	}
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 4 {
		raw := make([]byte, 4*32*packerBlocks)
		for j := 0; j < len(raw); j += 4 {
			v := r.Uint32()
			if trial == 1 {
				v = r.Uint32() >> r.IntN(32) // small words: shifts past the nibbles' bits
			}
			binary.LittleEndian.PutUint32(raw[j:], v)
		}
		var want []byte
		for b := range packerBlocks {
			x := make([]uint32, 32)
			for j := range x {
				x[j] = binary.LittleEndian.Uint32(raw[128*b+4*j:])
			}
			want = append(want, packerRef(x, raw[128*b:])...)
		}
		in := filepath.Join(dir, "in")
		if err := os.WriteFile(in, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, vlen := range []int{128, 256, 512} {
			out, err := exec.Command(qemuBin, "-cpu", qemu.RISCV64CPU(vlen), bin, in).Output()
			if err != nil {
				t.Fatalf("VLEN %d: %v", vlen, err)
			}
			for k, l := range []int{4, 2, 1} {
				got := out[k*len(want) : (k+1)*len(want)]
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("VLEN %d, LMUL %d, trial %d: block %d byte %d = %#x, want %#x", vlen, l, trial, i/packerOut, i%packerOut, got[i], want[i])
					}
				}
			}
		}
	}
}
