// Kernels of package dist: a rank's blocks of a matgen matrix drawn in
// place, and the sign flip that ends Multiply.

typedef unsigned long long u64;

// mix and unit are matgen.Mix and matgen.Unit (the twins of
// gpu/dense/kernels/lu.cu's), so that every grid draws the same matrix.
__device__ u64 mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__device__ double unit(u64 seed, u64 i) {
    u64 r = mix(seed * 0x9e3779b97f4a7c15ull + mix(i + 0x632be59bd9b4e019ull));
    return (double)((r >> 11) + 1) * 0x1p-53;
}

// global_index maps local index l of owner `who` of `procs` back to the
// global one (Layout.GlobalRow / GlobalCol).
__device__ long long global_index(long long l, int nb, int who, int procs) {
    return (l / nb * procs + who) * nb + l % nb;
}

// fill_local sets the rank's column-major rows×cols blocks of the
// grows-row matrix whose element (i, j) is lo + unit(seed, i + j·grows),
// rounded to fp32.
extern "C" __global__ void fill_local(float* a, int rows, int cols, int mb, int nb, int p, int P, int q, int Q, long long grows, u64 seed, double lo) {
    long long n = (long long)rows * cols;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        long long i = global_index(k % rows, mb, p, P), j = global_index(k / rows, nb, q, Q);
        a[k] = (float)(lo + unit(seed, (u64)(i + j * grows)));
    }
}

extern "C" __global__ void negate_f32(float* a, long long n) {
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        a[k] = -a[k];
    }
}
