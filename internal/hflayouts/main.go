// Command hflayouts derives ropegen's table of Hugging Face model types
// (spec/hf_layouts.go) from the source of transformers: for every model
// type whose text attention applies a rotary embedding, which two values of
// a head it rotates together, and the fraction of the head its config class
// rotates by default. It reads a checkout and writes Go source; nothing of
// transformers is copied into the output but names and the facts derived.
//
// Usage:
//
//	go run ./internal/hflayouts -src PATH/src/transformers/models -commit SHA -repo OWNER/NAME -o spec/hf_layouts.go
//
// How a model type is decided (see classify): in each models/<dir>, the
// configuration file's classes give the model types (a class body's
// `model_type = "..."`); vision, audio and speech sub-configs are left
// out. The modeling file's attention classes (a class whose name ends in
// Attention that is not a vision, audio or speech one) call
// an apply function (apply_rotary_pos_emb, apply_multimodal_rotary_pos_emb,
// apply_rotary_emb, …); that function, with the helpers it calls, either
// slices the head into even and odd values (x[..., 0::2], x[..., 1::2]),
// views it as complex numbers or calls rotate_every_two: pairs (2i, 2i+1),
// "interleaved"; or splits it in halves (x[..., : x.shape[-1] // 2],
// torch.chunk(x, 2)): pairs (i, i+R/2), "neox". A type whose attention
// classes use both must choose by config.rope_interleave (DeepSeek-V3 and
// the MLA models after it): the entry records both and the config class's
// default, and spec reads the key. Each entry cites the class,
// the apply function and the helper that decided it.
//
// It also inverts transformers' auto mappings (models/auto/modeling_auto.py:
// model type → model class) into hfArchitecturesGen, class → the model
// types of the table that map to it, so that spec can read a remote-code
// config (a model_type transformers lacks) as the type whose class its
// architectures names.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	src := flag.String("src", "", "transformers' src/transformers/models directory")
	commit := flag.String("commit", "", "the transformers commit the checkout is at (recorded in the output)")
	repo := flag.String("repo", "huggingface/transformers", "the repository the checkout came from (recorded in the output)")
	out := flag.String("o", "", "output Go file (default: standard output)")
	flag.Parse()
	if *src == "" || *commit == "" {
		fmt.Fprintln(os.Stderr, "hflayouts: -src and -commit are required")
		os.Exit(2)
	}
	entries, err := scan(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hflayouts:", err)
		os.Exit(1)
	}
	archs, err := architectures(*src, entries)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hflayouts:", err)
		os.Exit(1)
	}
	data, err := render(entries, archs, *commit, *repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hflayouts:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(data)
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hflayouts:", err)
		os.Exit(1)
	}
}

// entry is one model type's row.
type entry struct {
	modelType string
	layouts   []string // "interleaved", "neox"; two when the attention picks by config
	cite      string
	choice    bool   // two layouts: config.rope_interleave picks (true: interleaved)
	choiceDef bool   // rope_interleave's default in the config class
	indexer   string // the pairing of a sparse-attention indexer (DeepSeek-V3.2's lightning indexer), if any
	indexCite string
	rotaryKey string  // "partial_rotary_factor", "rotary_pct" or "rotary_dim" when the class sets a default
	rotary    float64 // that default
	rotaryCit string
}

// scan reads every model directory under src.
func scan(src string) ([]entry, error) {
	dirs, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(src, d.Name())
		es, err := scanDir(dir, d.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].modelType < out[j].modelType })
	for i := 1; i < len(out); i++ {
		if out[i].modelType == out[i-1].modelType {
			return nil, fmt.Errorf("model type %q declared twice (%s; %s)", out[i].modelType, out[i-1].cite, out[i].cite)
		}
	}
	return out, nil
}

