package kv128f16

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -out-dtype f16 -pkg kv128f16 -tests
