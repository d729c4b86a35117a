package verify

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"unsafe"
)

// ---- memory flush against inaccessible pages -----------------------------------

// plain is what guarded memory may hold: types without pointers, since the
// garbage collector does not scan memory it did not allocate.
type plain interface {
	Elem | ~int32 | ~int64 | ~uint8
}

// guarded is memory mapped between two PROT_NONE pages. Its slices lie flush
// against one of them: at the end of the accessible bytes (so reading or
// writing one value past the slice faults) or at their start (one value
// before it faults). The rest of the accessible bytes, at least a page on the
// inner side of every slice, hold a canary pattern that checkCanary compares
// byte for byte.
type guarded[T plain] struct {
	mem     []byte // the whole mapping, guard pages included
	acc     []byte // the accessible bytes
	vals    []T    // acc as values of T
	pattern []byte // the canary: what acc holds outside the slice in use
	atEnd   bool
	size    int // bytes per value
}

// mustGuarded is newGuarded, failing t if the memory cannot be mapped.
func mustGuarded[T plain](t tb, n int, atEnd bool) *guarded[T] {
	t.Helper()
	g, err := newGuarded[T](n, atEnd)
	if err != nil {
		t.Fatalf("guard: %v", err)
	}
	return g
}

// newGuarded maps room for n values of T (and a page of canary) between two
// PROT_NONE pages; slices of it end at the page after them (atEnd) or start
// at the page before them. Call free when done.
func newGuarded[T plain](n int, atEnd bool) (*guarded[T], error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	mem, page, err := mapGuarded(n*size + os.Getpagesize())
	if err != nil {
		return nil, err
	}
	acc := mem[page : len(mem)-page]
	g := &guarded[T]{
		mem:     mem,
		acc:     acc,
		vals:    unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(acc))), len(acc)/size),
		pattern: make([]byte, len(acc)),
		atEnd:   atEnd,
		size:    size,
	}
	for i := 0; i < len(g.pattern); i += 8 {
		h := mix(uint64(i) ^ 0x67756172)
		for j := i; j < min(i+8, len(g.pattern)); j++ {
			g.pattern[j] = byte(h >> (8 * (j - i)))
		}
	}
	copy(acc, g.pattern)
	return g, nil
}

// free unmaps g's memory; its slices must not be used afterwards.
func (g *guarded[T]) free() { unmapGuarded(g.mem) }

// span returns the byte range [lo, hi) of acc that slice(n) covers.
func (g *guarded[T]) span(n int) (lo, hi int) {
	if g.atEnd {
		return len(g.acc) - n*g.size, len(g.acc)
	}
	return 0, n * g.size
}

// slice returns n values flush against the guard page (capacity n too). For
// n = 0 Go points the empty slice at the start of the array instead.
func (g *guarded[T]) slice(n int) []T {
	if g.atEnd {
		m := len(g.vals)
		return g.vals[m-n : m : m]
	}
	return g.vals[0:n:n]
}

// reset puts the canary back over slice(n), for a next call with a
// different n.
func (g *guarded[T]) reset(n int) {
	lo, hi := g.span(n)
	copy(g.acc[lo:hi], g.pattern[lo:hi])
}

// checkCanary reports a change of the canary around slice(n) (a value
// written outside the slice), as "" when there is none.
func (g *guarded[T]) checkCanary(n int) string {
	lo, hi := g.span(n)
	if !bytes.Equal(g.acc[:lo], g.pattern[:lo]) {
		i := lo - 1
		for g.acc[i] == g.pattern[i] {
			i--
		}
		return fmt.Sprintf("byte %d before the slice was overwritten (%#02x, canary %#02x)", lo-i, g.acc[i], g.pattern[i])
	}
	if !bytes.Equal(g.acc[hi:], g.pattern[hi:]) {
		i := hi
		for g.acc[i] == g.pattern[i] {
			i++
		}
		return fmt.Sprintf("byte %d past the end of the slice was overwritten (%#02x, canary %#02x)", i-hi+1, g.acc[i], g.pattern[i])
	}
	return ""
}

// where describes a faulting address relative to slice(n).
func (g *guarded[T]) where(addr uintptr, n int) string {
	lo, hi := g.span(n)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(g.acc)))
	start, end := base+uintptr(lo), base+uintptr(hi)
	switch {
	case addr >= end:
		return fmt.Sprintf("byte %d past the end of the slice", addr-end+1)
	case addr < start:
		return fmt.Sprintf("byte %d before the slice", start-addr)
	}
	return fmt.Sprintf("inside the slice, byte %d", addr-start)
}

// locate describes a faulting address relative to slice(n) as "name: "
// and where's description, or gives "" if addr is outside g's mapping.
func (g *guarded[T]) locate(name string, addr uintptr, n int) string {
	if !inMapping(g.mem, addr) {
		return ""
	}
	return name + ": " + g.where(addr, n)
}

// faultWhere joins the non-empty descriptions of locate with "; ".
func faultWhere(locs ...string) string {
	return strings.Join(slices.DeleteFunc(locs, func(l string) bool { return l == "" }), "; ")
}

// inMapping reports whether addr lies in mem (guard pages included).
func inMapping(mem []byte, addr uintptr) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return addr >= lo && addr < lo+uintptr(len(mem))
}

// guardSide describes where slices lie in guarded memory made with atEnd.
func guardSide(atEnd bool) string {
	if atEnd {
		return "ending at a PROT_NONE page"
	}
	return "starting after a PROT_NONE page"
}

