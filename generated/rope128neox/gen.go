package rope128neox

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -layout neox -pkg rope128neox -tests
