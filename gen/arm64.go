package gen

// arm64Files returns rope_arm64.s (nil when there is no assembly) and
// rope_arm64.go, the declarations and dispatch of the NEON kernels.
func (p *Plan) arm64Files(header string) (asm, goSrc []byte, err error) {
	f := newGoFile(p)
	f.Comment("archBackends returns the assembly backends this CPU supports, best first.")
	f.Func().Id("archBackends").Params().Index().Id("backend").Block(jenReturnNil())
	goSrc, err = goFile(f, header, "arm64 && !purego")
	return nil, goSrc, err
}
