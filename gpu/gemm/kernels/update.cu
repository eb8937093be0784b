// The fused kernels' update mode without an epilogue of its own (the
// mma.sync kernel): C −= T after T = A·B.

// sub_f32 computes C −= T for m×n column-major C (ld ldc) and T (ld ldt),
// the difference rounded once.
extern "C" __global__ void sub_f32(float* c, long long ldc, const float* t, long long ldt, int m, int n) {
    long long total = (long long)m * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        long long i = x % m, j = x / m;
        c[i + j * ldc] -= t[i + j * ldt];
    }
}
