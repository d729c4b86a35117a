module github.com/ropegen/ropegen

go 1.26.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/mmcloughlin/avo v0.6.0
	github.com/x448/float16 v0.8.4
	golang.org/x/sys v0.49.0
	golang.org/x/tools v0.42.0
	pgregory.net/rapid v1.3.0
)

require (
	golang.org/x/mod v0.33.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
)
