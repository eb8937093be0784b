// lu.cu: the small passes of the GPU LU and its refinement, on
// column-major matrices (element (i, j) at i + j·ld, as cuSOLVER keeps
// them): row permutations, C −= T, conversions between binary32 and
// binary64, and the matrix generators. No headers: NVRTC has none here.

typedef unsigned long long u64;

// shift_pivots adds r0 to n panel pivots, making them global.
extern "C" __global__ void shift_pivots(int* ipiv, int n, int r0) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        ipiv[i] += r0;
    }
}

// sub_f32 computes C −= T for m×n column-major C (ld ldc) and T (ld ldt),
// the difference rounded once.
extern "C" __global__ void sub_f32(float* c, long long ldc, const float* t, long long ldt, int m, int n) {
    long long total = (long long)m * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        long long i = x % m, j = x / m;
        c[i + j * ldc] -= t[i + j * ldt];
    }
}

extern "C" __global__ void f64_to_f32(const double* x, float* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = (float)x[i];
    }
}

extern "C" __global__ void f32_to_f64(const float* x, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = (double)x[i];
    }
}

// The generators draw entry i from a counter-based hash of (seed, i)
// (splitmix64's finaliser), so a matrix is the same on every GPU and grid.
__device__ u64 mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// unit returns a double uniform in (0, 1]: 53 random bits.
__device__ double unit(u64 seed, u64 i) {
    u64 r = mix(seed * 0x9e3779b97f4a7c15ull + mix(i + 0x632be59bd9b4e019ull));
    return (double)((r >> 11) + 1) * 0x1p-53;
}

// fill_uniform sets x[i] uniform in (lo, hi].
extern "C" __global__ void fill_uniform(double* x, long long n, u64 seed, double lo, double hi) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        x[i] = lo + (hi - lo) * unit(seed, (u64)i);
    }
}

// fill_normal sets x[i] standard normal (Box–Muller on two draws).
extern "C" __global__ void fill_normal(double* x, long long n, u64 seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        double u1 = unit(seed, 2 * (u64)i), u2 = unit(seed, 2 * (u64)i + 1);
        x[i] = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
    }
}

// add_diag adds v·sign(a_ii) to the n diagonal entries: with v above
// every row's and column's off-diagonal sum, the matrix is diagonally
// dominant by rows and columns.
extern "C" __global__ void add_diag(double* a, long long ld, int n, double v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double d = a[i + i * ld];
        a[i + i * ld] = d + (d < 0 ? -v : v);
    }
}

// row_abs_sums sets sums[i] = Σ_j |a_ij|: one thread per row, the
// threads of a warp on adjacent rows (coalesced).
extern "C" __global__ void row_abs_sums(const double* a, long long ld, int n, double* sums) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        s += fabs(a[i + j * ld]);
    }
    sums[i] = s;
}

// diag_check looks at binary64 factors: *out becomes −1 if any entry is
// NaN or Inf, else the smallest k ≥ 1 with U(k, k) = 0 (1-based), else 0.
// out must be zeroed first.
extern "C" __global__ void diag_check(const double* lu, long long ld, int n, int* out) {
    long long total = (long long)n * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        double v = lu[x];
        if (isnan(v) || isinf(v)) {
            atomicExch(out, -1);
        } else if (v == 0.0 && x % ld == x / ld) {
            int k = (int)(x / ld) + 1;
            int old = atomicCAS(out, 0, k);
            while (old > 0 && k < old) {
                int prev = atomicCAS(out, old, k);
                if (prev == old) {
                    break;
                }
                old = prev;
            }
        }
    }
}

// permute_rows moves, in each of ncols columns from a, the entry of row
// src[t] to row dst[t] for t < npairs: a permutation of those rows (the
// composed interchanges of a panel, worked out on the host). One block per
// column; all reads land in shared memory before any write.
extern "C" __global__ void permute_rows(float* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    extern __shared__ float vals[];
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        float* col = a + (long long)c * ld;
        for (int t = threadIdx.x; t < npairs; t += blockDim.x) {
            vals[t] = col[src[t]];
        }
        __syncthreads();
        for (int t = threadIdx.x; t < npairs; t += blockDim.x) {
            col[dst[t]] = vals[t];
        }
        __syncthreads();
    }
}

// set_diag sets a_ii = d[i] for i < n.
extern "C" __global__ void set_diag(double* a, long long ld, int n, const double* d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i + i * ld] = d[i];
    }
}
