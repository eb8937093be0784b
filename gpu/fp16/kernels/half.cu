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

// diag_check_f16 is lu.cu's diag_check on fp16 factors: *out (zeroed
// first) becomes −1 for a NaN or an Inf, else the smallest 1-based k with
// U(k, k) = 0, else stays 0.
extern "C" __global__ void diag_check_f16(const unsigned short* lu, long long ld, int n, int* out) {
    long long total = (long long)n * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        float v = f32_of(lu[x]);
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

// The blocked triangular solves with fp16 factors (TriSolver), one
// cooperative launch a sweep: for each block column k, t = T_kk⁻¹·x_k from
// the diagonal block's inverse (kept transposed), then x −= the block
// column's product with t, every block of the grid taking part in both,
// with a grid-wide barrier after each.

// transpose_f32 sets y = xᵀ for the m×n block x (y is n×m): 32×32 tiles
// through shared memory, 256 threads a tile.
extern "C" __global__ void transpose_f32(const float* x, long long ldx, float* y, long long ldy, int m, int n) {
    __shared__ float tile[32][33];
    int bi = blockIdx.x * 32, bj = blockIdx.y * 32, tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    for (int r = ty; r < 32; r += 8)
        if (bi + tx < m && bj + r < n) tile[r][tx] = x[(bi + tx) + (long long)(bj + r) * ldx];
    __syncthreads();
    for (int r = ty; r < 32; r += 8)
        if (bj + tx < n && bi + r < m) y[(bj + tx) + (long long)(bi + r) * ldy] = tile[tx][r];
}

// grid_barrier returns once every block of the (cooperative) grid has
// called it `round` times: count, zeroed before the launch, counts the
// arrivals.
__device__ void grid_barrier(unsigned* count, unsigned round) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(count, 1u);
        unsigned target = round * gridDim.x, v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(count) : "memory");
        } while (v < target);
        __threadfence();
    }
    __syncthreads();
}

// ld_cg reads past the SM's L1, which other blocks' writes do not reach.
__device__ float ld_cg(const float* p) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

// local_count is how many of the first n rows (blocks of nb) grid row p
// of P holds (Layout's localCount).
__device__ long long local_count(long long n, int nb, int p, int P) {
    long long blocks = n / nb, c = blocks / P * nb, extra = blocks % P;
    if (p < extra) c += nb;
    else if (p == extra) c += n % nb;
    return c;
}

// global_row maps local row l of grid row p of P back to its global row.
__device__ long long global_row(long long l, int nb, int p, int P) { return (l / nb * P + p) * nb + l % nb; }

#define SUB_WARPS 32
#define SUB_ROWS 128
#define TRI_MAX_NB 2048

// apply_rows sets t = T⁻¹·x over the width×width inverse kept transposed
// at invT (row i of T⁻¹ contiguous at invT + i·ld): eight rows a thread
// block at a time, each row's nonzeros (c ≤ i, or c ≥ i when upper) in
// four quarters over four warps with eight loads in flight a lane, the
// parts added in a fixed order.
__device__ void apply_rows(const float* invT, long long ld, int width, int upper, const float* x, float* t) {
    __shared__ float acc[SUB_WARPS];
    int wv = threadIdx.x >> 5, lane = threadIdx.x & 31, quarter = wv & 3;
    for (int base = blockIdx.x * (SUB_WARPS / 4); base < width; base += gridDim.x * (SUB_WARPS / 4)) {
        int i = base + (wv >> 2);
        float s = 0;
        if (i < width) {
            int c0 = upper ? i : 0, c1 = upper ? width : i + 1, q = (c1 - c0 + 3) / 4;
            int a1 = min(c0 + (quarter + 1) * q, c1), c = c0 + quarter * q + lane;
            const float* row = invT + (long long)i * ld;
            float p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (; c + 224 < a1; c += 256) {
#pragma unroll
                for (int u = 0; u < 8; u++) p[u] += row[c + 32 * u] * ld_cg(x + c + 32 * u);
            }
            for (; c < a1; c += 32) p[0] += row[c] * ld_cg(x + c);
            s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        }
        if (lane == 0) acc[wv] = s;
        __syncthreads();
        if (threadIdx.x < SUB_WARPS / 4 && base + threadIdx.x < width) {
            const float* a = acc + 4 * threadIdx.x;
            t[base + threadIdx.x] = (a[0] + a[1]) + (a[2] + a[3]);
        }
        __syncthreads();
    }
}

