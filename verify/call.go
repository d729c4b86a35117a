package verify

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// A call is one call of an entry point, described once for every driver:
// the slices it takes (args), each with the values it holds before the
// call, and how to make the call on them (run). The guard driver
// (checkGuarded) places every slice flush against a guard page, the edge
// driver (checkEdges) makes bad calls that must panic before writing
// anything, and the benchmark driver (benchGroup) times calls and sets
// them against the stream baseline of their bytes. Each entry point's
// description (entryPoint) builds its calls from one constructor, so that
// the buffers, the call and its checks are written once.

// access is what a call does with one of its slices.
type access int

const (
	reads   access = iota // only reads it: it must come back as it was
	writes                // writes it without reading what it held (a cache it stores into)
	inPlace               // reads it and writes its result over it
)

// arg is one slice argument of a call: the values it holds before the
// call and the slice the call is made on, which a driver puts on ordinary
// memory or against a guard page.
type arg interface {
	// label names the slice in messages ("x", "the key cache").
	label() string
	// size is the slice's length in bytes.
	size() int
	// elemSize is the bytes of one element.
	elemSize() int
	// mode is what the call does with the slice.
	mode() access
	// counted is the bytes a benchmark counts for the slice (SetBytes, the
	// stream baseline): by default all of them for the values a call
	// rotates, stores or loads, none for positions, slots and weights.
	counted() int64
	// fresh gives the call a copy of the input on ordinary memory.
	fresh()
	// restore copies the input over the slice the call has, in place.
	restore()
	// keep records the slice as the result the guarded call must match.
	keep()
	// place gives the call the input copied flush against g's guard page.
	place(g *guarded)
	// guard is the guarded memory the slice lies in, nil on ordinary memory.
	guard() *guarded
	// unchanged returns "" if the slice holds the input's bits, else where
	// it differs.
	unchanged() string
	// matches returns "" if the slice holds the kept result's bits, else
	// where it differs.
	matches() string
	// isNil reports whether the call gets a nil slice.
	isNil() bool
	// data is the memory of the slice the call has.
	data() []byte
}

// buf is an arg of element type E.
type buf[E plain] struct {
	name  string
	in    []E // the values before the call; nil passes nil
	cur   []E // the slice the call is made on
	want  []E // the result kept
	acc   access
	count int64 // bytes a benchmark counts
	g     *guarded
	// show describes element i of the slice for messages ("head 2, index 5");
	// nil: its index alone.
	show func(i int) string
}

// newBuf is an arg named name holding in, of which a benchmark counts every
// byte.
func newBuf[E plain](name string, in []E, acc access) *buf[E] {
	return &buf[E]{name: name, in: in, acc: acc, count: int64(len(in)) * int64(sizeOfPlain[E]())}
}

// newIndex is an arg of positions, slots, deltas or weights: read only and
// not counted by benchmarks.
func newIndex[E plain](name string, in []E) *buf[E] {
	return &buf[E]{name: name, in: in, acc: reads}
}

// counting sets the bytes a benchmark counts for b.
func (b *buf[E]) counting(n int64) *buf[E] { b.count = n; return b }

// describing sets how messages describe b's elements.
func (b *buf[E]) describing(show func(i int) string) *buf[E] { b.show = show; return b }

func (b *buf[E]) label() string   { return b.name }
func (b *buf[E]) size() int       { return len(b.in) * sizeOfPlain[E]() }
func (b *buf[E]) elemSize() int   { return sizeOfPlain[E]() }
func (b *buf[E]) mode() access    { return b.acc }
func (b *buf[E]) counted() int64  { return b.count }
func (b *buf[E]) guard() *guarded { return b.g }
func (b *buf[E]) isNil() bool     { return b.in == nil }
func (b *buf[E]) data() []byte    { return bytesOf(b.cur) }

func (b *buf[E]) fresh() {
	b.g = nil
	b.cur = slices.Clone(b.in)
}

func (b *buf[E]) restore() { copy(b.cur, b.in) }