func readFile(path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

func scanDir(dir, name string) ([]entry, error) {
	modeling, ok, err := readFile(filepath.Join(dir, "modeling_"+name+".py"))
	if err != nil || !ok {
		return nil, err
	}
	config, ok, err := readFile(filepath.Join(dir, "configuration_"+name+".py"))
	if err != nil || !ok {
		return nil, err
	}
	mod := stripPython(modeling)
	layouts, cite := classify(mod, "modeling_"+name, attentionClass)
	if len(layouts) == 0 {
		return nil, nil
	}
	idx, idxCite := classify(mod, "modeling_"+name, indexerClass)
	if len(idx) > 1 {
		return nil, fmt.Errorf("%s: the indexer uses both pairings (%s)", name, idxCite)
	}
	// A default the rotary embedding itself falls back on (MiMo-V2-Flash's
	// rope_parameters.get("partial_rotary_factor", 0.334)).
	modKey, modRot, modOK := "", 0.0, false
	if m := modelingRotary.FindStringSubmatch(mod); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 && v < 1 {
			modKey, modRot, modOK = "partial_rotary_factor", v, true
		}
	}
	var out []entry
	for _, c := range configClasses(stripPython(config)) {
		if subConfig.MatchString(c.name) {
			continue
		}
		e := entry{modelType: c.modelType, layouts: layouts, cite: cite}
		if len(idx) == 1 {
			e.indexer, e.indexCite = idx[0], idxCite
		}
		if len(layouts) == 2 {
			if !strings.Contains(mod, "config.rope_interleave") {
				return nil, fmt.Errorf("%s: the attention uses both pairings and no config.rope_interleave picks (%s)", name, cite)
			}
			m := interleaveDefault.FindStringSubmatch(c.body)
			if m == nil {
				return nil, fmt.Errorf("%s: %s has no rope_interleave default", name, c.name)
			}
			e.choice, e.choiceDef = true, m[1] == "True"
		}
		if key, v, ok := rotaryDefault(c.body); ok {
			e.rotaryKey, e.rotary = key, v
			e.rotaryCit = "configuration_" + name + "." + c.name
		} else if modOK {
			e.rotaryKey, e.rotary = modKey, modRot
			e.rotaryCit = "modeling_" + name + " (rope_parameters.get default)"
		}
		out = append(out, e)
	}
	return out, nil
}

// subConfig matches config classes of a model's non-text towers.
var subConfig = regexp.MustCompile(`Vision|Visual|Audio|Speech|Vit|ViT|Image|Encoder|Projector|Aligner|Perceiver|Video|Talker|Token2Wav|Code2Wav|Whisper|Siglip|Sam|Depth`)

// stripPython removes comments and triple-quoted strings, keeping line
// structure, so that markers in docstrings do not count.
func stripPython(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], `"""`) || strings.HasPrefix(s[i:], `'''`):
			q := s[i : i+3]
			end := strings.Index(s[i+3:], q)
			if end < 0 {
				end = len(s) - i - 3
			}
			for _, r := range s[i : i+3+end] {
				if r == '\n' {
					b.WriteByte('\n')
				}
			}
			i += 3 + end + 3
		case s[i] == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case s[i] == '"' || s[i] == '\'':
			q := s[i]
			j := i + 1
			for j < len(s) && s[j] != q && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(s) {
				j++
			}
			b.WriteString(s[i:min(j, len(s))])
			i = j
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// block is a top-level def or class with its body.
type block struct {
	kind, name, body string
}

