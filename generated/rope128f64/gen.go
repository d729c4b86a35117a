package rope128f64

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -dtype f64 -pkg rope128f64 -tests
