// The Ozaki scheme's update C −= A·B in fp64 from int8 words: each row of
// A and each column of B is scaled by a power of two into (−1, 1) and cut
// into S signed 7-bit digits, x = 2^e·Σ_t d_t·2^(−7t), |d_t| ≤ 127, every
// digit exact. The products of digits go through the int8 tensor cores
// (cuBLASLt, int32 accumulation, exact: |Σ| ≤ S·K·127² < 2³¹), one
// product per level d = t + u − 2 < S, and ozaki_combine adds the levels
// into C in fp64. Digits are cut by truncation, so each has the sign of x.

// OZAKI_BAD marks a row or column with a NaN or an Inf: its digits are 0
// and ozaki_combine writes NaN where it goes.
#define OZAKI_BAD (-100000)

// The exponent e with max |x| < 2^e over the row or column (0 when all
// are 0), or OZAKI_BAD.
__device__ int ozaki_exponent(double mx) {
    if (!isfinite(mx)) {
        return OZAKI_BAD;
    }
    if (mx == 0) {
        return 0;
    }
    int e;
    frexp(mx, &e);  // mx = f·2^e, f in [0.5, 1)
    return e;
}

// ozaki_max is max(mx, v) for v ≥ 0 that keeps a NaN once it has met one.
__device__ double ozaki_max(double mx, double v) { return (v > mx || isnan(v)) ? v : mx; }

// ozaki_row_exp sets e[i] for each of the m rows of the m×k column-major a.
extern "C" __global__ void ozaki_row_exp(const double* a, long long lda, int m, int k, int* e) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
        double mx = 0;
        for (int j = 0; j < k; j++) {
            mx = ozaki_max(mx, fabs(a[i + j * lda]));
        }
        e[i] = ozaki_exponent(mx);
    }
}

// ozaki_col_exp sets f[j] for each of the n columns of the k×n
// column-major b: one warp per column.
extern "C" __global__ void ozaki_col_exp(const double* b, long long ldb, int k, int n, int* f) {
    int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int j = (blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += warps) {
        const double* col = b + (long long)j * ldb;
        double mx = 0;
        for (int i = lane; i < k; i += 32) {
            mx = ozaki_max(mx, fabs(col[i]));
        }
        for (int off = 16; off > 0; off /= 2) {
            mx = ozaki_max(mx, __shfl_down_sync(0xffffffff, mx, off));
        }
        if (lane == 0) {
            f[j] = ozaki_exponent(mx);
        }
    }
}

// ozaki_digits writes x·2^(−e)'s s digits to out[t·step], t = 0 … s−1.
__device__ void ozaki_digits(double x, int e, int s, signed char* out, long long step) {
    double y = (e == OZAKI_BAD) ? 0.0 : ldexp(x, -e);
    for (int t = 0; t < s; t++) {
        y *= 128;             // exact
        double d = trunc(y);  // |d| ≤ 127
        y -= d;               // exact
        out[t * step] = (signed char)d;
    }
}

// ozaki_split_rows cuts the m×k column-major a, row i scaled by 2^−e[i],
// into digit matrices stored k-major for cuBLASLt's transposed A: digit t
// of a(i, j) goes to out[t·kp + j + i·ldo], kp ≥ k the padded depth
// (rows k … kp−1 of each digit are zero) and ldo = s·kp. A 32×32 tile
// through shared memory keeps both the reads and the writes coalesced.
extern "C" __global__ void ozaki_split_rows(const double* a, long long lda, int m, int k, const int* e,
                                            signed char* out, long long ldo, int s, int kp) {
    __shared__ double tile[32][33];
    int i0 = blockIdx.x * 32, j0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {  // r: column j0+r, threadIdx.x: row
        int i = i0 + threadIdx.x, j = j0 + r;
        tile[r][threadIdx.x] = (i < m && j < k) ? a[i + (long long)j * lda] : 0.0;
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {  // r: row i0+r, threadIdx.x: column
        int i = i0 + r, j = j0 + threadIdx.x;
        if (i < m && j < kp) {
            ozaki_digits(tile[threadIdx.x][r], e[i], s, out + j + (long long)i * ldo, kp);
        }
    }
}

// ozaki_split_cols cuts the k×n column-major b, column j scaled by
// 2^−f[j], into digit matrices stored k-major in reverse order: digit t
// of b(i, j) goes to out[(s−1−t)·kp + i + j·ldo], so that the level-d
// product pairs digits 0 … d of A with digits d … 0 of B over one
// contiguous depth of (d+1)·kp.
extern "C" __global__ void ozaki_split_cols(const double* b, long long ldb, int k, int n, const int* f,
                                            signed char* out, long long ldo, int s, int kp) {
    long long total = (long long)kp * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        int i = x % kp, j = x / kp;
        double v = i < k ? b[i + j * ldb] : 0.0;
        ozaki_digits(v, f[j], s, out + (long long)(s - 1) * kp + i + j * ldo, -(long long)kp);
    }
}

// ozaki_combine sets c(i, j) −= 2^(e[i]+f[j]) · Σ_d 2^(−7(d+2)) · lv_d(i, j)
// for the m×n block c, the s levels lv_d m×n int32 (ld ldl) at lv +
// d·stride; the levels are added from the smallest, in fp64.
extern "C" __global__ void ozaki_combine(double* c, long long ldc, int m, int n, const int* lv, long long ldl,
                                         long long stride, int s, const int* e, const int* f) {
    long long total = (long long)m * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        int i = x % m, j = x / m;
        int ei = e[i], fj = f[j];
        double* cij = c + i + j * ldc;
        if (ei == OZAKI_BAD || fj == OZAKI_BAD) {
            *cij = __longlong_as_double(0x7ff8000000000000LL);
            continue;
        }
        double sum = 0;
        for (int d = s - 1; d >= 0; d--) {
            sum = sum * (1.0 / 128) + (double)lv[d * stride + i + j * ldl];
        }
        *cij -= ldexp(sum, ei + fj - 14);
    }
}