var topLevel = regexp.MustCompile(`(?m)^(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// blocks splits Python source into its top-level defs and classes.
func blocks(src string) []block {
	idx := topLevel.FindAllStringSubmatchIndex(src, -1)
	var out []block
	for k, m := range idx {
		end := len(src)
		if k+1 < len(idx) {
			end = idx[k+1][0]
		}
		// Stop at the next unindented statement (an assignment, a decorator).
		body := src[m[0]:end]
		lines := strings.Split(body, "\n")
		for i := 1; i < len(lines); i++ {
			l := lines[i]
			if l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != ')' && l[0] != ']' {
				body = strings.Join(lines[:i], "\n")
				break
			}
		}
		out = append(out, block{kind: src[m[2]:m[3]], name: src[m[4]:m[5]], body: body})
	}
	return out
}

// The markers of the two pairings, on the head's own values.
var (
	markInterleaved = []*regexp.Regexp{
		regexp.MustCompile(`\[\s*\.\.\.\s*,\s*0?::2\s*\]`),
		regexp.MustCompile(`\[\s*\.\.\.\s*,\s*1::2\s*\]`),
		regexp.MustCompile(`view_as_complex`),
		regexp.MustCompile(`\brotate_every_two\b`),
	}
	markNeoX = []*regexp.Regexp{
		regexp.MustCompile(`\[\s*\.\.\.\s*,\s*:\s*x\.shape\[-1\]\s*//\s*2\s*\]`),
		regexp.MustCompile(`torch\.chunk\(\s*x\s*,\s*2`),
		regexp.MustCompile(`\bx\.chunk\(\s*2`),
	}
	callRe = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
)

// pairing returns the layout a function's body (with the helpers it calls)
// gives, and the helper whose body showed it.
func pairing(fn string, funcs map[string]string, seen map[string]bool) (string, string) {
	if seen[fn] {
		return "", ""
	}
	seen[fn] = true
	body, ok := funcs[fn]
	if !ok {
		return "", ""
	}
	for _, m := range markInterleaved {
		if m.MatchString(body) {
			return "interleaved", fn + ": " + strings.TrimSpace(m.FindString(body))
		}
	}
	for _, m := range markNeoX {
		if m.MatchString(body) {
			return "neox", fn + ": " + strings.TrimSpace(m.FindString(body))
		}
	}
	for _, c := range callRe.FindAllStringSubmatch(body, -1) {
		if c[1] == fn {
			continue
		}
		if l, why := pairing(c[1], funcs, seen); l != "" {
			return l, fn + " → " + why
		}
	}
	return "", ""
}

var (
	attentionClass    = regexp.MustCompile(`Attention$`)
	indexerClass      = regexp.MustCompile(`Indexer$`)
	interleaveDefault = regexp.MustCompile(`(?m)^\s+rope_interleave\s*:\s*[A-Za-z |]+=\s*(True|False)\s*$`)
	modelingRotary    = regexp.MustCompile(`get\(\s*"partial_rotary_factor"\s*,\s*([0-9.]+)\s*\)`)
	notTextTower      = regexp.MustCompile(`Vision|Visual|Audio|Speech|Vit|ViT|Image|Patch|Encoder|Cross|Perceiver|Video|Talker|Token2Wav|Code2Wav|Whisper|Siglip|Sam|Depth|Conformer`)
	applyRe           = regexp.MustCompile(`\b(apply_[A-Za-z0-9_]*(?:rot|rope)[A-Za-z0-9_]*|_apply_rotary_emb)\s*\(`)
)

// classify returns the layouts the text attention of a modeling file uses
// and a citation; none when it applies no rotary embedding.
func classify(src, file string, want *regexp.Regexp) ([]string, string) {
	funcs := map[string]string{}
	var classes []block
	for _, b := range blocks(src) {
		if b.kind == "def" {
			funcs[b.name] = b.body
		} else {
			classes = append(classes, b)
		}
	}
	found := map[string]string{}
	for _, c := range classes {
		if !want.MatchString(c.name) || notTextTower.MatchString(c.name) {
			continue
		}
		for _, m := range applyRe.FindAllStringSubmatch(c.body, -1) {
			l, why := pairing(m[1], funcs, map[string]bool{})
			if l == "" {
				continue
			}
			if _, ok := found[l]; !ok {
				found[l] = file + "." + c.name + " → " + why
			}
		}
	}
	var layouts, cites []string
	for _, l := range []string{"interleaved", "neox"} {
		if c, ok := found[l]; ok {
			layouts = append(layouts, l)
			cites = append(cites, c)
		}
	}
	return layouts, strings.Join(cites, "; ")
}

