package rope64

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 64 -base 10000 -pkg rope64 -tests
