package rt

// Store is Default().Store: the values of a step into a cache by slot.
func Store(c Cache, slots []int64, src []float32, ss Strides) {
	Default().store("Store", c, slots, src, ss)
}

// Load is Default().Load: cache rows read back as float32.
func Load(dst []float32, ds Strides, c Cache, slots []int64) {
	Default().load("Load", dst, ds, c, slots)
}
