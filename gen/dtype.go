package gen

// dtype describes how an element type is stored and computed (docs/contract.md §5).
type dtype struct {
	name    string // flag value: "f32", "f64", "f16", "bf16"
	goType  string // Go type of the stored elements
	compute string // Go type of the table and the arithmetic
	about   string // for the package doc
	widen   string // generated func from goType to compute ("" when they are the same)
	narrow  string // generated func from compute to goType, round to nearest even
	ulp     string // the narrowing's share of the error bound, for the package doc
}

var dtypes = map[string]dtype{
	"f32":  {name: "f32", goType: "float32", compute: "float32", about: "float32"},
	"f64":  {name: "f64", goType: "float64", compute: "float64", about: "float64"},
	"f16":  {name: "f16", goType: "uint16", compute: "float32", about: "IEEE binary16 (bits in uint16)", widen: "f16to32", narrow: "f32to16", ulp: " + one binary16 ulp of |y|"},
	"bf16": {name: "bf16", goType: "uint16", compute: "float32", about: "bfloat16 (bits in uint16)", widen: "bf16to32", narrow: "f32tobf16", ulp: " + one bfloat16 ulp of |y|"},
}

func (p *Plan) dtype() dtype { return dtypes[p.Spec.DType] }

// computeType is the Go type the arithmetic and the table use.
func (p *Plan) computeType() string { return p.dtype().compute }

// unitRoundoff is u of the compute type, as doc text.
func (p *Plan) unitRoundoff() string {
	if p.computeType() == "float64" {
		return "2⁻⁵³"
	}
	return "2⁻²⁴"
}
