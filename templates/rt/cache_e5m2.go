package rt

// E5M2Cache returns the view s of buf as a cache of OCP FP8 e5m2 bytes (1
// sign, 5 exponent bits of bias 15, 2 mantissa bits: the top byte of an
// IEEE binary16) with the per-tensor scale: a value x is stored as
// e5m2(x/scale), rounded to nearest even, saturating at ±57344 (magnitudes
// from 61440 up and ±Inf; the store never writes an infinity), a NaN
// staying a NaN (S.11111.11), and read back as e5m2·scale. The entry
// points that use it check that scale is finite and > 0.
func E5M2Cache(buf []uint8, s Strides, scale float32) Cache {
	return Cache{kind: cacheE5M2, s: s, u8: buf, scale: scale}
}

func init() { cacheBuilt[cacheE5M2] = true }
