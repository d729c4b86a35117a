package gen

import (
	"errors"
	"io"
)

// Explain writes the plan for s in human-readable form: per pair the
// frequency, wavelength, scaling band, and the attention factor.
func Explain(w io.Writer, s Spec) error {
	return errors.New("-explain: not implemented yet")
}
