// Package pivot is partial pivoting on the GPU, as the blocked LUs of
// gpu/dense (one GPU) and gpu/dist (several) use it.
//
// A Panel factors a tall panel with partial pivoting, recursively: halves
// down to leaves of at most 32 columns, each one kernel whose blocks hold
// the leaf's rows in registers and meet once a column, through words in
// global memory, to agree on the pivot. A cap on its multiprocessors lets
// it run beside a trailing update and keep its pace (cuSOLVER's getrf
// takes every multiprocessor it can and then waits for the update's).
//
// getrf's pivots say "swap row k with row ipiv[k]", one after the other,
// so applying them to a column is a chain of dependent swaps. Moves
// composes them on the host into one permutation of the rows they touch
// (at most twice the panel's width), which a Permuter then applies to
// every column in parallel: each column's moved entries read at once, then
// written at once.
package pivot

// Moves composes a panel's interchanges (LAPACK's 1-based pivots,
// relative to row r0) into the rows they move: it appends to moves the
// destination rows, then the source rows, of the entries that change
// place. After the moves, row dst[t] holds what row src[t] held.
func Moves(moves, piv []int32, r0 int) []int32 {
	at := map[int32]int32{} // position → the row now there, where moved
	row := func(q int32) int32 {
		if r, ok := at[q]; ok {
			return r
		}
		return q
	}
	for k, p := range piv {
		a, b := int32(r0+k), int32(r0)+p-1
		if a != b {
			ra, rb := row(a), row(b)
			at[a], at[b] = rb, ra
		}
	}
	var dst, src []int32
	for q, r := range at {
		if q != r {
			dst, src = append(dst, q), append(src, r)
		}
	}
	return append(append(moves, dst...), src...)
}