// configClass is a config class with its model type.
type configClass struct {
	name, modelType, body string
}

var modelTypeRe = regexp.MustCompile(`(?m)^\s+model_type\s*=\s*"([^"]+)"`)

func configClasses(src string) []configClass {
	var out []configClass
	for _, b := range blocks(src) {
		if b.kind != "class" {
			continue
		}
		if m := modelTypeRe.FindStringSubmatch(b.body); m != nil {
			out = append(out, configClass{name: b.name, modelType: m[1], body: b.body})
		}
	}
	return out
}

// The defaults a config class sets for the rotated part of the head.
var rotaryDefaults = []struct {
	key string
	re  *regexp.Regexp
}{
	{"partial_rotary_factor", regexp.MustCompile(`setdefault\(\s*"partial_rotary_factor"\s*,\s*([0-9.]+)\s*\)`)},
	{"partial_rotary_factor", regexp.MustCompile(`(?m)^\s+partial_rotary_factor\s*:\s*[A-Za-z |]+=\s*([0-9.]+)\s*$`)},
	{"rotary_pct", regexp.MustCompile(`pop\(\s*"rotary_pct"\s*,\s*([0-9.]+)\s*\)`)},
	{"rotary_pct", regexp.MustCompile(`(?m)^\s+rotary_pct\s*:\s*[A-Za-z |]+=\s*([0-9.]+)\s*$`)},
	{"rotary_dim", regexp.MustCompile(`(?m)^\s+rotary_dim\s*:\s*[A-Za-z |]+=\s*([0-9]+)\s*$`)},
}

// rotaryDefault returns the last default a class body sets (a later
// setdefault wins over an earlier one only when it is the BC default; the
// class's first non-1 value is what transformers uses when the key is
// absent), ignoring defaults of 1 (the whole head).
func rotaryDefault(body string) (string, float64, bool) {
	for _, d := range rotaryDefaults {
		for _, m := range d.re.FindAllStringSubmatch(body, -1) {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil || v == 1 || v == 0 {
				continue
			}
			if d.key != "rotary_dim" && v > 1 {
				continue // not a fraction of the head (e.g. an image model's factor)
			}
			return d.key, v, true
		}
	}
	return "", 0, false
}

// arch is a model class of transformers' auto mappings with the model
// types that map to it.
type arch struct {
	class   string
	types   []string // sorted; those with an entry only
	mapping string   // the first *_MAPPING_NAMES that names the class
}

// The auto mappings of models/auto/modeling_auto.py: NAME = OrderedDict([
// ("model_type", "Class") or ("model_type", ("Class", …)), … ]).
var (
	mappingRe      = regexp.MustCompile(`(?s)\n(\w+_MAPPING_NAMES) = OrderedDict\(\s*\[(.*?)\n    \]\s*\)`)
	mappingEntryRe = regexp.MustCompile(`\(\s*"([^"]+)",\s*(\([^)]*\)|"[^"]+")\s*,?\s*\)`)
	quotedRe       = regexp.MustCompile(`"([^"]+)"`)
)

