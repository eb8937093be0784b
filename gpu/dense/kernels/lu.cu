// lu.cu: the small passes of the GPU LU and its refinement, on
// column-major matrices (element (i, j) at i + j·ld, as cuSOLVER keeps
// them): row permutations, conversions between binary32 and
// binary64, and the matrix generators. No headers: NVRTC has none here.

typedef unsigned long long u64;

// shift_pivots adds r0 to n panel pivots, making them global.
extern "C" __global__ void shift_pivots(int* ipiv, int n, int r0) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        ipiv[i] += r0;
    }
}

// copy_f32 copies the m×n column-major block x (ld ldx) to y (ld ldy);
// copy_f64 likewise in fp64 (the Ozaki forms' working matrix).
template <typename T>
__device__ void copy_block(const T* x, long long ldx, T* y, long long ldy, int m, int n) {
    long long total = (long long)m * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        long long i = e % m, j = e / m;
        y[i + j * ldy] = x[i + j * ldx];
    }
}

extern "C" __global__ void copy_f32(const float* x, long long ldx, float* y, long long ldy, int m, int n) {
    copy_block(x, ldx, y, ldy, m, n);
}

extern "C" __global__ void copy_f64(const double* x, long long ldx, double* y, long long ldy, int m, int n) {
    copy_block(x, ldx, y, ldy, m, n);
}

// eye_f32 and eye_f64 set the n×n block a (ld lda) to the identity.
template <typename T>
__device__ void eye_block(T* a, long long lda, int n) {
    long long total = (long long)n * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        long long i = e % n, j = e / n;
        a[i + j * lda] = i == j ? T(1) : T(0);
    }
}

extern "C" __global__ void eye_f32(float* a, long long lda, int n) { eye_block(a, lda, n); }

extern "C" __global__ void eye_f64(double* a, long long lda, int n) { eye_block(a, lda, n); }

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

// butterfly_* apply one level of the random butterfly transform to the
// column-major n×n matrix a: out = M_l·a·N_lᵀ (gpu/butterfly.go). pairs
// holds count (top, partner) index pairs, partner −1 for an index that is
// only scaled; dr and ds are M_l's and N_l's diagonals. A thread takes
// row pair x and column pair y, reads its four entries and writes the
// four results, so a may be out (in place). Rows of a warp are
// consecutive tops: the reads and writes are coalesced.
template <typename T>
__device__ void butterfly_level(const double* a, T* out, long long n, const int* pairs, int count, const double* dr, const double* ds) {
    const double h = 0.70710678118654752440;
    for (int q = blockIdx.y; q < count; q += gridDim.y) {
        long long j = pairs[2 * q], j2 = pairs[2 * q + 1];
        double cj = j2 >= 0 ? h : 1.0;
        for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < count; p += gridDim.x * blockDim.x) {
            long long i = pairs[2 * p], i2 = pairs[2 * p + 1];
            double ci = i2 >= 0 ? h : 1.0;
            double x00 = a[i + j * n];
            double x10 = i2 >= 0 ? a[i2 + j * n] : 0.0;
            double x01 = j2 >= 0 ? a[i + j2 * n] : 0.0;
            double x11 = i2 >= 0 && j2 >= 0 ? a[i2 + j2 * n] : 0.0;
            double t0 = x00 + x10, b0 = x00 - x10;
            double t1 = x01 + x11, b1 = x01 - x11;
            out[i + j * n] = (T)(dr[i] * ci * ds[j] * cj * (t0 + t1));
            if (j2 >= 0) {
                out[i + j2 * n] = (T)(dr[i] * ci * ds[j2] * cj * (t0 - t1));
            }
            if (i2 >= 0) {
                out[i2 + j * n] = (T)(dr[i2] * ci * ds[j] * cj * (b0 + b1));
                if (j2 >= 0) {
                    out[i2 + j2 * n] = (T)(dr[i2] * ci * ds[j2] * cj * (b0 - b1));
                }
            }
        }
    }
}

