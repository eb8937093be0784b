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

// permute_rows moves, in each of ncols columns from a, the entry of row
// src[t] to row dst[t] for t < npairs: a permutation of those rows (the
// composed interchanges of a panel, worked out on the host). One block per
// column; all reads land in shared memory before any write.
template <typename T>
__device__ void permute_rows_in(T* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    extern __shared__ __align__(16) unsigned char permute_held[];
    T* vals = (T*)permute_held;
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        T* col = a + (long long)c * ld;
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

extern "C" __global__ void permute_rows(float* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    permute_rows_in(a, ld, ncols, dst, src, npairs);
}

// permute_rows_f64 is permute_rows for fp64 columns (the Ozaki forms).
extern "C" __global__ void permute_rows_f64(double* a, long long ld, int ncols, const int* dst, const int* src, int npairs) {
    permute_rows_in(a, ld, ncols, dst, src, npairs);
}

// set_diag sets a_ii = d[i] for i < n.
extern "C" __global__ void set_diag(double* a, long long ld, int n, const double* d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i + i * ld] = d[i];
    }
}

// The panel's leaves: an m×w block (w ≤ LEAF_MAX columns, m up to the
// whole matrix) factored with partial pivoting by one grid whose blocks
// each keep a slice of rows in shared memory. For each column every block
// publishes a record: its best candidate (largest |value| below the
// diagonal, the lowest row on ties, as isamax), that row, and, from the
// block that holds it, the diagonal row. A sequence number released last
// makes the record the barrier: a block waits only for the G records it
// reads, then every block picks the same pivot and updates its own rows.
// Records alternate between two halves: a block cannot write a record
// two columns ahead before every block has read the older one. The grid
// must fit on the GPU at once.
#define LEAF_MAX 32
#define LEAF_THREADS 512
#define LEAF_RECORD (4 + 2 * LEAF_MAX) // seq, value, row, pad, candidate row, diagonal row

// Polled with relaxed loads (an acquire load at every poll would cost an
// L1 invalidation each); one fence after the wait orders what follows.
__device__ __forceinline__ unsigned int load_relaxed(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release(unsigned int* p, unsigned int v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Loads from L2, past the SM's own L1: the values come from other blocks.
__device__ __forceinline__ float load_cg(const float* p) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return v;
}

// better orders candidates: larger magnitude, then the lower row.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
    return v > bv || (v == bv && i < bi);
}

// block_best reduces each thread's candidate (v, i) over the block; every
// thread gets the result.
__device__ void block_best(float& v, int& i) {
    __shared__ float wv[LEAF_THREADS / 32];
    __shared__ int wi[LEAF_THREADS / 32];
    const int t = threadIdx.x, nw = blockDim.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_down_sync(0xffffffffu, v, o);
        int oi = __shfl_down_sync(0xffffffffu, i, o);
        if (better(ov, oi, v, i)) {
            v = ov;
            i = oi;
        }
    }
    __syncthreads(); // wv, wi free from the last call
    if ((t & 31) == 0) {
        wv[t >> 5] = v;
        wi[t >> 5] = i;
    }
    __syncthreads();
    v = -1.0f;
    i = 0x7fffffff;
    for (int q = 0; q < nw; q++) {
        if (better(wv[q], wi[q], v, i)) {
            v = wv[q];
            i = wi[q];
        }
    }
}

// leaf_publish writes this block's record for column jn from warp 0.
__device__ void leaf_publish(const float* sm, int rpb, int lo, int mine, int w, int jn, float bv, int bi, float* rec, unsigned int seq) {
    const int t = threadIdx.x;
    if (t >= 32) {
        return;
    }
    if (t == 0) {
        rec[1] = bv;
        ((int*)rec)[2] = bi;
    }
    for (int c = t; c < w; c += 32) {
        if (bi != 0x7fffffff) {
            rec[4 + c] = sm[(bi - lo) + c * rpb];
        }
        if (jn >= lo && jn < lo + mine) {
            rec[4 + LEAF_MAX + c] = sm[(jn - lo) + c * rpb];
        }
    }
    __syncwarp();
    if (t == 0) {
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        store_release((unsigned int*)rec, seq);
    }
}

