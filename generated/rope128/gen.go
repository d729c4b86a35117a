package rope128

// The mission's example spec. `make generate` (go generate) rewrites every
// other file in this directory; `make check-generated` proves they are fresh.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -pkg rope128 -tests
