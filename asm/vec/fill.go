package vec

func fill(t Target, f *Func) { panic("vec: fill not yet declared") }