extern "C" __global__ void butterfly_f64(const double* a, double* out, long long n, const int* pairs, int count, const double* dr, const double* ds) {
    butterfly_level<double>(a, out, n, pairs, count, dr, ds);
}

// butterfly_f32 is the last level, rounding the result to binary32 for
// the fp32 and tensor-core forms (in place of f64_to_f32).
extern "C" __global__ void butterfly_f32(const double* a, float* out, long long n, const int* pairs, int count, const double* dr, const double* ds) {
    butterfly_level<float>(a, out, n, pairs, count, dr, ds);
}

// permute_f64 sets y[i] = x[perm[i]]: P·x for the factors' row
// interchanges, composed into one permutation.
extern "C" __global__ void permute_f64(const double* x, double* y, const int* perm, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = x[perm[i]];
    }
}

// butterfly_vec applies one level of a butterfly to the vector x in
// place, as butterfly.mix (transposed 0: scale after mixing, M_l·x) and
// butterfly.unmixT (1: scale before, N_lᵀ·x) do, with the same operations
// in the same order.
extern "C" __global__ void butterfly_vec(double* x, const int* pairs, int count, const double* d, int transposed) {
    const double h = 0.70710678118654752440;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < count; p += gridDim.x * blockDim.x) {
        int i = pairs[2 * p], j = pairs[2 * p + 1];
        if (j < 0) {
            x[i] *= d[i];
            continue;
        }
        double a = x[i], b = x[j];
        if (transposed) {
            a *= d[i];
            b *= d[j];
            x[i] = __dmul_rn(__dadd_rn(a, b), h);
            x[j] = __dmul_rn(__dsub_rn(a, b), h);
        } else {
            x[i] = __dmul_rn(__dmul_rn(d[i], __dadd_rn(a, b)), h);
            x[j] = __dmul_rn(__dmul_rn(d[j], __dsub_rn(a, b)), h);
        }
    }
}

// The generators draw entry i from a counter-based hash of (seed, i)
// (splitmix64's finaliser), so a matrix is the same on every GPU and grid.
// Package matgen (matgen/formula.go) is their mirror in Go, line for line:
// the CPU engines draw the same matrices bit for bit. Products are
// rounded on their own (__dmul_rn: NVRTC would fuse a·b + c) and the
// fused multiply-adds are explicit, so change both or neither.
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

// fill_uniform sets x[i] uniform in (lo, hi]. With hi − lo = 1 (uniform,
// centered) the product is exact, fused or not: x[i] = lo + unit.
extern "C" __global__ void fill_uniform(double* x, long long n, u64 seed, double lo, double hi) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        x[i] = lo + (hi - lo) * unit(seed, (u64)i);
    }
}

