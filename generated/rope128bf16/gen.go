package rope128bf16

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -dtype bf16 -pkg rope128bf16 -tests
