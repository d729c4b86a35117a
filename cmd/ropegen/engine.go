package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ropegen/ropegen/gen"
	"github.com/ropegen/ropegen/spec"
)

// -engine writes one package for an engine: the kernels of every shape the
// models it must serve need (-hf-config and -gguf, each repeatable, every
// RoPE layer type of each model) and of the bare shapes of -shape, each
// shape once, with the QK-norms its models need (and those a -shape lists),
// the cache types of -out-dtype, and no default model.

// multiFlag is a repeatable flag: each value, checked by check (which
// returns what is accepted, or ""), is appended to *p.
type multiFlag struct {
	c     *cli
	name  string
	p     *[]string
	check func(string) string
}

func (m *multiFlag) String() string {
	if m == nil || m.p == nil {
		return ""
	}
	return strings.Join(*m.p, " ")
}

func (m *multiFlag) Set(s string) error {
	if m.check != nil {
		if problem := m.check(s); problem != "" {
			err := badInput("-%s %q: %s", m.name, s, problem)
			if m.c.setErr == nil {
				m.c.setErr = err
			}
			return err
		}
	}
	*m.p = append(*m.p, s)
	return nil
}

func (c *cli) multiFlag(name, usage string, p *[]string, check func(string) string) {
	c.fs.Var(&multiFlag{c: c, name: name, p: p, check: check}, name, usage)
}

// engineFlags are the flags -engine takes; every other flag describes one
// spec, which an engine package does not have.
var engineFlags = []string{"engine", "hf-config", "gguf", "shape", "out-dtype", "dtype", "pkg", "o", "tests"}

// checkEngineFlags refuses a flag -engine does not take, and the -engine
// flags without -engine.
func (c *cli) checkEngineFlags() error {
	if !c.opt.engine {
		if c.given["shape"] {
			return badInput("-shape: only with -engine (a package of several shapes)")
		}
		for _, l := range []struct {
			name string
			n    int
		}{{"hf-config", len(c.opt.hfConfigs)}, {"gguf", len(c.opt.ggufs)}} {
			if l.n > 1 {
				return badInput("-%s given %d times: only with -engine (one package for several models)", l.name, l.n)
			}
		}
		return nil
	}
	var names []string
	for n := range c.given {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !slices.Contains(engineFlags, n) {
			return badInput("-%s: not with -engine, which takes the models' and the shapes' numbers at run time: its flags are %s", n, "-"+strings.Join(engineFlags, ", -"))
		}
	}
	return nil
}

// parseShape parses a -shape value: HEAD,ROTARY,LAYOUT, then the shape's
// QK-norms, each KIND/SCOPE or KIND/SCOPE/after.
func parseShape(v string) (gen.EngineShape, string) {
	const want = "want HEAD,ROTARY,LAYOUT[,NORM…]: the head dim, the rotary dim (even, at most the head dim), interleaved or neox, and QK-norms KIND/SCOPE[/after] (KIND rms, gemma or l2, SCOPE head or token), e.g. 128,128,neox,rms/head"
	f := strings.Split(v, ",")
	if len(f) < 3 {
		return gen.EngineShape{}, want
	}
	h, err1 := strconv.Atoi(f[0])
	r, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return gen.EngineShape{}, want
	}
	s := spec.DefaultSpec()
	s.HeadDim, s.RotaryDim, s.Layout = h, r, spec.Layout(f[2])
	if err := s.Validate(); err != nil {
		var se *spec.SpecError
		if errors.As(err, &se) {
			return gen.EngineShape{}, fmt.Sprintf("%s %s: %s; %s", map[string]string{"dim": "head dim", "rotary-dim": "rotary dim", "layout": "layout"}[se.Field], se.Value, se.Accepted, want)
		}
		return gen.EngineShape{}, err.Error()
	}
	sh := gen.EngineShape{HeadDim: h, RotaryDim: r, Layout: s.Layout}
	for _, e := range f[3:] {
		p := strings.Split(e, "/")
		if len(p) < 2 || len(p) > 3 || len(p) == 3 && p[2] != "after" {
			return gen.EngineShape{}, fmt.Sprintf("norm %q: %s", e, want)
		}
		n := spec.QKNorm{Kind: spec.NormKind(p[0]), Scope: p[1], After: len(p) == 3}
		ns := s
		ns.QKNorm = n
		if !n.Enabled() {
			return gen.EngineShape{}, fmt.Sprintf("norm %q: %s", e, want)
		}
		if err := ns.Validate(); err != nil {
			return gen.EngineShape{}, fmt.Sprintf("norm %q: %v; %s", e, err, want)
		}
		if slices.Contains(sh.Norms, n) {
			return gen.EngineShape{}, fmt.Sprintf("norm %q listed twice: want each norm once", e)
		}
		sh.Norms = append(sh.Norms, n)
	}
	return sh, ""
}

// engineModel is one RoPE of a model an engine package serves.
type engineModel struct {
	label string
	s     spec.Spec
}