__device__ void add4(float* s, unsigned long long v, float tc) {
#pragma unroll
    for (int e = 0; e < 4; e++) s[e] += f32_of((unsigned short)(v >> (16 * e))) * tc;
}

// sub_tile sets x[g(i)] −= Σ_c a[i + c·lda]·t[c] for the SUB_ROWS local
// rows from r (those below end) of a block column in fp16 (g maps local
// rows of grid row p of P to global ones): each lane 4 consecutive rows
// (one 8-byte load a column when vec: lda, r and a aligned to 4 words),
// each warp a 32nd of the width columns, eight loads in flight; the
// warps' sums added in a fixed order. t is in shared memory.
__device__ void sub_tile(const unsigned short* a, long long lda, long long r, long long end, int width, const float* t,
                         float* x, int nb, int p, int P, int vec) {
    __shared__ float part[SUB_WARPS][SUB_ROWS + 1];
    int lane = threadIdx.x & 31, wv = threadIdx.x >> 5;
    int chunk = (width + SUB_WARPS - 1) / SUB_WARPS, c0 = min(wv * chunk, width), c1 = min(c0 + chunk, width);
    long long i = r + 4 * lane;
    float s[4] = {0, 0, 0, 0};
    const unsigned short* col = a + i + c0 * lda;
    if (vec && i + 4 <= end) {
        int c = c0;
        for (; c + 8 <= c1; c += 8, col += 8 * lda) {
            unsigned long long v[8];
#pragma unroll
            for (int u = 0; u < 8; u++) v[u] = *(const unsigned long long*)(col + u * lda);
#pragma unroll
            for (int u = 0; u < 8; u++) add4(s, v[u], t[c + u]);
        }
        for (; c < c1; c++, col += lda) add4(s, *(const unsigned long long*)col, t[c]);
    } else if (i < end) {
        for (int c = c0; c < c1; c++, col += lda) {
            float tc = t[c];
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (i + e < end) s[e] += f32_of(col[e]) * tc;
        }
    }
#pragma unroll
    for (int e = 0; e < 4; e++) part[wv][4 * lane + e] = s[e];
    __syncthreads();
    if (threadIdx.x < SUB_ROWS && r + threadIdx.x < end) {
        float sum = 0;
        for (int w = 0; w < SUB_WARPS; w++) sum += part[w][threadIdx.x];
        float* xi = x + global_row(r + threadIdx.x, nb, p, P);
        *xi = ld_cg(xi) - sum;
    }
    __syncthreads();
}

