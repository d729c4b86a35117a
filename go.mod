module github.com/ropegen/ropegen

go 1.24

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/mmcloughlin/avo v0.6.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/tools v0.42.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