// engineModels loads every model of -hf-config and -gguf: each RoPE layer
// type of a config, and of a GGUF file its RoPE and, for a two-base model,
// its local layers'.
func (c *cli) engineModels() ([]engineModel, error) {
	var out []engineModel
	for _, path := range c.opt.hfConfigs {
		s, info, err := spec.LoadHFConfigWith(path, spec.HFOptions{})
		if err != nil {
			return nil, badInput("%s", sourceError("-hf-config", path, err))
		}
		var types []string
		for _, l := range info.Layers {
			if l.RoPE != "" && !slices.Contains(types, l.Type) {
				types = append(types, l.Type)
			}
		}
		src, err := sourceName(path, true)
		if err != nil {
			return nil, badInput("%s", sourceError("-hf-config", path, err))
		}
		if len(types) <= 1 {
			out = append(out, engineModel{fmt.Sprintf("%s (%s)", src, info.ModelType), s})
			continue
		}
		for _, lt := range types {
			s, _, err := spec.LoadHFConfigWith(path, spec.HFOptions{LayerType: lt})
			if err != nil {
				return nil, badInput("%s", sourceError("-hf-config", path, err))
			}
			out = append(out, engineModel{fmt.Sprintf("%s (%s, %s layers)", src, info.ModelType, lt), s})
		}
	}
	for _, path := range c.opt.ggufs {
		s, info, err := spec.LoadGGUFWith(path, spec.GGUFOptions{})
		if err != nil {
			return nil, badInput("%s", sourceError("-gguf", path, err))
		}
		src, err := sourceName(path, false)
		if err != nil {
			return nil, badInput("%s", sourceError("-gguf", path, err))
		}
		out = append(out, engineModel{fmt.Sprintf("%s (GGUF %s)", src, info.Arch), s})
		// A two-base model's local layers; a file with one RoPE has none.
		if l, _, err := spec.LoadGGUFWith(path, spec.GGUFOptions{Local: true}); err == nil && !sameRoPE(l, s) {
			out = append(out, engineModel{fmt.Sprintf("%s (GGUF %s, local layers)", src, info.Arch), l})
		}
	}
	return out, nil
}

// An engine package's bytes do not depend on where its model files lie: it
// names each by its base name, in the package doc with its content (a
// config's SHA-256, a GGUF file's size: hashing gigabytes of weights would
// slow every go generate) and in the header's command line.

// sourceName names the model file path for an engine package's doc: its
// base name and, with hash, the first 12 hex digits of its SHA-256, else
// its size.
func sourceName(path string, hash bool) (string, error) {
	base := filepath.Base(path)
	if !hash {
		st, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s, %d bytes", base, st.Size()), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s sha256:%x", base, sum[:6]), nil
}

// modelBaseNames returns args with the path of every -hf-config and -gguf
// replaced by its base name: the command as run from the directory that
// holds the model files.
func modelBaseNames(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || (name != "hf-config" && name != "gguf") {
			continue
		}
		switch {
		case hasValue:
			out[i] = out[i][:len(out[i])-len(value)] + filepath.Base(value)
		case i+1 < len(out):
			i++
			out[i] = filepath.Base(out[i])
		}
	}
	return out
}

// sameRoPE reports whether a and b have the same shape and frequencies.
func sameRoPE(a, b spec.Spec) bool {
	pa, err1 := spec.Resolve(a)
	pb, err2 := spec.Resolve(b)
	return err1 == nil && err2 == nil && pa.HeadDim == pb.HeadDim && pa.RotaryDim == pb.RotaryDim &&
		a.Layout == b.Layout && slices.Equal(pa.Freqs, pb.Freqs) && pa.Attn == pb.Attn
}

// runEngine writes the engine package the flags describe.
func (c *cli) runEngine(args []string, stderr io.Writer) error {
	s := c.spec
	s.Caches = nil                       // checked without a head dim: each shape has its own
	if err := s.Validate(); err != nil { // -dtype, -pkg
		return err
	}
	if err := spec.ValidateCaches(c.spec.Caches, c.spec.DType); err != nil {
		return err
	}
	e := gen.Engine{Package: c.spec.Package, DType: c.spec.DType, Caches: c.spec.Caches}
	models, err := c.engineModels()
	if err != nil {
		return err
	}
	for _, m := range models {
		p, err := spec.Resolve(m.s)
		if err != nil {
			return badInput("%s: %v", m.label, err)
		}
		sh := gen.EngineShape{HeadDim: p.HeadDim, RotaryDim: p.RotaryDim, Layout: m.s.Layout}
		norm := "no QK-norm"
		if m.s.QKNorm.Enabled() {
			sh.Norms = []spec.QKNorm{m.s.QKNorm}
			norm = "QK-norm " + normName(m.s.QKNorm)
		}
		e.Shapes = append(e.Shapes, sh)
		e.Models = append(e.Models, fmt.Sprintf("%s: %d/%d/%s, %s", m.label, sh.HeadDim, sh.RotaryDim, sh.Layout, norm))
	}
	for _, v := range c.opt.shapes {
		sh, _ := parseShape(v) // checked as the flag was set
		e.Shapes = append(e.Shapes, sh)
		e.Models = append(e.Models, fmt.Sprintf("-shape %s", v))
	}
	if len(e.Shapes) == 0 {
		return badInput("-engine: no shapes: want -hf-config, -gguf or -shape (each repeatable)")
	}
	for _, ct := range e.Caches {
		f, _ := ct.Format()
		var noted []string
		for _, sh := range e.Shapes {
			name := fmt.Sprintf("%d/%d/%s", sh.HeadDim, sh.RotaryDim, sh.Layout)
			if sh.HeadDim%f.BlockValues != 0 && !slices.Contains(noted, name) {
				noted = append(noted, name)
				fmt.Fprintf(stderr, "ropegen: note: -out-dtype %s: the shape %s has no %s kernels (its head dim is not a multiple of %d)\n", ct, name, ct, f.BlockValues)
			}
		}
	}
	files, err := gen.GenerateEngine(e, gen.Options{Command: command(modelBaseNames(args)), Tests: c.opt.tests})
	if err != nil {
		return fmt.Errorf("internal error: generating: %v", err)
	}
	return writeFiles(c.opt.out, e.Package, files)
}

// normName spells a QK-norm as a generated package's Params does.
func normName(n spec.QKNorm) string {
	s := string(n.Kind) + "/head"
	if n.Token() {
		s = string(n.Kind) + "/token"
	}
	if n.After {
		s += "/after"
	}
	return s
}