// tri_sweep_f16 solves with L̂ (forward) or Û (upper, backward) in place of
// x (fp32, n entries), the factors in fp16 over a P×Q grid in blocks of
// nb: grid (p, q)'s part at parts[p + q·P], column-major with lds[p]
// rows; block k's transposed inverse at invs[k] (nb ≤ TRI_MAX_NB).
// Launched cooperatively, a thread block of 32 warps an SM, with count
// zeroed; t holds one block's solution, which each thread block copies to
// shared memory and block 0 into x_k.
extern "C" __global__ void __launch_bounds__(32 * SUB_WARPS, 1) tri_sweep_f16(const unsigned long long* parts,
        const long long* lds, int P, int Q, const unsigned long long* invs, long long n, int nb, int upper, float* x, float* t,
        unsigned* count) {
    __shared__ float ts[TRI_MAX_NB];
    int steps = (int)((n + nb - 1) / nb);
    unsigned round = 0;
    for (int s = 0; s < steps; s++) {
        int k = upper ? steps - 1 - s : s, width = (int)min((long long)nb, n - (long long)k * nb);
        float* xk = x + (long long)k * nb;
        apply_rows((const float*)invs[k], nb, width, upper, xk, t);
        grid_barrier(count, ++round);
        for (int c = threadIdx.x; c < width; c += blockDim.x) {
            ts[c] = ld_cg(t + c);
            if (blockIdx.x == 0) xk[c] = ts[c];
        }
        __syncthreads();
        long long tile0 = 0;
        for (int p = 0; p < P; p++) {
            long long ld = lds[p], i0 = local_count(min(n, (long long)(k + 1) * nb), nb, p, P), i1 = ld;
            if (upper) i0 = 0, i1 = local_count((long long)k * nb, nb, p, P);
            const unsigned short* a = (const unsigned short*)parts[p + (k % Q) * P] + (long long)(k / Q) * nb * ld;
            int vec = ld % 4 == 0 && i0 % 4 == 0 && ((unsigned long long)a) % 8 == 0;
            long long tiles = (i1 - i0 + SUB_ROWS - 1) / SUB_ROWS;
            for (long long j = (blockIdx.x - tile0 % gridDim.x + gridDim.x) % gridDim.x; j < tiles; j += gridDim.x)
                sub_tile(a, ld, i0 + j * SUB_ROWS, i1, width, ts, x, nb, p, P, vec);
            tile0 += tiles;
        }
        grid_barrier(count, ++round);
    }
}

// zero_u32 zeroes one word: tri_sweep_f16's count, before its launch.
extern "C" __global__ void zero_u32(unsigned* w) { *w = 0; }

// Refinement's vectors kept on the device (the Residents of gpu/dense's
// and gpu/dist's factors). residual_start sets r = b and zeroes the two
// norms' words before dgemv makes r = b − A·x; residual_sub sets
// r = b − y (y = A·x, summed over a grid) and zeroes them.
extern "C" __global__ void residual_start(const double* b, double* r, unsigned long long* norms, long long n) {
    long long i0 = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i0 == 0) {
        norms[0] = 0;
        norms[1] = 0;
    }
    for (long long i = i0; i < n; i += (long long)gridDim.x * blockDim.x) {
        r[i] = b[i];
    }
}

extern "C" __global__ void residual_sub(const double* b, const double* y, double* r, unsigned long long* norms, long long n) {
    long long i0 = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i0 == 0) {
        norms[0] = 0;
        norms[1] = 0;
    }
    for (long long i = i0; i < n; i += (long long)gridDim.x * blockDim.x) {
        r[i] = b[i] - y[i];
    }
}

// residual_dw_part and residual_dw: r = b − A·x in double-word
// arithmetic (Ogita, Rump and Oishi's Dot2: each product split exactly by
// an FMA, the sum carried by TwoSum with its errors gathered in fp64),
// rounded to fp64 once, for A column-major (lda) with rows rows and cols
// columns. residual_dw_part sums the columns of one chunk (blockIdx.y)
// for a row a thread, reading A by columns as dgemv does, into the pair
// (hi, lo) of part[chunk·rows + i] and part[(chunks + chunk)·rows + i];
// residual_dw adds b and the chunks' pairs the same way, and zeroes the
// two norms' words.
extern "C" __global__ void residual_dw_part(const double* a, long long lda, long long rows, long long cols,
                                            long long chunk, const double* x, double* part) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= rows) return;
    long long j0 = blockIdx.y * chunk, j1 = j0 + chunk < cols ? j0 + chunk : cols;
    const double* ai = a + i + j0 * lda;
    double s = 0, c = 0;
#pragma unroll 4
    for (long long j = j0; j < j1; j++, ai += lda) {
        // The _rn intrinsics are never contracted into FMAs, which would
        // break TwoSum.
        double v = *ai, xj = x[j];
        double p = __dmul_rn(v, xj), pe = fma(v, xj, -p);
        double t = __dadd_rn(s, p), z = __dsub_rn(t, s);
        c = __dadd_rn(c, __dadd_rn(__dadd_rn(__dsub_rn(s, __dsub_rn(t, z)), __dsub_rn(p, z)), pe));
        s = t;
    }
    part[blockIdx.y * rows + i] = s;
    part[(gridDim.y + blockIdx.y) * rows + i] = c;
}