// gen_log is ln x for x in (0, 1], and gen_cos2pi cos(2πu) for u in
// (0, 1]: Taylor polynomials by Horner's rule in fused multiply-adds, with
// the coefficients of matgen's logCoef, cosCoef and sinCoef (math
// libraries round differently from one another: CUDA's log is not Go's).
__device__ double gen_log(double x) {
    const double c[11] = {
        0x1p+00, 0x1.5555555555555p-02, 0x1.999999999999ap-03, 0x1.2492492492492p-03,
        0x1.c71c71c71c71cp-04, 0x1.745d1745d1746p-04, 0x1.3b13b13b13b14p-04, 0x1.1111111111111p-04,
        0x1.e1e1e1e1e1e1ep-05, 0x1.af286bca1af28p-05, 0x1.8618618618618p-05,
    };
    long long b = __double_as_longlong(x);
    double e = (double)(((b >> 52) & 0x7ff) - 1023);
    double m = __longlong_as_double((b & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
    if (m > 0x1.6a09e667f3bcdp+00) { // √2
        m = __dmul_rn(m, 0.5);
        e = __dadd_rn(e, 1.0);
    }
    double s = __ddiv_rn(__dsub_rn(m, 1.0), __dadd_rn(m, 1.0));
    double z = __dmul_rn(s, s);
    double p = c[10];
    for (int k = 9; k >= 0; k--) {
        p = __fma_rn(p, z, c[k]);
    }
    double lnm = __dmul_rn(2.0, __dmul_rn(s, p));
    return __fma_rn(e, 0x1.62e42fefa39efp-01, lnm); // e·ln 2 + ln m
}

__device__ double gen_cos2pi(double u) {
    const double cc[10] = {
        0x1p+00, -0x1p-01, 0x1.5555555555555p-05, -0x1.6c16c16c16c17p-10,
        0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37,
        0x1.ae7f3e733b81fp-45, -0x1.6827863b97d97p-53,
    };
    const double sc[10] = {
        0x1p+00, -0x1.5555555555555p-03, 0x1.1111111111111p-07, -0x1.a01a01a01a01ap-13,
        0x1.71de3a556c734p-19, -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41,
        0x1.952c77030ad4ap-49, -0x1.2f49b46814157p-57,
    };
    double v = __dmul_rn(4.0, u);
    double q = rint(v); // 4u = q + f exactly, |f| ≤ 1/2
    double x = __dmul_rn(__dsub_rn(v, q), 0x1.921fb54442d18p+00); // f·π/2
    double z = __dmul_rn(x, x);
    double c = cc[9], s = sc[9];
    for (int k = 8; k >= 0; k--) {
        c = __fma_rn(c, z, cc[k]);
        s = __fma_rn(s, z, sc[k]);
    }
    s = __dmul_rn(x, s);
    switch ((int)q & 3) {
    case 1:
        return -s;
    case 2:
        return -c;
    case 3:
        return s;
    }
    return c;
}

// fill_normal sets x[i] standard normal (Box–Muller on two draws).
extern "C" __global__ void fill_normal(double* x, long long n, u64 seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        double u1 = unit(seed, 2 * (u64)i), u2 = unit(seed, 2 * (u64)i + 1);
        x[i] = __dmul_rn(__dsqrt_rn(__dmul_rn(-2.0, gen_log(u1))), gen_cos2pi(u2));
    }
}

// dominate_rows sets a_ii = ±(1 + Σ_{j≠i} |a_ij|), keeping its sign:
// strictly diagonally dominant by rows. One thread per row, the sum in the
// order of j (as matgen's), the threads of a warp on adjacent rows.
extern "C" __global__ void dominate_rows(double* a, long long ld, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    double s = 1.0;
    for (int j = 0; j < n; j++) {
        if (j != i) {
            s = __dadd_rn(s, fabs(a[i + j * ld]));
        }
    }
    a[i + i * ld] = copysign(s, a[i + i * ld]);
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

// dominance counts, in out[0] and out[1] (zeroed first), the rows and
// the columns of A in which |a_ii| does not exceed the sum of the other
// entries' magnitudes by the factor 1 + 2^-20 (so that rounding A to
// binary32 keeps what it finds): none in out[0] means strictly diagonally
// dominant by rows, in out[1] by columns. rowSums are row_abs_sums's. One
// block (of 256 threads) per column.
extern "C" __global__ void dominance(const double* a, long long ld, int n, const double* rowSums, int* out) {
    __shared__ double part[8];
    const double margin = 1.0 + 0x1p-20;
    for (int c = blockIdx.x; c < n; c += gridDim.x) {
        const double* col = a + (long long)c * ld;
        double s = 0.0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            s += i == c ? 0.0 : fabs(col[i]);
        }
        for (int o = 16; o > 0; o >>= 1) {
            s += __shfl_down_sync(0xffffffffu, s, o);
        }
        if ((threadIdx.x & 31) == 0) {
            part[threadIdx.x >> 5] = s;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double off = 0.0;
            for (int w = 0; w < (blockDim.x + 31) / 32; w++) {
                off += part[w];
            }
            const double d = fabs(col[c]);
            if (!(d > margin * (rowSums[c] - d))) {
                atomicAdd(out, 1);
            }
            if (!(d > margin * off)) {
                atomicAdd(out + 1, 1);
            }
        }
        __syncthreads();
    }
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

// move_rows moves n entries of one column, the block's threads
// together: entry t goes from row from(t) to row to(t), through held
// (n entries), every read before any write, so the moves may form any
// permutation (gather_rows_f64 below, column by column; package pivot's
// Permuter does the same for the interchanges beside a panel).
template <typename T, typename From, typename To>
__device__ void move_rows(T* col, T* held, int n, From from, To to) {
    for (int t = threadIdx.x; t < n; t += blockDim.x) {
        held[t] = col[from(t)];
    }
    __syncthreads();
    for (int t = threadIdx.x; t < n; t += blockDim.x) {
        col[to(t)] = held[t];
    }
    __syncthreads();
}

// set_diag sets a_ii = d[i] for i < n.
extern "C" __global__ void set_diag(double* a, long long ld, int n, const double* d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i + i * ld] = d[i];
    }
}

