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

// fill_local_f64 is fill_local in fp64.
extern "C" __global__ void fill_local_f64(double* a, int rows, int cols, int mb, int nb, int p, int P, int q, int Q, long long grows, u64 seed, double lo) {
    long long n = (long long)rows * cols;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        long long i = global_index(k % rows, mb, p, P), j = global_index(k / rows, nb, q, Q);
        a[k] = lo + unit(seed, (u64)(i + j * grows));
    }
}

// row_abs_sums sets sums[li] = Σ |a(li, lj)| over the rank's columns,
// leaving out the diagonal entry when offdiag: one thread per local row.
extern "C" __global__ void row_abs_sums(const double* a, int rows, int cols, int mb, int nb, int p, int P, int q, int Q, int offdiag, double* sums) {
    for (int li = blockIdx.x * blockDim.x + threadIdx.x; li < rows; li += gridDim.x * blockDim.x) {
        long long i = global_index(li, mb, p, P);
        double s = 0;
        for (int lj = 0; lj < cols; lj++) {
            if (!offdiag || global_index(lj, nb, q, Q) != i) s += fabs(a[li + (long long)lj * rows]);
        }
        sums[li] = s;
    }
}

// set_diag sets each diagonal entry the rank holds from its row's
// off-diagonal sum s: ±(1 + s) keeping the entry's sign (diagdom), or s
// (hpl-mxp: HPL-MxP's reference generator, weakly dominant).
extern "C" __global__ void set_diag(double* a, int rows, int cols, int mb, int nb, int p, int P, int q, int Q, const double* sums, int strict) {
    for (int li = blockIdx.x * blockDim.x + threadIdx.x; li < rows; li += gridDim.x * blockDim.x) {
        long long i = global_index(li, mb, p, P);
        long long b = i / nb;
        if (b % Q != q) continue;
        long long lj = b / Q * nb + i % nb;
        double* d = a + li + lj * rows;
        *d = strict ? copysign(1.0 + sums[li], *d) : sums[li];
    }
}

extern "C" __global__ void f64_to_f32(const double* x, float* y, long long n) {
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        y[k] = (float)x[k];
    }
}

// gather_cols sets xl[lj] = x[global column of lj]: the rank's entries of
// a vector in the order of its local columns.
extern "C" __global__ void gather_cols(const double* x, double* xl, int cols, int nb, int q, int Q) {
    for (int lj = blockIdx.x * blockDim.x + threadIdx.x; lj < cols; lj += gridDim.x * blockDim.x) {
        xl[lj] = x[global_index(lj, nb, q, Q)];
    }
}

// scatter_rows sets y[global row of li] = yl[li]: grid row p's entries
// of a vector back in their global places.
extern "C" __global__ void scatter_rows(const double* yl, double* y, int rows, int nb, int p, int P) {
    for (int li = blockIdx.x * blockDim.x + threadIdx.x; li < rows; li += gridDim.x * blockDim.x) {
        y[global_index(li, nb, p, P)] = yl[li];
    }
}

// unpack_f32 copies a rank's local blocks to their places in a dense
// column-major matrix g (leading dimension ldg); unpack_f16 does so from
// fp16 blocks (FactorHalf's), exactly; the _f64 ones into an fp64 g.
#define UNPACK(NAME, T, G, CONVERT)                                                                      \
    extern "C" __global__ void NAME(const T* a, int rows, int cols, int mb, int nb, int p, int P, int q, int Q, G* g, \
                                    long long ldg) {                                                     \
        long long n = (long long)rows * cols;                                                            \
        for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) { \
            long long i = global_index(k % rows, mb, p, P), j = global_index(k / rows, nb, q, Q);        \
            g[i + j * ldg] = CONVERT(a[k]);                                                              \
        }                                                                                                \
    }
__device__ float same_f32(float x) { return x; }
__device__ float f32_of_f16(unsigned short h) { float x; asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h)); return x; }
UNPACK(unpack_f32, float, float, same_f32)
UNPACK(unpack_f16, unsigned short, float, f32_of_f16)
UNPACK(unpack_f32_f64, float, double, same_f32)
UNPACK(unpack_f16_f64, unsigned short, double, f32_of_f16)
