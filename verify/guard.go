package verify

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"unsafe"
)

// ---- memory flush against inaccessible pages -----------------------------------

// plain is what guarded memory may hold: types without pointers, since the
// garbage collector does not scan memory it did not allocate.
type plain interface {
	Elem | ~int32 | ~int64 | ~uint8
}

// guarded is memory mapped between two PROT_NONE pages. The slices it gives
// lie flush against one of them: at the end of the accessible bytes (so
// reading or writing one byte past the slice faults) or at their start (one
// byte before it faults). The rest of the accessible bytes, at least a page
// on the inner side of every slice, hold a canary pattern that checkCanary
// compares byte for byte.
type guarded struct {
	mem     []byte // the whole mapping, guard pages included
	acc     []byte // the accessible bytes
	pattern []byte // the canary: what acc holds outside the slice in use
	atEnd   bool
	n       int // bytes of the slice in use
}

// mustGuarded is newGuarded, failing t if the memory cannot be mapped.
func mustGuarded(t tb, size int, atEnd bool) *guarded {
	t.Helper()
	g, err := newGuarded(size, atEnd)
	if err != nil {
		t.Fatalf("guard: %v", err)
	}
	return g
}

// newGuarded maps room for size bytes (and a page of canary) between two
// PROT_NONE pages; slices of it end at the page after them (atEnd) or start
// at the page before them. Call free when done.
func newGuarded(size int, atEnd bool) (*guarded, error) {
	mem, page, err := mapGuarded(size + os.Getpagesize())
	if err != nil {
		return nil, err
	}
	acc := mem[page : len(mem)-page]
	g := &guarded{mem: mem, acc: acc, pattern: make([]byte, len(acc)), atEnd: atEnd}
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
func (g *guarded) free() { unmapGuarded(g.mem) }

// room is the most bytes a slice of g may take.
func (g *guarded) room() int { return len(g.acc) - os.Getpagesize() }

// span returns the byte range [lo, hi) of acc that a slice of n bytes
// covers.
func (g *guarded) span(n int) (lo, hi int) {
	if g.atEnd {
		return len(g.acc) - n, len(g.acc)
	}
	return 0, n
}

// guardSlice returns n values of E flush against g's guard page (capacity n
// too), and makes them the slice in use. For n = 0 Go points the empty
// slice at the start of the array instead.
func guardSlice[E plain](g *guarded, n int) []E {
	size := sizeOfPlain[E]()
	if n*size > g.room() {
		panic(fmt.Sprintf("verify: guarded memory of %d bytes asked for %d", g.room(), n*size))
	}
	g.n = n * size
	vals := unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(g.acc))), len(g.acc)/size)
	if g.atEnd {
		m := len(vals)
		return vals[m-n : m : m]
	}
	return vals[0:n:n]
}

// reset puts the canary back over the slice in use.
func (g *guarded) reset() {
	lo, hi := g.span(g.n)
	copy(g.acc[lo:hi], g.pattern[lo:hi])
}

// checkCanary reports a change of the canary around the slice in use (a
// value written outside the slice), as "" when there is none.
func (g *guarded) checkCanary() string {
	lo, hi := g.span(g.n)
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

// where describes a faulting address relative to the slice in use.
func (g *guarded) where(addr uintptr) string {
	lo, hi := g.span(g.n)
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

// inMapping reports whether addr lies in g's mapping (guard pages included).
func (g *guarded) inMapping(addr uintptr) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(g.mem)))
	return addr >= lo && addr < lo+uintptr(len(g.mem))
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

// ---- the guard driver ----------------------------------------------------------

// guardPool is the guarded memory of one side (atEnd) for a driver's
// calls: one mapping per arg label, grown when a call needs more.
type guardPool struct {
	t     tb
	atEnd bool
	mem   map[string]*guarded
}

