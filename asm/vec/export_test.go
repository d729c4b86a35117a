package vec

// The q8_0 family's block functions, for TestQ8Family, and q8's store of
// a head, for TestQ8FamilyGroups.
var (
	Quantize     = quantize
	Dequantize   = dequantize
	QuantizeHead = quantizeHead
)

// The qn family's block functions, for TestQNFamily.
var (
	QuantizeQN   = quantizeQN
	DequantizeQN = dequantizeQN
)

// The qn family's store of a head, for TestQNFamilyGroups.
var QuantizeQNHead = quantizeQNHead

// The mxfp4 family's block functions, for TestMXFP4Family.
var (
	QuantizeMXFP4   = quantizeMXFP4
	DequantizeMXFP4 = dequantizeMXFP4
)

// The iq4_nl family's block functions, for TestIQ4NLFamily.
var (
	QuantizeIQ4NL   = quantizeIQ4NL
	DequantizeIQ4NL = dequantizeIQ4NL
)