// faultCall runs f with memory faults turned into panics
// (debug.SetPanicOnFault) and returns the faulting address if it faulted, or
// the message of any other panic.
func faultCall(f func()) (addr uintptr, faulted bool, msg string, panicked bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			panicked, msg = true, fmt.Sprint(r)
			if a, ok := r.(interface{ Addr() uintptr }); ok {
				addr, faulted = a.Addr(), true
			}
		}
	}()
	f()
	return 0, false, "", false
}

// ---- the guard check -----------------------------------------------------------

// gform is one way of calling the kernel that checkGuard and Fuzz use: one of
// the six entry points.
type gform struct {
	name string
	e    entry
	seq  bool // takes a slice of positions
}

// forms returns every way k can be called: the six entry points.
func (s *suite[T]) forms() []gform {
	var fs []gform
	for _, e := range allEntries() {
		fs = append(fs, gform{name: e.String(), e: e, seq: e.seq()})
	}
	return fs
}

// invoke runs form f on x at pos, or at seq for the Seq forms.
func (s *suite[T]) invoke(f gform, x []T, pos int, seq []int32) {
	s.call(f.e, x, pos, seq)
}

// guardMaxHeads and guardMaxTokens bound the shapes checkGuard calls with:
// heads 1…guardMaxHeads per token, 1…guardMaxTokens tokens for the Seq forms.
const (
	guardMaxHeads  = 9
	guardMaxTokens = 3
)

// checkGuard calls every entry point (ApplySeq and ApplyInverseSeq with 1…3
// tokens) on every backend with 1…9 heads per token on slices placed flush
// against a PROT_NONE page, once with the page right after the slice and
// once right before it; the position slices of the Seq forms are placed the
// same way. A read or write past either end faults, which fails the check
// naming the call and where the access fell. Around each slice, on its
// inner side, lies a canary region in the same mapping that must come back
// unchanged bit for bit, and each result must equal, bit for bit (NaN-ness
// only), the same call on ordinary memory. Table rows are allocated by the
// package and are not guarded here.
func checkGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if !guardSupported {
		t.Skipf("SKIPPED: guard pages (mmap, mprotect PROT_NONE) are only implemented on linux, not %s", runtime.GOOS)
	}
	backends := s.k.Backends
	if len(backends) == 0 {
		backends = []Backend{{Name: "(only)", Use: func() {}}}
	} else {
		defer backends[0].Use()
	}
	forms := s.forms()
	sd := seed()
	rng := rand.New(rand.NewPCG(sd, 0x6775617264))
	maxN := guardMaxHeads * guardMaxTokens * s.hd
	tablePos := []int{s.n - 1, 0, 1, s.n / 2}
	rotatePos := []int{maxRotatePos, 0, 1, 131071}

	calls := 0
	for _, atEnd := range []bool{true, false} {
		side := guardSide(atEnd)
		xg := mustGuarded[T](t, maxN, atEnd)
		defer xg.free()
		pg := mustGuarded[int32](t, guardMaxTokens, atEnd)
		defer pg.free()
		for _, b := range backends {
			b.Use()
			for heads := 1; heads <= guardMaxHeads; heads++ {
				for _, f := range forms {
					maxTok := 1
					if f.seq {
						maxTok = guardMaxTokens
					}
					for tokens := 1; tokens <= maxTok; tokens++ {
						n := heads * tokens * s.hd
						pos := tablePos[calls%len(tablePos)]
						if f.e.tableless() {
							pos = rotatePos[calls%len(rotatePos)]
						}
						in := make([]T, n)
						for i := range in {
							in[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
						}
						var seq []int32
						if f.seq {
							seq = pg.slice(tokens)
							for j := range seq {
								seq[j] = int32(tablePos[(calls+j)%len(tablePos)])
							}
						}
						// The same call on ordinary memory.
						want := slices.Clone(in)
						s.invoke(f, want, pos, slices.Clone(seq))

						x := xg.slice(n)
						copy(x, in)
						what := func() string {
							w := fmt.Sprintf("backend %s: %s with %d heads", b.Name, f.name, heads)
							if f.seq {
								w += fmt.Sprintf(" per token, %d tokens at %v,", tokens, seq)
							} else {
								w += fmt.Sprintf(" at pos %d,", pos)
							}
							return w + " on a slice " + side
						}
						addr, faulted, msg, panicked := faultCall(func() { s.invoke(f, x, pos, seq) })
						calls++
						switch {
						case faulted:
							where := "x: " + xg.where(addr, n)
							if f.seq {
								where += "; pos: " + pg.where(addr, tokens)
							}
							t.Fatalf("guard: %s: memory fault at %#x (%s): %s", what(), addr, where, msg)
						case panicked:
							t.Fatalf("guard: %s: panicked: %s", what(), msg)
						}
						if c := xg.checkCanary(n); c != "" {
							t.Fatalf("guard: %s: x: %s", what(), c)
						}
						if f.seq {
							if c := pg.checkCanary(tokens); c != "" {
								t.Fatalf("guard: %s: pos: %s", what(), c)
							}
						}
						if i := s.firstDiff(x, want); i >= 0 {
							t.Fatalf("guard: %s: index %d of head %d is %s, but %s on ordinary memory (input %s)",
								what(), i%s.hd, i/s.hd, s.c.show(x[i]), s.c.show(want[i]), s.c.show(in[i]))
						}
						xg.reset(n)
						if f.seq {
							pg.reset(tokens)
						}
					}
				}
			}
		}
	}
	t.Logf("guard: %d calls on slices flush against PROT_NONE pages (%d backends × both ends × 1…%d heads × %d forms, Seq forms with 1…%d tokens; seed %d): no fault, canary intact, same bits as on ordinary memory",
		calls, len(backends), guardMaxHeads, len(forms), guardMaxTokens, sd)
}
