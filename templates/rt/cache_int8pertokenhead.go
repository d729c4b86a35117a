package rt

// Int8PerTokenHeadCache returns the view s of buf as vLLM's int8 KV cache
// with a scale per token and KV head (int8_per_token_head), in ropegen's
// layout: a head of HeadDim values is one block of HeadDim+4 bytes
// (Rotary.CacheHead("int8_per_token_head")), its float32 scale s first,
// little endian, then its HeadDim int8 codes, and s counts bytes (the
// scale need not be 4-byte aligned). Every store computes the scale from
// the head it stores, exactly as vLLM's per-token-head quantization does:
//
//	amax = max |x_j| (NaNs passed over), s = max(fl(amax/127), fl32(1e-6))
//	q_j  = trunc(clamp(fl(fl(x_j·fl(1/s)) ± 0.5), −128, 127)), ± by x_j's sign, a NaN product 0.5
//
// (halves away from zero; an infinity makes s +Inf and every q_j 0), and a
// load reads q_j·s rounded once, for any bytes (a NaN, infinite or
// negative scale included). The scale of head h of row slot is the
// float32 at byte slot·s.Token + h·s.Head: an engine keeping vLLM's
// separate [blocks, block_size, heads] scale cache copies those words out
// (and its int8 the HeadDim bytes after each). Shift codes each shifted
// head again whole, with a new scale. The view keeps no scale of its own.
func Int8PerTokenHeadCache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheInt8, s: s, u8: buf}
}

func init() { cacheBuilt[cacheInt8] = true }
