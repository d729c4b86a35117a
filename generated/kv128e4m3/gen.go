package kv128e4m3

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -dim 128 -base 10000 -out-dtype e4m3 -pkg kv128e4m3 -tests