// architectures inverts transformers' auto mappings (src/auto/
// modeling_auto.py): for each model class, the model types with an entry
// that map to it. A config.json's architectures names such classes, so a
// config whose model_type transformers lacks (remote code) can be read as
// the type whose class it names.
func architectures(src string, entries []entry) ([]arch, error) {
	text, ok, err := readFile(filepath.Join(src, "auto", "modeling_auto.py"))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: no auto/modeling_auto.py", src)
	}
	known := map[string]bool{}
	for _, e := range entries {
		known[e.modelType] = true
	}
	byClass := map[string]*arch{}
	blocks := mappingRe.FindAllStringSubmatch(stripPython(text), -1)
	if len(blocks) == 0 {
		return nil, fmt.Errorf("auto/modeling_auto.py: no *_MAPPING_NAMES found")
	}
	for _, b := range blocks {
		for _, m := range mappingEntryRe.FindAllStringSubmatch(b[2], -1) {
			if !known[m[1]] {
				continue
			}
			for _, c := range quotedRe.FindAllStringSubmatch(m[2], -1) {
				a := byClass[c[1]]
				if a == nil {
					a = &arch{class: c[1], mapping: b[1]}
					byClass[c[1]] = a
				}
				if !slices.Contains(a.types, m[1]) {
					a.types = append(a.types, m[1])
				}
			}
		}
	}
	out := make([]arch, 0, len(byClass))
	for _, a := range byClass {
		sort.Strings(a.types)
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].class < out[j].class })
	return out, nil
}

func render(entries []entry, archs []arch, commit, repo string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by \"go run ./internal/hflayouts\"; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package spec\n\n")
	fmt.Fprintf(&b, "// HFSourceRepo and HFSourceCommit name the transformers source the model-type\n")
	fmt.Fprintf(&b, "// table was derived from (internal/hflayouts).\n")
	fmt.Fprintf(&b, "const (\n\tHFSourceRepo   = %q\n\tHFSourceCommit = %q\n)\n\n", repo, commit)
	fmt.Fprintf(&b, "// hfLayoutsGen is every transformers model type whose text attention applies a\n")
	fmt.Fprintf(&b, "// rotary embedding: the pairing its apply function uses with the function\n")
	fmt.Fprintf(&b, "// that decides it (two when config.rope_interleave picks: interleaved when\n")
	fmt.Fprintf(&b, "// true, neox when false), the pairing of its sparse-attention indexer, and\n")
	fmt.Fprintf(&b, "// the rotated part its config class defaults to. Derived from the\n")
	fmt.Fprintf(&b, "// transformers source at HFSourceCommit by internal/hflayouts.\n")
	fmt.Fprintf(&b, "var hfLayoutsGen = map[string]hfGenLayout{\n")
	for _, e := range entries {
		var ls []string
		for _, l := range e.layouts {
			ls = append(ls, goLayout(l))
		}
		fmt.Fprintf(&b, "\t%q: {layouts: []Layout{%s}, cite: %q", e.modelType, strings.Join(ls, ", "), e.cite)
		if e.choice {
			fmt.Fprintf(&b, ", ropeInterleave: true, ropeInterleaveDefault: %t", e.choiceDef)
		}
		if e.indexer != "" {
			fmt.Fprintf(&b, ", indexer: %s, indexerCite: %q", goLayout(e.indexer), e.indexCite)
		}
		if e.rotaryKey != "" {
			fmt.Fprintf(&b, ", rotaryKey: %q, rotary: %s, rotaryCite: %q", e.rotaryKey, strconv.FormatFloat(e.rotary, 'g', -1, 64), e.rotaryCit)
		}
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// hfArchitecturesGen inverts transformers' auto mappings\n")
	fmt.Fprintf(&b, "// (models/auto/modeling_auto.py's *_MAPPING_NAMES at HFSourceCommit): each\n")
	fmt.Fprintf(&b, "// model class that a model type of hfLayoutsGen maps to, with those types\n")
	fmt.Fprintf(&b, "// and the first mapping that names it. A config.json's architectures names\n")
	fmt.Fprintf(&b, "// such classes. Derived by internal/hflayouts.\n")
	fmt.Fprintf(&b, "var hfArchitecturesGen = map[string]hfGenArch{\n")
	for _, a := range archs {
		fmt.Fprintf(&b, "\t%q: {models: []string{%s}, mapping: %q},\n", a.class, quoteJoin(a.types), a.mapping)
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}

func quoteJoin(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func goLayout(l string) string {
	if l == "neox" {
		return "NeoX"
	}
	return "Interleaved"
}
