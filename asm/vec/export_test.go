package vec

// The q8_0 family's block functions, for TestQ8Family.
var (
	Quantize   = quantize
	Dequantize = dequantize
)

// The qn family's block functions, for TestQNFamily.
var (
	QuantizeQN   = quantizeQN
	DequantizeQN = dequantizeQN
)