extern "C" __global__ void residual_dw(const double* b, const double* part, long long rows, long long chunks,
                                       double* r, unsigned long long* norms) {
    long long i0 = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i0 == 0) {
        norms[0] = 0;
        norms[1] = 0;
    }
    for (long long i = i0; i < rows; i += (long long)gridDim.x * blockDim.x) {
        double s = b[i], c = 0;
        for (long long k = 0; k < chunks; k++) {
            double p = -part[k * rows + i];
            double t = __dadd_rn(s, p), z = __dsub_rn(t, s);
            c = __dadd_rn(c, __dsub_rn(__dadd_rn(__dsub_rn(s, __dsub_rn(t, z)), __dsub_rn(p, z)), part[(chunks + k) * rows + i]));
            s = t;
        }
        r[i] = __dadd_rn(s, c);
    }
}

// pairs_sum adds residual_dw_part's chunks' pairs of each row the same
// way into one pair: out[i] the high part, out[rows + i] the low, A·x
// as double-word for a GPU's share of a product over several.
extern "C" __global__ void pairs_sum(const double* part, long long rows, long long chunks, double* out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows; i += (long long)gridDim.x * blockDim.x) {
        double s = 0, c = 0;
        for (long long k = 0; k < chunks; k++) {
            double p = part[k * rows + i];
            double t = __dadd_rn(s, p), z = __dsub_rn(t, s);
            c = __dadd_rn(c, __dadd_rn(__dadd_rn(__dsub_rn(s, __dsub_rn(t, z)), __dsub_rn(p, z)), part[(chunks + k) * rows + i]));
            s = t;
        }
        out[i] = s;
        out[rows + i] = c;
    }
}

// amax2_f64 raises norms[0] to max|r_i| and norms[1] to max|x_i|, as the
// bits of the binary64 values: non-negative doubles order as their bits,
// and a NaN's bits exceed every number's, so a NaN is reported, not
// skipped (refinement must see a non-finite iterate).
extern "C" __global__ void amax2_f64(const double* r, const double* x, long long n, unsigned long long* norms) {
    unsigned long long mr = 0, mx = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long br = __double_as_longlong(fabs(r[i])), bx = __double_as_longlong(fabs(x[i]));
        mr = br > mr ? br : mr;
        mx = bx > mx ? bx : mx;
    }
    __shared__ unsigned long long warps[2][32];
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long a = __shfl_down_sync(0xffffffffu, mr, o), b = __shfl_down_sync(0xffffffffu, mx, o);
        mr = a > mr ? a : mr;
        mx = b > mx ? b : mx;
    }
    if ((threadIdx.x & 31) == 0) {
        warps[0][threadIdx.x >> 5] = mr;
        warps[1][threadIdx.x >> 5] = mx;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (blockDim.x + 31) / 32; w++) {
            mr = warps[0][w] > mr ? warps[0][w] : mr;
            mx = warps[1][w] > mx ? warps[1][w] : mx;
        }
        atomicMax(&norms[0], mr);
        atomicMax(&norms[1], mx);
    }
}

// add_f64 sets x = x + d.
extern "C" __global__ void add_f64(double* x, const double* d, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        x[i] += d[i];
    }
}

// copy_vec_f64 sets y = x.
extern "C" __global__ void copy_vec_f64(const double* x, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = x[i];
    }
}

// scaled_to_f32 sets y = x·s in binary32 (R before the factors);
// scaled_from_f32 sets x = y·s, or x + y·s with add (C after).
extern "C" __global__ void scaled_to_f32(const double* x, const double* s, float* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = (float)(x[i] * s[i]);
    }
}

extern "C" __global__ void scaled_from_f32(const float* y, const double* s, double* x, long long n, int add) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        double v = (double)y[i] * s[i];
        x[i] = add ? x[i] + v : v;
    }
}