// round_words copies the rows×cols block at x (ld ldx) to y (ld rows),
// each value times *scale (1 when scale is null) and rounded to nearest:
// kind 0 to binary16 and 1 to bfloat16 (y holds 16-bit words), 2 to TF32
// (y holds binary32 values with 10 fraction bits, ties away from zero as
// cvt.rna rounds).
extern "C" __global__ void round_words(const float* x, long long ldx, int rows, int cols, void* y, const float* scalep, int kind) {
    const float scale = scalep ? *scalep : 1.0f;
    // Blocks take columns, threads rows: no 64-bit division per entry.
    for (long long j = blockIdx.x; j < cols; j += gridDim.x)
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        const long long e = i + j * rows;
        float v = x[i + j * ldx] * scale;
        if (kind == 2) {
            unsigned int u;
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(v));
            ((unsigned int*)y)[e] = u;
            continue;
        }
        unsigned short h;
        if (kind == 0) {
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
        } else {
            asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
        }
        ((unsigned short*)y)[e] = h;
    }
}

// amax_f32 raises *out (binary32 bits, zeroed first) to the largest |value|
// of the rows×cols block at x (ld ldx); NaN is skipped (fmaxf).
extern "C" __global__ void amax_f32(const float* x, long long ldx, int rows, int cols, unsigned int* out) {
    float m = 0.0f;
    for (long long j = blockIdx.x; j < cols; j += gridDim.x) {
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            m = fmaxf(m, fabsf(x[i + j * ldx]));
        }
    }
    // One atomic per block: thousands of warps raising the same word one
    // by one cost more than the pass over x.
    __shared__ float warps[32];
    for (int o = 16; o > 0; o >>= 1) {
        m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
    }
    if ((threadIdx.x & 31) == 0) {
        warps[threadIdx.x >> 5] = m;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (blockDim.x + 31) / 32; w++) {
            m = fmaxf(m, warps[w]);
        }
        atomicMax(out, __float_as_uint(m));
    }
}

// fp16_scales turns amax_f32's *maxBits into the power of two s = 2^k
// that brings it into [2^14, 2^15), and zeroes *maxBits for the next
// amax_f32; 0, Inf and NaN give k = 0 (the factorization's check reports
// the last two). With other (the scale of the product's other factor,
// 2^j), k is kept within [-126 - j, 126 - j] so that alpha =
// -1/(2^k·2^j) is a normal binary32 number, and out gets s, alpha and
// beta = 1 for cuBLASLt's device pointer mode; without other, out gets s.
// Scaled, both factors stay below 2^15 and their products within the
// binary32 accumulator's range; alpha undoes the scaling exactly.
extern "C" __global__ void fp16_scales(unsigned int* maxBits, float* out, const float* other) {
    const float m = __uint_as_float(*maxBits);
    *maxBits = 0;
    int k = 0;
    if (m != 0.0f && isfinite(m)) {
        int e;
        frexpf(m, &e); // m in [2^(e-1), 2^e)
        k = 15 - e;
    }
    k = min(max(k, -126), 126);
    if (!other) {
        out[0] = ldexpf(1.0f, k);
        return;
    }
    int j;
    frexpf(*other, &j);
    j -= 1; // *other = 2^j
    k = min(max(k, -126 - j), 126 - j);
    out[0] = ldexpf(1.0f, k);
    out[1] = ldexpf(-1.0f, -(k + j));
    out[2] = 1.0f;
}

