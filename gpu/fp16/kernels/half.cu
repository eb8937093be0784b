// The fp16-storage LU's kernels (package fp16, for gpu/dense and
// gpu/dist): A scaled into fp16 by powers of two, blocks converted between
// the stored word and fp32, the growth check's maxima, and the scalings
// applied to vectors.

typedef unsigned long long u64;

// Nonnegative doubles (and floats) order as their bit patterns, so an
// atomic max of the bits is a max of the values, with NaN above all.
//
// row_amax: rowMax[i] = max |a_ij| over the columns of this block's slice
// of the m×n matrix at a (leading dimension lda; threads take rows: a
// warp reads consecutive rows of a column).
extern "C" __global__ void row_amax(const double* a, long long lda, long long m, long long n, int cols, u64* rowMax) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    long long j0 = (long long)blockIdx.y * cols, j1 = min(j0 + cols, n);
    u64 mx = 0;
#pragma unroll 8
    for (long long j = j0; j < j1; j++) {
        u64 b = (u64)__double_as_longlong(fabs(a[i + j * lda]));
        mx = b > mx ? b : mx;
    }
    if (j0 < j1) atomicMax(rowMax + i, mx);
}

// pow2_scales turns maxima (bits) into powers of two: s = 2^(e − ilogb(max)),
// so that max·s lies in [2^e, 2^(e+1)); a zero (or non-finite) max gives 1.
extern "C" __global__ void pow2_scales(const u64* maxBits, double* s, long long n, int e) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        double m = __longlong_as_double((long long)maxBits[i]);
        s[i] = (m > 0 && isfinite(m)) ? ldexp(1.0, e - ilogb(m)) : 1.0;
    }
}

// fp16 words are unsigned shorts (NVRTC has no headers here); each
// conversion is one correctly rounded PTX cvt.
__device__ unsigned short f16_of(double x) { unsigned short h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x)); return h; }
__device__ unsigned short f16_of(float x) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); return h; }
__device__ float f32_of(unsigned short h) { float x; asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h)); return x; }

// block_max reduces b (binary32 bits of |values|) over the block (of
// whole warps, at most 1024 threads) and raises *out once per block: a
// single word raised by every warp of a large grid serializes.
__device__ void block_max(unsigned b, unsigned* out) {
    __shared__ unsigned warps[32];
    for (int o = 16; o > 0; o >>= 1) b = max(b, __shfl_xor_sync(0xffffffffu, b, o));
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = b;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (blockDim.x + 31) / 32; w++) b = max(b, warps[w]);
        atomicMax(out, b);
    }
    __syncthreads();
}

// col_amax: colMax[j] = max_i |a_ij·r_i| (fp64 bits) over the m×n
// matrix at a, a block a column.
extern "C" __global__ void col_amax(const double* a, long long lda, long long m, long long n, const double* r, u64* colMax) {
    for (long long j = blockIdx.x; j < n; j += gridDim.x) {
        u64 mx = 0;
        for (long long i = threadIdx.x; i < m; i += blockDim.x) {
            u64 b = (u64)__double_as_longlong(fabs(a[i + j * lda] * r[i]));
            mx = b > mx ? b : mx;
        }
        for (int o = 16; o > 0; o >>= 1) {
            u64 t = __shfl_xor_sync(0xffffffffu, mx, o);
            mx = t > mx ? t : mx;
        }
        if ((threadIdx.x & 31) == 0) atomicMax(colMax + j, mx);
    }
}

// scale_to_f16: w = r_i·a_ij·c_j over the m×n matrix at a, rounded once
// to fp16 (the scalings are powers of two: exact short of overflow), and
// *maxA raised to the largest |w| (binary32 bits). Blocks take columns.
extern "C" __global__ void scale_to_f16(const double* a, long long lda, long long m, long long n, const double* r, const double* c,
                                        unsigned short* w, long long ldw, unsigned* maxA) {
    unsigned mx = 0;
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (long long)gridDim.x * blockDim.x) {
            unsigned short h = f16_of(a[i + j * lda] * r[i] * c[j]);
            w[i + j * ldw] = h;
            mx = max(mx, __float_as_uint(fabsf(f32_of(h))));
        }
    block_max(mx, maxA);
}

// Blocks (column-major, m×n) between fp16 and fp32, and copies.
#define MAP_BLOCK(EXPR)                                                                   \
    for (int j = blockIdx.y; j < n; j += gridDim.y)                                     \
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) \
            y[i + (long long)j * ldy] = EXPR(x[i + (long long)j * ldx]);
