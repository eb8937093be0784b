// Row moves on column-major matrices (package pivot's Permuter): the
// pairs that Moves composes from a panel's interchanges, applied to the
// columns outside the panel.

// permute_rows moves, in each of ncols columns of a (ld), the entry of row
// src[t] to row dst[t] for t < npairs, a block a column: every entry read
// into shared memory, then written, so the pairs may form any
// permutation of their rows.
template <typename T>
__device__ void permute_rows_in(T* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    extern __shared__ __align__(16) unsigned char permute_held[];
    T* held = (T*)permute_held;
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        T* col = a + (long long)c * ld;
        for (int t = threadIdx.x; t < npairs; t += blockDim.x) held[t] = col[src[t]];
        __syncthreads();
        for (int t = threadIdx.x; t < npairs; t += blockDim.x) col[dst[t]] = held[t];
        __syncthreads();
    }
}

extern "C" __global__ void permute_rows(float* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    permute_rows_in(a, ld, ncols, dst, src, npairs);
}

extern "C" __global__ void permute_rows_f64(double* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    permute_rows_in(a, ld, ncols, dst, src, npairs);
}
