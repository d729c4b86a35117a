//go:build linux

package verify

import (
	"fmt"
	"syscall"
)

// guardSupported reports whether newGuarded can place memory against
// PROT_NONE pages on this system.
const guardSupported = true

// mapGuarded maps size accessible bytes between two PROT_NONE pages and
// returns the whole mapping and the page size; the accessible bytes are
// mem[page : len(mem)-page], a whole number of pages.
func mapGuarded(size int) (mem []byte, page int, err error) {
	page = syscall.Getpagesize()
	size = (size + page - 1) / page * page
	mem, err = syscall.Mmap(-1, 0, size+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, 0, fmt.Errorf("mmap %d bytes: %w", size+2*page, err)
	}
	for _, guard := range [][]byte{mem[:page], mem[page+size:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			syscall.Munmap(mem)
			return nil, 0, fmt.Errorf("mprotect PROT_NONE: %w", err)
		}
	}
	return mem, page, nil
}

// unmapGuarded releases a mapping of mapGuarded.
func unmapGuarded(mem []byte) error { return syscall.Munmap(mem) }