extern "C" __global__ void to_f32_f16(const unsigned short* x, long long ldx, float* y, long long ldy, int m, int n) { MAP_BLOCK(f32_of) }
extern "C" __global__ void from_f32_f16(const float* x, long long ldx, unsigned short* y, long long ldy, int m, int n) { MAP_BLOCK(f16_of) }
extern "C" __global__ void copy_f16(const unsigned short* x, long long ldx, unsigned short* y, long long ldy, int m, int n) { MAP_BLOCK() }

// eye_f32 sets the n×n block a (ld lda) to the identity: the right-hand
// side whose triangular solve is a triangle's inverse.
extern "C" __global__ void eye_f32(float* a, long long lda, int n) {
    long long total = (long long)n * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        long long i = e % n, j = e / n;
        a[i + j * lda] = i == j ? 1.0f : 0.0f;
    }
}

// tri_inv_leaf inverts the 64×64 diagonal blocks of the triangle at t
// (ld ldt) into x (ld ldx), a thread block of 64 threads each (thread j
// makes column j of the inverse): the unit lower triangle by forward
// substitution, or (upper) the upper one with its diagonal by back
// substitution; the block's other triangle becomes zero.
extern "C" __global__ void tri_inv_leaf(const float* t, long long ldt, float* x, long long ldx, int upper) {
    __shared__ float T[64][65], X[64][65];
    long long o = (long long)blockIdx.x * 64;
    int j = threadIdx.x;
    for (int c = 0; c < 64; c++) T[j][c] = t[(o + j) + (o + c) * ldt];
    __syncthreads();
    if (!upper) {
        for (int i = 0; i < 64; i++) {
            float s = 0;
            for (int k = 0; k < i; k++) s += T[i][k] * X[k][j];
            X[i][j] = i == j ? 1.0f : (i > j ? -s : 0.0f);
        }
    } else {
        for (int i = 63; i >= 0; i--) {
            float s = 0;
            for (int k = i + 1; k < 64; k++) s += T[i][k] * X[k][j];
            X[i][j] = i > j ? 0.0f : ((i == j ? 1.0f : 0.0f) - s) / T[i][i];
        }
    }
    __syncthreads();
    for (int c = 0; c < 64; c++) x[(o + j) + (o + c) * ldx] = X[j][c];
}

// tri_zero zeroes the strict lower (upper = 1) or upper triangle of the
// n×n x (ld ld): the other triangle of an inverse, which Inverter's
// products of whole blocks read.
extern "C" __global__ void tri_zero(float* x, long long ld, int n, int upper) {
    long long total = (long long)n * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        long long i = e % n, j = e / n;
        if (upper ? i > j : i < j) x[i + j * ld] = 0.0f;
    }
}

// diag_check_f32 is lu.cu's diag_check on binary32 factors: *out (zeroed
// first) becomes −1 for a NaN or an Inf, else the smallest 1-based k with
// U(k, k) = 0, else stays 0.
extern "C" __global__ void diag_check_f32(const float* lu, long long ld, int n, int* out) {
    long long total = (long long)n * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        float v = lu[x];
        if (isnan(v) || isinf(v)) {
            atomicExch(out, -1);
        } else if (v == 0.0f && x % ld == x / ld) {
            int k = (int)(x / ld) + 1;
            int old = atomicCAS(out, 0, k);
            while (old > 0 && k < old) {
                int prev = atomicCAS(out, old, k);
                if (prev == old) break;
                old = prev;
            }
        }
    }
}

// amax raises *out (binary32 bits, zeroed first) to the largest |value| of
// the m×n block at x; a NaN raises it above Inf (bits order as values).
#define AMAX(NAME, T, F)                                                                  \
    extern "C" __global__ void NAME(const T* x, long long ld, int m, int n, unsigned* out) { \
        unsigned b = 0;                                                                   \
        for (int j = blockIdx.y; j < n; j += gridDim.y)                                   \
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) \
                b = max(b, __float_as_uint(fabsf(F(x[i + (long long)j * ld]))));          \
        block_max(b, out);                                                                \
    }
AMAX(amax_f16, unsigned short, f32_of)

// amax_tri_f32 is amax over the n×n LU at x: its strictly lower part (the
// multipliers) raises out[0], its upper part out[1].
extern "C" __global__ void amax_tri_f32(const float* x, long long ld, int n, unsigned* out) {
    unsigned l = 0, u = 0;
    for (int j = blockIdx.y; j < n; j += gridDim.y)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
            unsigned b = __float_as_uint(fabsf(x[i + (long long)j * ld]));
            if (i > j) l = max(l, b); else u = max(u, b);
        }
    block_max(l, out);
    block_max(u, out + 1);
}

// scale_vec: x_i *= s_i (the preconditioner's R before the factors, C after).
extern "C" __global__ void scale_vec(double* x, const double* s, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] *= s[i];
}
