// Package apicheck lists the exported API of a type-checked package, one
// line per exported name, in the form of the Go project's api/*.txt files:
//
//	pkg spec, func Lookup(string) (Format, bool)
//	pkg spec, type Spec struct, HeadDim int
//	pkg spec, method (*Spec) Validate() error
//
// Its test keeps api/ (one file per public package of the module) equal to
// the packages' APIs, so that a change to a public API is a visible change
// to a checked-in file. Run
//
//	go test ./internal/apicheck/ -update
//
// to rewrite api/ after an intended change.
package apicheck

import (
	"fmt"
	"go/types"
	"sort"
	"strings"
)

// Listing returns the sorted API lines of pkg, each starting "pkg name, "
// where name is the package's path inside the module (spec,
// generated/engine). Types of pkg itself are written unqualified, those
// of other packages with their package name (spec.Runtime).
func Listing(pkg *types.Package, name string) []string {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	prefix := "pkg " + name + ", "
	var lines []string
	add := func(s string) { lines = append(lines, prefix+s) }
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add(fmt.Sprintf("const %s %s = %s", n, types.TypeString(o.Type(), qual), o.Val().ExactString()))
		case *types.Var:
			add(fmt.Sprintf("var %s %s", n, types.TypeString(o.Type(), qual)))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			add("func " + n + typeParams(sig.TypeParams(), qual) + signature(sig, qual))
		case *types.TypeName:
			typeLines(o, qual, add)
		}
	}
	sort.Strings(lines)
	return lines
}

// typeLines lists a type: its kind (struct, interface) or underlying type,
// each exported field or interface method on its own line, and each
// exported method of its method set with the receiver it needs.
func typeLines(o *types.TypeName, qual types.Qualifier, add func(string)) {
	n := o.Name()
	if o.IsAlias() {
		add(fmt.Sprintf("type %s = %s", n, types.TypeString(types.Unalias(o.Type()), qual)))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		add(fmt.Sprintf("type %s %s", n, types.TypeString(o.Type().Underlying(), qual)))
		return
	}
	head := "type " + n + typeParams(named.TypeParams(), qual)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add(head + " struct")
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add(fmt.Sprintf("%s struct, embedded %s", head, types.TypeString(f.Type(), qual)))
				continue
			}
			add(fmt.Sprintf("%s struct, %s %s", head, f.Name(), types.TypeString(f.Type(), qual)))
		}
	case *types.Interface:
		add(head + " interface")
		unexported := false
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			add(fmt.Sprintf("%s interface, %s%s", head, m.Name(), signature(m.Type().(*types.Signature), qual)))
		}
		for i := range u.NumEmbeddeds() {
			e := u.EmbeddedType(i)
			if _, isIface := e.Underlying().(*types.Interface); !isIface {
				add(fmt.Sprintf("%s interface, embedded %s", head, types.TypeString(e, qual)))
			}
		}
		if unexported {
			add(head + " interface, unexported methods")
		}
		return
	default:
		add(fmt.Sprintf("%s %s", head, types.TypeString(u, qual)))
	}
	recv := n
	if tp := named.TypeParams(); tp.Len() > 0 {
		names := make([]string, tp.Len())
		for i := range tp.Len() {
			names[i] = tp.At(i).Obj().Name()
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	value := types.NewMethodSet(named)
	ptr := types.NewMethodSet(types.NewPointer(named))
	for i := range ptr.Len() {
		m := ptr.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if value.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		add(fmt.Sprintf("method (%s) %s%s", r, m.Name(), signature(m.Type().(*types.Signature), qual)))
	}
}

// typeParams writes a type parameter list, "[T Elem, C CacheElem]", or
// nothing.
func typeParams(tp *types.TypeParamList, qual types.Qualifier) string {
	if tp.Len() == 0 {
		return ""
	}
	parts := make([]string, tp.Len())
	for i := range tp.Len() {
		t := tp.At(i)
		parts[i] = t.Obj().Name() + " " + types.TypeString(t.Constraint(), qual)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature writes a signature's parameter and result types without their
// names: "(string, ...int) (Format, bool)".
func signature(sig *types.Signature, qual types.Qualifier) string {
	params := tuple(sig.Params(), sig.Variadic(), qual)
	res := sig.Results()
	switch res.Len() {
	case 0:
		return "(" + params + ")"
	case 1:
		return "(" + params + ") " + types.TypeString(res.At(0).Type(), qual)
	}
	return "(" + params + ") (" + tuple(res, false, qual) + ")"
}

func tuple(t *types.Tuple, variadic bool, qual types.Qualifier) string {
	parts := make([]string, t.Len())
	for i := range t.Len() {
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			parts[i] = "..." + types.TypeString(typ.(*types.Slice).Elem(), qual)
			continue
		}
		parts[i] = types.TypeString(typ, qual)
	}
	return strings.Join(parts, ", ")
}

// Diff returns the lines of want missing from got ("-" lines: removed from
// the API) and those of got missing from want ("+" lines: added), each
// list sorted. Both inputs must be sorted.
func Diff(want, got []string) (removed, added []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && want[i] < got[j]):
			removed = append(removed, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			added = append(added, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return removed, added
}
