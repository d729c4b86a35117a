// Package arm64 is the NEON implementation of the vector layer (asm/vec):
// Go assembler text written from Go, Go's mnemonics where its assembler has
// the instruction and asm/neon's encoder (a WORD with the GNU text beside
// it) where it does not (the vector float arithmetic and conversions).
//
// V registers are virtual until a function is written out (regs.go); the
// general registers a value of a block, a loop body or the function takes
// are free again when it ends. A block is one register of values (4
// float32, 2 float64) or a narrower tail; a pairs block is two members, the
// pairs' first and second values: LD2/ST2 for interleaved pairs, whole
// registers deinterleaved (UZP1/UZP2, ZIP1) for their tails, the two halves
// of the rotary values for neox. Memory is walked with post-indexed loads
// and stores through cursors, one per run of an array a head reads or writes
// in order. Runs of more than unrollMax values loop over chunks of
// loopBlocks registers. The first blocks of a shared table row stay in
// registers across heads, as many as fit.
package arm64

import (
	"fmt"
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

const (
	unrollMax  = 256 // values written out; longer runs loop
	loopBlocks = 8   // registers a chunk loop iteration takes
	maxPreload = 16  // registers a preloaded row may take, with the constants
	nosplit    = 256 // the largest frame of a NOSPLIT function
)

// Target emits NEON kernels.
type Target struct {
	f      *vec.Func
	lines  []line
	groups [][]vr
	nv     int
	mark   int // where hoisted lines go; −1 before the first loop
	labels int
	frame  int            // bytes of locals
	args   map[string]int // frame offsets
	gfree  map[string]bool
	scopes [][]string // the general registers each open scope owns
	consts map[string]vr
	// q8_0 blocks' constants: the open levels, their registers, the
	// general registers holding their values.
	local     []map[uint32]vr
	localRegs map[vr]bool
	gconsts   map[uint32]string
	gused     map[string]bool // the general registers used so far
	walks     []*walkScope    // the open walk scopes
	scaled    map[string]bool // stride registers turned into bytes
	pre       map[int]table   // a preloaded row's blocks
	err       error
}

// gprs are the general registers the kernels may use: not R18 (the
// platform's), R26 (closure context), R27 (the assembler's), R28 (g).
var gprs = func() []string {
	var r []string
	for i := range 26 {
		if i != 18 {
			r = append(r, fmt.Sprintf("R%d", i))
		}
	}
	return r
}()

// New returns a target.
func New() *Target { return &Target{} }

// Level is "neon".
func (t *Target) Level() string { return "neon" }

// op writes an instruction without V registers.
func (t *Target) op(format string, a ...any) {
	t.lines = append(t.lines, line{text: "\t" + fmt.Sprintf(format, a...)})
}

func (t *Target) label(p string) string {
	t.labels++
	return fmt.Sprintf("%s%d", p, t.labels)
}

// Func emits f and returns its lines.
func (t *Target) Func(f *vec.Func, body func()) {
	t.f, t.mark, t.labels, t.frame, t.nv, t.groups = f, -1, 0, 0, 0, nil
	t.args, _ = f.Frame()
	t.gfree = map[string]bool{}
	for _, r := range gprs {
		t.gfree[r] = true
	}
	t.scopes, t.walks = [][]string{nil}, nil
	t.walkScope(-1)
	t.consts, t.scaled, t.pre = map[string]vr{}, map[string]bool{}, nil
	t.local, t.localRegs, t.gconsts, t.gused = nil, map[vr]bool{}, map[uint32]string{}, map[string]bool{}
	from := len(t.lines)
	body()
	t.lab("done")
	t.op("RET")
	_, args := f.Frame()
	attr := ""
	if t.frame <= nosplit {
		attr = "NOSPLIT, "
	}
	text := append([]string{"", "// func " + f.Name() + strings.TrimPrefix(f.Signature(), "func"),
		fmt.Sprintf("TEXT ·%s(SB), %s$%d-%d", f.Name(), attr, t.frame, args)}, t.allocate(from)...)
	t.lines = append(t.lines[:from], line{text: strings.Join(text, "\n")})
}

// hoist writes what emit writes at the function's mark, before its first
// loop, its general registers the function's.
func (t *Target) hoist(emit func()) {
	scopes := t.scopes
	t.scopes = [][]string{nil}
	n := len(t.lines)
	emit()
	scopes[0] = append(scopes[0], t.scopes[0]...)
	t.scopes = scopes
	if t.mark < 0 {
		return
	}
	moved := append([]line(nil), t.lines[n:]...)
	rest := append(moved, t.lines[t.mark:n]...)
	t.lines = append(t.lines[:t.mark], rest...)
	for _, w := range t.walks {
		if w.mark >= t.mark {
			w.mark += len(moved)
		}
	}
	t.mark += len(moved)
}

func (t *Target) startLoop() {
	if t.mark < 0 {
		t.mark = len(t.lines)
	}
}

// greg is a free general register, the current scope's; gregIn one of
// scope i.
func (t *Target) greg() string { return t.gregIn(len(t.scopes) - 1) }

func (t *Target) gregIn(i int) string {
	for _, r := range gprs {
		if t.gfree[r] {
			t.gfree[r] = false
			t.gused[r] = true
			t.scopes[i] = append(t.scopes[i], r)
			return r
		}
	}
	panic(fmt.Sprintf("arm64: %s: out of general registers", t.f.Name()))
}

// gregUnused is a general register the function has not used so far,
// the function's to its end (one set before the loops: hoist), or false.
func (t *Target) gregUnused() (string, bool) {
	for _, r := range gprs {
		if t.gfree[r] && !t.gused[r] {
			t.gfree[r], t.gused[r] = false, true
			t.scopes[0] = append(t.scopes[0], r)
			return r, true
		}
	}
	return "", false
}

// walkScope opens a walk scope whose cursors are set at mark (−1: where
// first used), their registers the current scope's.
func (t *Target) walkScope(mark int) *walkScope {
	w := &walkScope{cs: map[cursorKey]*cursor{}, mark: mark, owner: len(t.scopes) - 1}
	t.walks = append(t.walks, w)
	return w
}

// scope runs body in a scope of its own: the general registers it takes
// are free after it.
func (t *Target) scope(body func()) {
	t.scopes = append(t.scopes, nil)
	body()
	for _, r := range t.scopes[len(t.scopes)-1] {
		t.gfree[r] = true
	}
	t.scopes = t.scopes[:len(t.scopes)-1]
}

// ---- arguments, pointers, loops ---------------------------------------------------------

// ptr is a pointer in a general register.
type ptr struct{ r string }

// arg is the frame operand of the argument name (a slice's base).
func (t *Target) arg(name string) string {
	for _, p := range t.f.Params() {
		if p.Name == name && strings.HasPrefix(p.Type, "[]") {
			return fmt.Sprintf("%s_base+%d(FP)", name, t.args[name])
		}
	}
	return fmt.Sprintf("%s+%d(FP)", name, t.args[name])
}

func (t *Target) Ptr(name string, e vec.Elem) vec.Arr {
	r := t.greg()
	t.op("MOVD %s, %s", t.arg(name), r)
	return vec.Arr{Name: name, Elem: e, P: &ptr{r}}
}

// Int is the int argument name in a register; Imm a constant.
func (t *Target) Int(name string) vec.Int {
	r := t.greg()
	t.op("MOVD %s, %s", t.arg(name), r)
	return r
}

type imm int

func (t *Target) Imm(k int) vec.Int { return imm(k) }

func (t *Target) MulInt(a vec.Int, k int) vec.Int {
	d := t.greg()
	t.op("MOVD $%d, %s", k, d)
	t.op("MUL %s, %s, %s", a, d, d)
	return d
}

// Copy is a new pointer at a.
func (t *Target) Copy(a vec.Arr) vec.Arr {
	r := t.greg()
	t.op("ADD $%d, %s, %s", a.Off*a.Elem.Size, a.P.(*ptr).r, r)
	a.P, a.Off = &ptr{r}, 0
	return a
}

// Local is n values of e on the stack.
func (t *Target) Local(n int, e vec.Elem) vec.Arr {
	t.frame += n * e.Size
	r := t.greg()
	t.op("MOVD $scratch-%d(SP), %s", t.frame, r)
	return vec.Arr{Name: "scratch", Elem: e, P: &ptr{r}}
}

// step is a walk's step in bytes: a stride register turned into bytes once,
// before the loops, or a constant.
func (t *Target) step(w vec.Walk) string {
	if w.Stride == nil {
		return fmt.Sprintf("$%d", w.Step*w.A.Elem.Size)
	}
	r := w.Stride.(string)
	if sh := map[int]int{2: 1, 4: 2, 8: 3}[w.A.Elem.Size]; sh > 0 && !t.scaled[r] {
		t.scaled[r] = true
		t.hoist(func() { t.op("LSL $%d, %s", sh, r) })
	}
	return r
}

// loop emits for ; n > 0; n-- { body; walks } around a walk scope (n
// known to be positive when tested).
func (t *Target) loop(n vec.Int, walks []vec.Walk, top string, tested bool, body func()) {
	t.startLoop()
	steps := make([]string, len(walks))
	for i, w := range walks {
		steps[i] = t.step(w)
	}
	var cnt, end string
	switch k := n.(type) {
	case imm:
		cnt = t.greg()
		t.op("MOVD $%d, %s", int(k), cnt)
	case string:
		cnt = k
		if !tested {
			end = t.label("end")
			t.op("CBZ %s, %s", cnt, end)
		}
	}
	t.lab(top)
	t.scope(func() {
		t.walkScope(-1)
		body()
		t.walks = t.walks[:len(t.walks)-1]
	})
	for i, w := range walks {
		t.op("ADD %s, %s", steps[i], w.A.P.(*ptr).r)
	}
	t.op("SUBS $1, %s", cnt)
	t.br("BNE", top)
	if end != "" {
		t.lab(end)
	}
}

func (t *Target) Loop(n vec.Int, walks []vec.Walk, body func(vec.Head)) {
	t.loop(n, walks, t.label("loop"), false, func() { body(&head{t}) })
}

// Heads runs body over the n heads, a shared row's blocks in registers
// when they fit.
func (t *Target) Heads(n vec.Int, walks []vec.Walk, row *vec.Arr, body func(vec.Head)) {
	t.op("CBZ %s, done", n)
	t.startLoop()
	if row != nil {
		t.preload(*row)
	}
	t.loop(n, walks, "head", true, func() { body(&head{t}) })
}