// get returns the guarded memory for args labelled name, of at least size
// bytes and not much more: checkCanary compares all the rest, so memory
// kept from a far larger call would cost every later call its size.
func (p *guardPool) get(name string, size int) *guarded {
	if g := p.mem[name]; g != nil && g.room() >= size && g.room() <= 2*size+16*os.Getpagesize() {
		return g
	} else if g != nil {
		g.free()
	}
	g := mustGuarded(p.t, size, p.atEnd)
	p.mem[name] = g
	return g
}

func (p *guardPool) free() {
	for _, g := range p.mem {
		g.free()
	}
}

// run makes c on ordinary memory, then with every slice flush against a
// guard page, and returns "" or what went wrong: a fault (a read or write
// past either end of a slice), a panic, a changed canary, or a result
// other than on ordinary memory.
func (p *guardPool) run(c *call) string {
	seen := map[string]bool{}
	for _, a := range c.args {
		if seen[a.label()] {
			panic("verify: two args of one call are labelled " + a.label())
		}
		seen[a.label()] = true
	}
	c.fresh()
	if msg, panicked := catch(c.run); panicked {
		return "panicked on ordinary memory: " + msg
	}
	for _, a := range c.args {
		a.keep()
	}
	for _, a := range c.args {
		a.place(p.get(a.label(), a.size()))
	}
	defer func() {
		for _, a := range c.args {
			a.guard().reset()
		}
	}()
	addr, faulted, msg, panicked := faultCall(c.run)
	switch {
	case faulted:
		var where []string
		for _, a := range c.args {
			if g := a.guard(); g.inMapping(addr) && !a.isNil() {
				where = append(where, a.label()+": "+g.where(addr))
			}
		}
		return fmt.Sprintf("memory fault at %#x (%s): %s", addr, strings.Join(where, "; "), msg)
	case panicked:
		return "panicked: " + msg
	}
	for _, a := range c.args {
		if d := a.guard().checkCanary(); d != "" {
			return a.label() + ": " + d
		}
	}
	for _, a := range c.args {
		if a.mode() == reads {
			if d := a.unchanged(); d != "" {
				return d
			}
		}
		if d := a.matches(); d != "" {
			return d
		}
	}
	return ""
}

// checkGuarded makes the calls of every entry point of eps (their guard
// calls, drawn anew for each backend and side) on every backend of bs with
// each slice flush against a PROT_NONE page, once with the page right
// after every slice and once right before it. A read or write past either
// end of a slice faults, which fails the check naming the call and where
// the access fell; the canary around each slice, on its inner side, must
// come back unchanged bit for bit, a slice the call only reads unchanged
// too, and every result must be the same call's bits on ordinary memory.
// Table rows are allocated by the package and are not guarded here. bs[0]
// is active again when it returns.
func checkGuarded(t tb, bs []Backend, salt uint64, eps ...entryPoint) {
	t.Helper()
	if !guardSupported {
		t.Skipf("SKIPPED: guard pages (mmap, mprotect PROT_NONE) are only implemented on linux, not %s", runtime.GOOS)
	}
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, salt))
	n := 0
	var names []string
	for _, ep := range eps {
		names = append(names, ep.name)
	}
	for _, atEnd := range []bool{true, false} {
		pool := &guardPool{t: t, atEnd: atEnd, mem: map[string]*guarded{}}
		for _, b := range bs {
			b.Use()
			for _, ep := range eps {
				for _, c := range ep.guard(r) {
					n++
					if d := pool.run(c); d != "" {
						pool.free()
						t.Fatalf("guard: backend %s: %s, on slices %s: %s (seed %d)", b.Name, c.what, guardSide(atEnd), d, sd)
					}
				}
			}
		}
		pool.free()
	}
	t.Logf("guard: %d calls of %s on slices flush against PROT_NONE pages (%d backends × both ends; seed %d): no fault, canaries intact, same bits as on ordinary memory",
		n, strings.Join(names, ", "), len(bs), sd)
}
