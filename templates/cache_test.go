package templates

import (
	"strings"
	"testing"
)

// cacheKernel is a hand-made e4m3 kernel of 22-value heads: one 16-value
// loop iteration, then chunks of 4 and 2.
func cacheKernel() *CacheKernel {
	k := &CacheKernel{Header: "// header", Package: "p", Cache: "e4m3", About: "bytes"}
	k.K = CacheConsts{Abs: 16, Max: 17, One: 18, Round: 19, Rebias: 20, Magic: 21, Normal: 22, Inf: 23, NaN: 24, High: 25, Eight: 26, Exp: 27, Sub: 28, QNaN: 29, Scale: 31}
	k.Consts = []Const{{Reg: 16, Value: 0x7fffffff, What: "abs"}}
	for _, store := range []bool{true, false} {
		f := CacheFunc{Name: "s", Kind: "store", Store: store, Count: 22, Params: "dst []uint8, dstStride int, src []float32, srcStride, n int, scale float32", ArgSize: 76, Scale: true, SrcShift: 2, Loop: 1, Tails: []int{4, 2}}
		if !store {
			f.Name, f.Kind, f.DstShift, f.SrcShift = "l", "load", 2, 0
		}
		k.Funcs = append(k.Funcs, f)
	}
	return k
}

func TestExecuteCache(t *testing.T) {
	out, err := ExecuteCache("cache_arm64.s.tmpl", cacheKernel())
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"TEXT ·s(SB), NOSPLIT, $0-76",
		"TEXT ·l(SB), NOSPLIT, $0-76",
		"FMOVS scale+72(FP), F31",
		"// fdiv v0.4s, v0.4s, v31.4s",
		"// cmgt v13.4s, v22.4s, v8.4s",
		"VST1.P [V2.B16], 16(R4)", // 16 bytes out of the loop
		"FMOVS.P F2, 4(R4)",       // the 4-value chunk
		"VST1.P V2.H[0], 2(R4)",   // the 2-value chunk
		"VLD1.P 2(R3), V4.H[0]",   // the load's 2-value chunk
		"// scvtf v11.4s, v8.4s",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(s, "\tRET\n"); n != 2 {
		t.Errorf("%d RETs, want 2", n)
	}
	goSrc, err := ExecuteCache("cache_arm64.go.tmpl", cacheKernel())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"//go:noescape\nfunc s(dst []uint8, dstStride int, src []float32, srcStride, n int, scale float32)\n",
		"//go:noescape\nfunc l(dst []uint8, dstStride int, src []float32, srcStride, n int, scale float32)\n",
	} {
		if !strings.Contains(string(goSrc), want) {
			t.Errorf("Go output lacks %q:\n%s", want, goSrc)
		}
	}
	// Declarations only: gen binds them into rt's kernels table.
	if strings.Contains(string(goSrc), "var ") || strings.Contains(string(goSrc), "func cache") {
		t.Errorf("Go output declares more than the functions:\n%s", goSrc)
	}
}

// An operand out of range fails ExecuteCache, with no output.
func TestExecuteCacheOperandError(t *testing.T) {
	k := cacheKernel()
	k.K.Scale = 32
	out, err := ExecuteCache("cache_arm64.s.tmpl", k)
	if err == nil || out != nil || !strings.Contains(err.Error(), "fdiv") {
		t.Fatalf("ExecuteCache = %d bytes, %v: want an fdiv operand error", len(out), err)
	}
	k = cacheKernel()
	k.Cache = "f8"
	if _, err := ExecuteCache("cache_arm64.s.tmpl", k); err == nil || !strings.Contains(err.Error(), "chunk: no function") {
		t.Fatalf("an unknown cache type: %v, want the template to fail", err)
	}
}
