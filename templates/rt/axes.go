package rt

import "sync"

// Multi-axis RoPE (docs/contract.md §9): a token has a position on each of
// Axes axes, and pair i turns by its position on axis Axis[i]. Every
// backend runs its usual kernels: a token whose positions are all equal (a
// text token) uses the table row of that position, so it gets exactly the
// bits of 1-D RoPE, and any other token a row assembled from the rows of
// its positions, the C and S values of pair i taken from the row of the
// position on Axis[i].

// axisRuns lists, for each axis of the map axis, the runs [lo, hi) of row
// indices < rd whose pairs it turns.
func axisRuns(axis []uint8, axes, rd int, neox bool) [][][2]int {
	of := make([]int, rd)
	for i, a := range axis {
		if neox {
			of[i], of[i+rd/2] = int(a), int(a)
		} else {
			of[2*i], of[2*i+1] = int(a), int(a)
		}
	}
	runs := make([][][2]int, axes)
	for lo := 0; lo < rd; {
		hi := lo + 1
		for hi < rd && of[hi] == of[lo] {
			hi++
		}
		runs[of[lo]] = append(runs[of[lo]], [2]int{lo, hi})
		lo = hi
	}
	return runs
}

// mixAxis copies to dst, from src (rows of rowLen = 2·rd values), the C and
// S values of the pairs on axis a.
func (r *Rotary) mixAxis(dst, src []comp, a int) {
	for _, run := range r.runs[a] {
		copy(dst[run[0]:run[1]], src[run[0]:run[1]])
		copy(dst[r.rd+run[0]:r.rd+run[1]], src[r.rd+run[0]:r.rd+run[1]])
	}
}

// mixRow is an assembled row and, for each axis, the position whose values
// it holds (−1: none yet).
type mixRow struct {
	row  []comp
	have []int32
}

// mixPool holds mixRows: maxRowLen() values, 256 axes.
var mixPool = sync.Pool{New: func() any {
	return &mixRow{row: make([]comp, maxRowLen()), have: make([]int32, 256)}
}}

// mixed returns token j's row: the table row of its position for a text
// token; else the walk's assembled row, where only the axes whose position
// differs from the last assembled token's are copied again (the patches of
// an image row share their time and height).
func (w *walk) mixed(j int) *comp {
	if p, ok := w.text(j); ok {
		return w.t.row(int(p))
	}
	r := w.t.r
	if w.mix == nil {
		w.mix = mixPool.Get().(*mixRow)
		for a := range r.axes {
			w.mix.have[a] = -1
		}
	}
	m := w.mix
	p := w.pos[j*r.axes : (j+1)*r.axes]
	row := m.row[:r.rowLen]
	for a, q := range p {
		if q != m.have[a] {
			k := int(q) - w.t.start
			r.mixAxis(row, w.t.rows[k*r.rowLen:(k+1)*r.rowLen], a)
			m.have[a] = q
		}
	}
	return &row[0]
}