// panel_leaf factors the m×w column-major block at a (ld lda) in place with
// partial pivoting: ipiv[j] = r0 + (pivot row) + 1 (LAPACK's 1-based
// pivots, offset r0), and moves = {count, destinations[2w], sources[2w]}:
// the rows the leaf's interchanges move, relative to a, for the other
// columns. records holds 2·G·LEAF_RECORD words whose sequence numbers are
// all at most seq0; this launch leaves them at seq0 + w. Dynamic shared
// memory: (ceil(m/G) + 2)·w + G·(w + 2) floats.
extern "C" __global__ void __launch_bounds__(LEAF_THREADS) panel_leaf(float* a, long long lda, int m, int w, int r0, int* ipiv,
                                                                     int* moves, float* records, unsigned int seq0) {
    extern __shared__ float sm[];
    __shared__ int s_p, s_win;
    __shared__ int pos[2 * LEAF_MAX], from[2 * LEAF_MAX], npos; // block 0: position → original row
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    const int rpb = (m + G - 1) / G;
    const int lo = b * rpb, mine = max(0, min(m, lo + rpb) - lo);
    float* prow = sm + (long long)rpb * w; // the pivot row
    float* rowj = prow + w;                // the row it displaces
    float* got = rowj + w;                 // the G records: value, row, candidate row
    for (int c = 0; c < w; c++) {
        for (int r = t; r < mine; r += blockDim.x) {
            sm[r + c * rpb] = a[(long long)(lo + r) + c * lda];
        }
    }
    if (t == 0) {
        npos = 0;
    }
    __syncthreads();
    float bv = -1.0f;
    int bi = 0x7fffffff;
    for (int r = t; r < mine; r += blockDim.x) {
        float v = fabsf(sm[r]);
        if (v > bv) { // rows ascend per thread: the first of equals stays
            bv = v;
            bi = lo + r;
        }
    }
    block_best(bv, bi);
    leaf_publish(sm, rpb, lo, mine, w, 0, bv, bi, records + b * LEAF_RECORD, seq0 + 1);
    for (int j = 0; j < w; j++) {
        const unsigned int seq = seq0 + 1 + j;
        const float* half = records + (j & 1) * G * LEAF_RECORD;
        for (int q = t; q < G; q += blockDim.x) {
            while (load_relaxed((const unsigned int*)(half + q * LEAF_RECORD)) != seq) {
            }
        }
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        __syncthreads();
        for (int x = t; x < G * (w + 2); x += blockDim.x) {
            int q = x / (w + 2), f = x % (w + 2);
            got[x] = load_cg(half + q * LEAF_RECORD + (f < 2 ? 1 + f : 2 + f));
        }
        const int owner = j / rpb;
        for (int c = t; c < w; c += blockDim.x) {
            rowj[c] = load_cg(half + owner * LEAF_RECORD + 4 + LEAF_MAX + c);
        }
        __syncthreads();
        if (t < 32) {
            float v = -1.0f;
            int i = 0x7fffffff, win = -1;
            for (int q = t; q < G; q += 32) {
                float qv = got[q * (w + 2)];
                int qi = __float_as_int(got[q * (w + 2) + 1]);
                if (better(qv, qi, v, i)) {
                    v = qv;
                    i = qi;
                    win = q;
                }
            }
            for (int o = 16; o > 0; o >>= 1) {
                float ov = __shfl_down_sync(0xffffffffu, v, o);
                int oi = __shfl_down_sync(0xffffffffu, i, o);
                int ow = __shfl_down_sync(0xffffffffu, win, o);
                if (better(ov, oi, v, i)) {
                    v = ov;
                    i = oi;
                    win = ow;
                }
            }
            if (t == 0) {
                if (i == 0x7fffffff) { // a column of NaNs: no interchange
                    i = j;
                }
                s_p = i;
                s_win = win;
            }
        }
        __syncthreads();
        const int p = s_p, win = s_win;
        for (int c = t; c < w; c += blockDim.x) {
            prow[c] = p == j ? rowj[c] : got[win * (w + 2) + 2 + c];
        }
        __syncthreads();
        if (p != j && p >= lo && p < lo + mine) {
            for (int c = t; c < w; c += blockDim.x) {
                sm[(p - lo) + c * rpb] = rowj[c];
            }
        }
        if (j >= lo && j < lo + mine) {
            for (int c = t; c < w; c += blockDim.x) {
                sm[(j - lo) + c * rpb] = prow[c];
            }
        }
        if (b == 0 && t == 0) {
            ipiv[j] = r0 + p + 1;
            if (p != j) {
                int ij = -1, ip = -1;
                for (int q = 0; q < npos; q++) {
                    ij = pos[q] == j ? q : ij;
                    ip = pos[q] == p ? q : ip;
                }
                if (ij < 0) {
                    ij = npos++;
                    pos[ij] = j;
                    from[ij] = j;
                }
                if (ip < 0) {
                    ip = npos++;
                    pos[ip] = p;
                    from[ip] = p;
                }
                int f = from[ij];
                from[ij] = from[ip];
                from[ip] = f;
            }
        }
        __syncthreads();
        // Eliminate below the pivot; column j+1's candidates on the way.
        const float piv = prow[j];
        const int jn = j + 1;
        bv = -1.0f;
        bi = 0x7fffffff;
        for (int r = max(jn - lo, 0) + t; r < mine; r += blockDim.x) {
            if (piv != 0.0f) {
                float l = sm[r + j * rpb] / piv;
                sm[r + j * rpb] = l;
                for (int c = jn; c < w; c++) {
                    sm[r + c * rpb] = fmaf(-l, prow[c], sm[r + c * rpb]);
                }
            }
            if (jn < w) {
                float v = fabsf(sm[r + jn * rpb]);
                if (v > bv) {
                    bv = v;
                    bi = lo + r;
                }
            }
        }
        if (jn < w) {
            block_best(bv, bi); // its barriers also order the updates before the record
            leaf_publish(sm, rpb, lo, mine, w, jn, bv, bi, records + ((jn & 1) * G + b) * LEAF_RECORD, seq + 1);
        }
    }
    __syncthreads();
    for (int c = 0; c < w; c++) {
        for (int r = t; r < mine; r += blockDim.x) {
            a[(long long)(lo + r) + c * lda] = sm[r + c * rpb];
        }
    }
    if (b == 0 && t == 0) {
        int n = 0;
        for (int q = 0; q < npos; q++) {
            if (pos[q] != from[q]) {
                moves[1 + n] = pos[q];
                moves[1 + 2 * LEAF_MAX + n] = from[q];
                n++;
            }
        }
        moves[0] = n;
    }
}

// leaf_swaps applies a leaf's moves (panel_leaf's) to the panel's other
// columns: ncols columns from a (at the leaf's first row), skipping the w
// columns from skip. One block per column.
extern "C" __global__ void leaf_swaps(float* a, long long lda, int ncols, int skip, int w, const int* moves) {
    __shared__ float vals[2 * LEAF_MAX];
    const int n = moves[0];
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        float* col = a + (long long)(c < skip ? c : c + w) * lda;
        for (int t = threadIdx.x; t < n; t += blockDim.x) {
            vals[t] = col[moves[1 + 2 * LEAF_MAX + t]];
        }
        __syncthreads();
        for (int t = threadIdx.x; t < n; t += blockDim.x) {
            col[moves[1 + t]] = vals[t];
        }
        __syncthreads();
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
        double* col = a + (long long)c * ld;
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            mine[i] = col[src[i]];
        }
        __syncthreads();
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            col[r0 + i] = mine[i];
        }
        __syncthreads();
    }
}
