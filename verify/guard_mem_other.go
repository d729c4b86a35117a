//go:build !linux

package verify

import (
	"fmt"
	"runtime"
)

// guardSupported reports whether newGuarded can place memory against
// PROT_NONE pages on this system: only linux is wired up.
const guardSupported = false

func mapGuarded(size int) (mem []byte, page int, err error) {
	return nil, 0, fmt.Errorf("guard pages are only implemented on linux, not %s", runtime.GOOS)
}

func unmapGuarded(mem []byte) error { return nil }
