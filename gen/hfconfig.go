package gen

import "errors"

// LoadHFConfig reads a Hugging Face config.json and returns the spec it
// describes, starting from DefaultSpec.
func LoadHFConfig(path string) (Spec, error) {
	return Spec{}, errors.New("-hf-config: not implemented yet")
}
