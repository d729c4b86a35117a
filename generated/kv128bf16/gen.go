package kv128bf16

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -out-dtype bf16 -pkg kv128bf16 -tests
