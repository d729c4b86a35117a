package engine

// An engine package: the kernels of the popular shapes, for an engine that
// loads models at run time (examples/engine serves every model below
// through it, each bit for bit as a package generated for that model
// alone). New takes a model's numbers (spec.Resolve, then Runtime) as data.
//
//	128/128/neox         Llama 3.x, Mistral, Qwen2.5 (YaRN), Qwen2.5-VL (M-RoPE), InternLM2.5;
//	                     QK-norms rms/head (Qwen3, Qwen3-VL) and rms/token (OLMo 2)
//	128/128/interleaved  Llama 4 (l2/head after the rotation), GGUF Llama (llama.cpp's norm rope)
//	64/64/interleaved    DeepSeek-V3's MLA rotary part
//	256/256/neox         Gemma 3, global and sliding layers (gemma/head)
//	96/96/neox           Phi-3 mini (longrope)
//
// Caches: f32, f16, q8_0, e5m2, q4_0, mxfp4, iq4_nl, nvfp4, nvfp4_gs and
// int8_per_token_head (nvfp4 not at 96, which is not a multiple of its
// 64-value blocks).

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -engine -shape 128,128,neox,rms/head,rms/token -shape 128,128,interleaved,l2/head/after -shape 64,64,interleaved -shape 256,256,neox,gemma/head -shape 96,96,neox -out-dtype f32,f16,q8_0,e5m2,q4_0,mxfp4,iq4_nl,nvfp4,nvfp4_gs,int8_per_token_head -pkg engine -tests
