package rope128f16

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -dtype f16 -pkg rope128f16 -tests
