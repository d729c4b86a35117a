package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// expectRE matches the part of a panic message that says what was expected.
var expectRE = regexp.MustCompile(`(?i)(want|must|expect|should|out of range|not a multiple|negative|invalid|>=|<=|≥|≤|<|>)`)

// panicWant is what the panic of a bad call must say (docs/contract.md §7):
// every check verify makes of a panic message is one of these.
type panicWant struct {
	// fn is the function, named as a whole word ("Apply" does not match
	// "ApplySeq"; "Table.ApplyStrided" matches "rope.Table.ApplyStrided:").
	fn string
	// fields are arguments or fields the message names, each as a whole
	// word ("s.Head", "pos[1]", "qs").
	fields []string
	// words are pieces of text the message holds as written ("slots[2] = 6",
	// "overlap").
	words []string
	// values holds the bad value: the message contains one of them as a
	// number (−5 does not match 15, 4103 does not match 41030).
	values []int
	// numbers are numbers the message holds, each (a range's bounds).
	numbers []int
	// expect: the message also says what was expected (expectRE).
	expect bool
}

// mismatch returns "" when msg says everything w asks, else what it lacks,
// as the end of a sentence ("does not name s.Head").
func (w panicWant) mismatch(msg string) string {
	if w.fn != "" && !wordRE(w.fn).MatchString(msg) {
		return "does not name " + w.fn
	}
	var missing []string
	for _, f := range w.fields {
		if !wordRE(f).MatchString(msg) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return "does not name " + strings.Join(missing, " and ")
	}
	for _, word := range w.words {
		if !strings.Contains(msg, word) {
			return fmt.Sprintf("does not say %q", word)
		}
	}
	if len(w.values) > 0 && !slices.ContainsFunc(w.values, func(v int) bool { return numRE(v).MatchString(msg) }) {
		return fmt.Sprintf("does not contain the bad value (%s)", intsOr(w.values))
	}
	for _, v := range w.numbers {
		if !numRE(v).MatchString(msg) {
			return fmt.Sprintf("does not contain %d", v)
		}
	}
	if w.expect && !expectRE.MatchString(msg) {
		return "does not say what was expected"
	}
	return ""
}

// edgeCall is a call at an edge of an entry point's input: bad input (want
// set), which must panic before it writes anything with a message as want
// describes, or a valid call (want nil), which must not panic.
type edgeCall struct {
	c *call
	// what names the input in messages ("s.Heads = 0").
	what string
	want *panicWant
	// same: the valid call must leave every slice as it was (no positions:
	// nothing to do).
	same bool
	// why says, for a valid call, why it must not panic ("empty input must
	// be a no-op").
	why string
}

// bad is an edgeCall of bad input.
func bad(c *call, what string, want panicWant) edgeCall {
	return edgeCall{c: c, what: what, want: &want}
}

// valid is an edgeCall of valid input, which must not panic, for the
// reason why; with same it must also leave every slice as it was.
func valid(c *call, why string, same bool) edgeCall {
	return edgeCall{c: c, what: c.what, same: same, why: why}
}

// check makes e on ordinary memory and returns "" or what went wrong.
func (e edgeCall) check() string {
	e.c.fresh()
	msg, panicked := catch(e.c.run)
	if e.want == nil {
		if panicked {
			return fmt.Sprintf("%s panicked (%q); %s", e.what, msg, e.why)
		}
		if e.same {
			if d := e.c.unchanged(); d != "" {
				return fmt.Sprintf("%s: %s; %s", e.what, d, e.why)
			}
		}
		return ""
	}
	name := e.want.fn
	if name == "" {
		name = e.c.what
	}
	if e.what != "" {
		name += " with " + e.what
	}
	if !panicked {
		return name + " did not panic"
	}
	if m := e.want.mismatch(msg); m != "" {
		return fmt.Sprintf("%s panicked with %q, which %s", name, msg, m)
	}
	if d := e.c.unchanged(); d != "" {
		return fmt.Sprintf("%s panicked (%q) after writing: %s", name, msg, d)
	}
	return ""
}

// checkEdges makes the edge calls of every entry point of eps on every
// backend of bs: each bad one must panic with the message its want
// describes and leave every slice it was given as it was (the entry
// points panic before writing anything), each valid one must not panic.
// The calls' slices hold special values (NaNs with payloads among them), so
// that a value written and put back through a float register shows. It
// reports every failure of the first backend that has one. bs[0] is active
// again when it returns.
func checkEdges(t tb, bs []Backend, eps ...entryPoint) {
	t.Helper()
	defer bs[0].Use()
	bad, good := 0, 0
	for _, b := range bs {
		b.Use()
		failed := false
		for _, ep := range eps {
			for _, e := range ep.edges() {
				if e.want != nil {
					bad++
				} else {
					good++
				}
				if d := e.check(); d != "" {
					t.Errorf("backend %s: %s", b.Name, d)
					failed = true
				}
			}
		}
		if failed {
			return
		}
	}
	t.Logf("%d bad calls panicked naming the function, the argument and the value, with nothing written; %d valid edge cases did not panic (%d backends)", bad, good, len(bs))
}

// catch runs f and returns its panic message, if any.
func catch(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprint(r), true
		}
	}()
	f()
	return "", false
}

// wordRE matches w as a whole word.
func wordRE(w string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(w) + `([^A-Za-z0-9_]|$)`)
}

// numRE matches v as a whole number.
func numRE(v int) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(strconv.Itoa(v)) + `([^0-9]|$)`)
}

// intsOr formats values as "a or b or c".
func intsOr(values []int) string {
	var ss []string
	for _, v := range values {
		ss = append(ss, fmt.Sprint(v))
	}
	return strings.Join(ss, " or ")
}
