package rt

import "embed"

// Source holds rt's files: ropegen copies the run-time's (all but rt.go,
// source.go, dynamic_link.go and the tests of rt itself) into every package
// it writes, and the test glue (glue*_test.go) into the tests it writes.
//
//go:embed *.go
var Source embed.FS
