package gen

import "fmt"

// testFiles are the package's tests (-tests): rope_test.go, generated, and
// the test glue and examples copied from rt (rope_glue*_test.go,
// rope_example*_test.go), which describe the package to ropegen's verify
// suite through its API. rope_test.go runs the suite on the package's
// default model (a per-spec package) or on a model of every shape and
// QK-norm (an engine package), on every backend the CPU has, and
// benchmarks them.
func (pk *pkg) testFiles() ([]File, error) {
	glue := []string{"glue_test.go"}
	examples := []string{}
	if pk.hasNorms() {
		glue = append(glue, "glue_norm_test.go")
	}
	if len(pk.caches) > 0 {
		glue = append(glue, "glue_cache_test.go")
	}
	if pk.def != nil {
		examples = append(examples, "example_test.go")
		if pk.def.Norm != nil {
			examples = append(examples, "example_norm_test.go")
		}
		if len(pk.caches) > 0 {
			examples = append(examples, "example_prep_test.go", "example_mla_test.go")
		}
	}
	files, err := pk.copyAll("rt", "", append(glue, examples...))
	if err != nil {
		return nil, err
	}
	t, err := pk.copy("test/rope_test.go.tmpl", "rope_test.go")
	if err != nil {
		return nil, fmt.Errorf("generating rope_test.go: %w", err)
	}
	return append(files, t), nil
}
