package rt

// The package computes dynamic NTK frequencies with the code ropegen runs:
// dynamicFreqs and the correctly rounded powers it calls.
func init() { dynamicNTK = dynamicFreqs }