func (b *buf[E]) keep() { b.want = slices.Clone(b.cur) }

func (b *buf[E]) place(g *guarded) {
	b.g = g
	if b.in == nil {
		b.cur, g.n = nil, 0
		return
	}
	b.cur = guardSlice[E](g, len(b.in))
	copy(b.cur, b.in)
}

func (b *buf[E]) unchanged() string {
	if i := firstDiffBytes(b.cur, b.in); i >= 0 {
		return fmt.Sprintf("%s changed: %s: %s -> %s", b.name, b.where(i), showPlain(b.in[i]), showPlain(b.cur[i]))
	}
	return ""
}

func (b *buf[E]) matches() string {
	if i := firstDiffBytes(b.cur, b.want); i >= 0 {
		return fmt.Sprintf("%s: %s is %s, but %s on ordinary memory (input %s)", b.name, b.where(i), showPlain(b.cur[i]), showPlain(b.want[i]), showPlain(b.in[i]))
	}
	return ""
}

// where describes element i of b.
func (b *buf[E]) where(i int) string {
	if b.show != nil {
		return fmt.Sprintf("element %d (%s)", i, b.show(i))
	}
	return fmt.Sprintf("element %d", i)
}

// firstDiffBytes returns the first element of a whose bits differ from
// b's, or -1; a slice of another length differs at the shorter's end.
func firstDiffBytes[E plain](a, b []E) int {
	size := sizeOfPlain[E]()
	ab, bb := bytesOf(a), bytesOf(b)
	if bytes.Equal(ab, bb) {
		return -1
	}
	n := min(len(ab), len(bb))
	for i := 0; i < n; i += size {
		if !bytes.Equal(ab[i:i+size], bb[i:i+size]) {
			return i / size
		}
	}
	return n / size
}

// bytesOf is the memory of x as bytes.
func bytesOf[E plain](x []E) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*sizeOfPlain[E]())
}

// sizeOfPlain is unsafe.Sizeof for a plain type parameter.
func sizeOfPlain[E plain]() int {
	var z E
	return int(unsafe.Sizeof(z))
}

// showPlain formats a value and its bits.
func showPlain[E plain](v E) string {
	var u uint64
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return fmt.Sprintf("%v (%#0*x)", v, 2*len(b), u)
}

// call is one call of an entry point on its args.
type call struct {
	// what describes the call in messages: the entry point, its views,
	// positions and slots.
	what string
	args []arg
	// run makes the call on the args' current slices.
	run func()
}

// fresh gives every arg of c a copy of its input on ordinary memory.
func (c *call) fresh() {
	for _, a := range c.args {
		a.fresh()
	}
}

// unchanged returns "" if every arg of c holds its input, else the first
// that does not and where.
func (c *call) unchanged() string {
	for _, a := range c.args {
		if d := a.unchanged(); d != "" {
			return d
		}
	}
	return ""
}

// bytesMoved returns the bytes a benchmark counts for c: those of the args
// it changes in place, those it only reads and those it only writes.
func (c *call) bytesMoved() (inPlaceBytes, read, written int64) {
	for _, a := range c.args {
		switch a.mode() {
		case inPlace:
			inPlaceBytes += a.counted()
		case reads:
			read += a.counted()
		case writes:
			written += a.counted()
		}
	}
	return inPlaceBytes, read, written
}

// entryPoint describes one entry point of a package (or a family of them
// that share their arguments' shapes, such as Apply and ApplyInverse) to
// the three drivers: the calls checkGuarded places on guard pages, each
// slice exactly as long as its views need; the calls checkEdges makes with
// bad input, each with the panic it must raise, and with valid edge cases;
// and the benchmark groups Bench times (benchGroup), their inputs drawn
// from r. Every call comes from the entry point's one constructor (such as
// entryCall or stridedCall), which says once which slices it takes and how
// to call it.
type entryPoint struct {
	name  string
	guard func(r *rand.Rand) []*call
	edges func() []edgeCall
	bench func(r *rand.Rand) []benchGroup
}
