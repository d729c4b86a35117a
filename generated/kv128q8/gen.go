package kv128q8

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -out-dtype q8_0 -pkg kv128q8 -tests