// gather_rows permutes rows r0 to r0+rows of ncols columns from a: row
// r0+i gets the entry of row src[i] (an absolute row ≥ r0). One block per
// column, which passes through shared memory whole.
extern "C" __global__ void gather_rows(float* a, long long ld, int ncols, int r0, int rows, const int* src) {
    extern __shared__ float held[];
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        float* col = a + (long long)c * ld + r0;
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            held[i] = col[i];
        }
        __syncthreads();
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            col[i] = held[src[i] - r0];
        }
        __syncthreads();
    }
}

// gather_rows_f64 is gather_rows for fp64 columns, whose rows may not fit
// in shared memory: each block gathers its column into its own rows of
// held (gridDim.x × rows in global memory, in cache), then copies them
// back.
extern "C" __global__ void gather_rows_f64(double* a, long long ld, int ncols, int r0, int rows, const int* src, double* held) {
    double* mine = held + (long long)blockIdx.x * rows;
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        move_rows(a + (long long)c * ld, mine, rows, [=](int i) { return src[i]; }, [=](int i) { return r0 + i; });
    }
}

// ===========================================================================
// Matrix classes: hpl-mxp and fasi-higham (issue 41). The twins of
// matgen/classes.go (hplDiagonal, FasiHigham.Entry), operation for
// operation; package matgen's TestDeviceTwin checks their lines.
// ===========================================================================

// hpl_mxp_rows sets a_ii = scale·Σ_{j≠i} |a_ij| on the centered matrix
// (fill_uniform from −0.5): HPL-MxP's reference generator, weakly
// dominant, for scale 1 (the product is then exact). The sum starts from 0
// and runs in the order of j, as matgen's hplDiagonal and gpu/dist's
// row_abs_sums (whole rows on a grid of one column). One thread per row.
extern "C" __global__ void hpl_mxp_rows(double* a, long long ld, int n, double scale) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int j = 0; j < n; j++) {
            if (j != i) {
                s = __dadd_rn(s, fabs(a[i + j * ld]));
            }
        }
        a[i + i * ld] = __dmul_rn(scale, s);
    }
}

// fasi_higham sets the n×n column-major a to Fasi and Higham's L·U (L
// unit lower triangular with −alpha below the diagonal, U unit upper
// triangular with −beta above): with p = fl(alpha·beta) and 0-based
// (i, j), −alpha + j·p below the diagonal, 1 + i·p on it, −beta + i·p
// above, each one fused multiply-add; then, when d1 is not null,
// fl(fl(d1[i]·a_ij)·d2[j]) (the scalings come from the host).
extern "C" __global__ void fasi_higham(double* a, long long n, double alpha, double beta, const double* d1, const double* d2) {
    const double p = __dmul_rn(alpha, beta);
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n * n; k += (long long)gridDim.x * blockDim.x) {
        long long i = k % n, j = k / n;
        double v;
        if (i > j) {
            v = __fma_rn((double)j, p, -alpha);
        } else if (i == j) {
            v = __fma_rn((double)i, p, 1.0);
        } else {
            v = __fma_rn((double)i, p, -beta);
        }
        if (d1) {
            v = __dmul_rn(__dmul_rn(d1[i], v), d2[j]);
        }
        a[k] = v;
    }
}
