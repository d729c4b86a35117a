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

// The nvfp4 family's block functions and scale conversions, for
// TestNVFP4Family.
var (
	QuantizeNVFP4   = quantizeNVFP4
	DequantizeNVFP4 = dequantizeNVFP4
	UE4M3Code       = ue4m3Code
	UE4M3Half       = ue4m3Half
)

// The Hadamard family's transform of one head, for TestHadamardFamily.
var HadamardHead = hadamardHead

// The int8_per_token_head family's head functions, for TestInt8Family.
var (
	QuantizeInt8Head   = quantizeInt8Head
	DequantizeInt8Head = dequantizeInt8Head
)

// The nvfp4_gs family's block functions, for TestNVFP4GSFamily.
var (
	QuantizeNVFP4GS   = quantizeNVFP4GS
	DequantizeNVFP4GS = dequantizeNVFP4GS
)
