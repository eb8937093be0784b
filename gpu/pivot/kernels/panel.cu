// panel.cu: the recursive panel's kernels (package pivot): the leaves of
// partial pivoting on tall column-major panels (element (i, j) at
// i + j·ld, as cuSOLVER keeps them) and their interchanges applied to the
// panel's other columns. No headers: NVRTC has none here.

// The panel's leaves: an m×w block of binary32 or binary64 values
// (w ≤ LEAF_MAX columns, m up to LEAF_GMAX·R·T rows) factored with
// partial pivoting by one grid whose blocks of T threads hold R rows a
// thread in registers (rows lo + i·T + t), so a column's elimination and
// its next candidate need no shared memory. A row's registers rotate by
// one column a step, so that column j is always r[i][0] and the loop over
// columns is not unrolled (one copy of the code, which stays in the
// instruction cache); the finished columns wrap around to the end.
//
// The blocks meet once a column through records in global memory: 64-bit
// words whose high half is the column's sequence number and low half a
// 32-bit half of a value, so a reader checks every word by itself (no
// fences; a word that is not there yet is loaded again). Each block publishes its candidate for the next column
// (largest |value| below the diagonal, the lowest row on ties, as isamax:
// value, row, and the row itself), and the thread holding the next
// diagonal row publishes that row. Every block polls the G candidates,
// picks the same pivot, then loads the two rows it needs (the winner's
// and the diagonal one) and updates its own rows: two round trips through
// L2 a column. (Loading every record's row at once, one round trip, was
// no faster on grids of 8 to 32 blocks and slower on 64 and 128, where
// the whole grid's loads of the same lines queue.) Records alternate
// between two halves: a block cannot write a record two columns ahead
// before every block has read the older one. The grid is launched
// cooperatively: the driver runs it only with every block resident.
#define LEAF_MAX 32
#define LEAF_GMAX 132
// A record: the candidate's value (one word a 32-bit half), its row, the
// row itself; a half of the records: G records, the diagonal row.
#define LEAF_RECORD(E) ((int)(sizeof(E) / 4) * (1 + LEAF_MAX) + 1)
#define LEAF_WORDS(E) (LEAF_GMAX * LEAF_RECORD(E) + (int)(sizeof(E) / 4) * LEAF_MAX)

// better orders candidates: larger magnitude, then the lower row.
template <typename E>
__device__ __forceinline__ bool better(E v, int i, E bv, int bi) {
    return v > bv || (v == bv && i < bi);
}

__device__ __forceinline__ void put_word(unsigned long long* p, unsigned int payload, unsigned int seq) {
    const unsigned long long v = ((unsigned long long)seq << 32) | payload;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned long long get_word(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// await_words loads the n words at p, all in flight together, until each
// carries seq, and leaves their payloads in out.
template <int N>
__device__ __forceinline__ void await_words(const unsigned long long* p, unsigned int seq, unsigned int (&out)[N]) {
    unsigned long long v[N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        v[k] = get_word(p + k);
    }
#pragma unroll
    for (int k = 0; k < N; k++) {
        while ((unsigned int)(v[k] >> 32) != seq) {
            v[k] = get_word(p + k);
        }
        out[k] = (unsigned int)v[k];
    }
}

// put_value writes a value as one word per 32-bit half; as_value joins
// the halves again.
__device__ __forceinline__ void put_value(unsigned long long* p, float x, unsigned int seq) {
    put_word(p, __float_as_uint(x), seq);
}
__device__ __forceinline__ void put_value(unsigned long long* p, double x, unsigned int seq) {
    const unsigned long long u = __double_as_longlong(x);
    put_word(p, (unsigned int)u, seq);
    put_word(p + 1, (unsigned int)(u >> 32), seq);
}
__device__ __forceinline__ float as_value(const unsigned int* w, float) { return __uint_as_float(w[0]); }
__device__ __forceinline__ double as_value(const unsigned int* w, double) {
    return __longlong_as_double((long long)(((unsigned long long)w[1] << 32) | w[0]));
}
__device__ __forceinline__ float fma_e(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_e(double a, double b, double c) { return fma(a, b, c); }

// leaf_candidate reduces each thread's best row (bv, bi) of the next
// column over the block and publishes the block's record to records'
// half; the thread that holds row c (the next diagonal) publishes it.
template <typename E, int R, int T>
__device__ __forceinline__ void leaf_candidate(const E (&r)[R][LEAF_MAX], int lo, int c, E bv, int bi, int half, unsigned int seq,
                                               unsigned long long* records, E (&cv)[2][T / 32], int (&ci)[2][T / 32]) {
    constexpr int W = sizeof(E) / 4;
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        E ov = __shfl_down_sync(0xffffffffu, bv, o);
        int oi = __shfl_down_sync(0xffffffffu, bi, o);
        if (better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    if (lane == 0) {
        cv[half][warp] = bv;
        ci[half][warp] = bi;
    }
    __syncthreads();
    bv = -1;
    bi = 0x7fffffff;
#pragma unroll
    for (int q = 0; q < T / 32; q++) {
        if (better(cv[half][q], ci[half][q], bv, bi)) {
            bv = cv[half][q];
            bi = ci[half][q];
        }
    }
    unsigned long long* rec = records + (long long)half * LEAF_WORDS(E);
    unsigned long long* mine = rec + b * LEAF_RECORD(E);
    if (bi == 0x7fffffff && t == 0) { // no candidate here: an empty record
        put_value(mine, bv, seq);
        put_word(mine + W, (unsigned int)bi, seq);
    }
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int g = lo + i * T + t;
        if (g == bi) {
#pragma unroll
            for (int k = 0; k < LEAF_MAX; k++) {
                put_value(mine + W + 1 + W * k, r[i][k], seq);
            }
            put_value(mine, bv, seq);
            put_word(mine + W, (unsigned int)bi, seq);
        }
        if (g == c) {
            unsigned long long* diag = rec + G * LEAF_RECORD(E);
#pragma unroll
            for (int k = 0; k < LEAF_MAX; k++) {
                put_value(diag + W * k, r[i][k], seq);
            }
        }
    }
}

template <typename E, int R, int T>
__device__ void leaf(E* a, long long lda, int m, int w, int r0, int* ipiv, int* moves, unsigned long long* records, unsigned int seq0) {
    constexpr int W = sizeof(E) / 4;
    __shared__ E rows[2][2][LEAF_MAX]; // per half: the pivot row, the diagonal row
    __shared__ E gv[2][LEAF_GMAX];
    __shared__ int gi[2][LEAF_GMAX];
    __shared__ E cv[2][T / 32];
    __shared__ int ci[2][T / 32];
    __shared__ int pos[2 * LEAF_MAX], from[2 * LEAF_MAX];
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x, lane = t & 31;
    const int lo = b * R * T;
    int npos = 0; // block 0, thread 0: position → original row
    E r[R][LEAF_MAX];
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int g = lo + i * T + t;
#pragma unroll
        for (int c = 0; c < LEAF_MAX; c++) {
            r[i][c] = g < m && c < w ? a[g + c * lda] : E(0);
        }
    }
    {
        E bv = -1;
        int bi = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < R; i++) {
            const int g = lo + i * T + t;
            const E v = fabs(r[i][0]);
            if (g < m && v > bv) { // rows ascend per thread: the first of equals stays
                bv = v;
                bi = g;
            }
        }
        leaf_candidate<E, R, T>(r, lo, 0, bv, bi, 0, seq0 + 1, records, cv, ci);
    }
#pragma unroll 1
    for (int j = 0; j < w; j++) {
        const int half = j & 1;
        const unsigned int seq = seq0 + 1 + j;
        const unsigned long long* rec = records + (long long)half * LEAF_WORDS(E);
        if (t < G) {
            unsigned int head[W + 1];
            await_words<W + 1>(rec + t * LEAF_RECORD(E), seq, head);
            gv[half][t] = as_value(head, E(0));
            gi[half][t] = (int)head[W];
        }
        __syncthreads();
        // Every warp picks the pivot from the G candidates.
        E pv = -1;
        int p = 0x7fffffff, win = -1;
        for (int q = lane; q < G; q += 32) {
            if (better(gv[half][q], gi[half][q], pv, p)) {
                pv = gv[half][q];
                p = gi[half][q];
                win = q;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            const E ov = __shfl_xor_sync(0xffffffffu, pv, o);
            const int oi = __shfl_xor_sync(0xffffffffu, p, o);
            const int ow = __shfl_xor_sync(0xffffffffu, win, o);
            if (better(ov, oi, pv, p)) {
                pv = ov;
                p = oi;
                win = ow;
            }
        }
        if (p == 0x7fffffff) { // a column of NaNs: no interchange
            p = j;
        }
        // Then the two rows: the diagonal one and the winner's.
        E* rowj = rows[half][1];
        E* prow = p == j ? rowj : rows[half][0];
        if (t < LEAF_MAX) {
            unsigned int x[W];
            await_words<W>(rec + G * LEAF_RECORD(E) + W * t, seq, x);
            rowj[t] = as_value(x, E(0));
        } else if (t < 2 * LEAF_MAX && p != j) {
            unsigned int x[W];
            await_words<W>(rec + win * LEAF_RECORD(E) + W + 1 + W * (t - LEAF_MAX), seq, x);
            prow[t - LEAF_MAX] = as_value(x, E(0));
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
                const int f = from[ij];
                from[ij] = from[ip];
                from[ip] = f;
            }
        }
        __syncthreads();
        // Interchange, eliminate below the pivot, rotate; the next
        // column's candidates.
        const E piv = prow[0];
        const int active = w - j; // columns j … w-1 are r[i][0 … active)
        E l[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const int g = lo + i * T + t;
            if (g == j || (g == p && p != j)) {
                const E* src = g == j ? prow : rowj;
#pragma unroll
                for (int c = 0; c < LEAF_MAX; c++) {
                    r[i][c] = src[c];
                }
            }
            l[i] = 0;
            if (g > j && g < m && piv != E(0)) {
                l[i] = r[i][0] / piv;
                r[i][0] = l[i];
            }
        }
        // Column by column: one entry of the pivot row live at a time.
#pragma unroll
        for (int c = 1; c < LEAF_MAX; c++) {
            if (c < active) {
                const E u = prow[c];
#pragma unroll
                for (int i = 0; i < R; i++) {
                    const int g = lo + i * T + t;
                    if (g > j && g < m && piv != E(0)) {
                        r[i][c] = fma_e(-l[i], u, r[i][c]);
                    }
                }
            }
        }
        E bv = -1;
        int bi = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < R; i++) {
            const int g = lo + i * T + t;
            const E done = r[i][0];
#pragma unroll
            for (int c = 0; c + 1 < LEAF_MAX; c++) {
                r[i][c] = r[i][c + 1];
            }
            r[i][LEAF_MAX - 1] = done;
            const E v = fabs(r[i][0]);
            if (g > j && g < m && v > bv) {
                bv = v;
                bi = g;
            }
        }
        if (j + 1 < w) {
            leaf_candidate<E, R, T>(r, lo, j + 1, bv, bi, half ^ 1, seq + 1, records, cv, ci);
        }
    }
    // After w steps r[i][c] is column (c + w) mod LEAF_MAX.
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int g = lo + i * T + t;
#pragma unroll
        for (int c = 0; c < LEAF_MAX; c++) {
            const int col = (c + w) & (LEAF_MAX - 1);
            if (g < m && col < w) {
                a[g + col * lda] = r[i][c];
            }
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

// panel_leaf_RxT (fp32) and panel_leaf_f64_RxT factor the m×w
// column-major block at a (ld lda) in place with R rows a thread and T
// threads a block (G ≤ LEAF_GMAX blocks): ipiv[j] = r0 + (pivot row) + 1
// (LAPACK's 1-based pivots, offset r0), and moves = {count,
// destinations[2w], sources[2w]}: the rows the leaf's interchanges move,
// relative to a, for the other columns. records holds 2·LEAF_WORDS(E)
// words whose sequence numbers are all at most seq0; this launch leaves
// them at seq0 + w.
#define PANEL_LEAF(NAME, E, R, T)                                                                                                \
    extern "C" __global__ void __launch_bounds__(T, 1) NAME(E* a, long long lda, int m, int w, int r0, int* ipiv, int* moves,    \
                                                            unsigned long long* records, unsigned int seq0) {                    \
        leaf<E, R, T>(a, lda, m, w, r0, ipiv, moves, records, seq0);                                                             \
    }
PANEL_LEAF(panel_leaf_1x256, float, 1, 256)
PANEL_LEAF(panel_leaf_1x512, float, 1, 512)
PANEL_LEAF(panel_leaf_4x256, float, 4, 256)
PANEL_LEAF(panel_leaf_f64_1x256, double, 1, 256)
PANEL_LEAF(panel_leaf_f64_1x512, double, 1, 512)

// leaf_swaps applies a leaf's moves (panel_leaf's) to the panel's other
// columns: ncols columns from a (at the leaf's first row), skipping the w
// columns from skip. One block per column.
template <typename E>
__device__ void leaf_swaps_in(E* a, long long lda, int ncols, int skip, int w, const int* moves) {
    __shared__ E vals[2 * LEAF_MAX];
    const int n = moves[0];
    for (int c = blockIdx.x; c < ncols; c += gridDim.x) {
        E* col = a + (long long)(c < skip ? c : c + w) * lda;
        for (int t = threadIdx.x; t < n; t += blockDim.x) vals[t] = col[moves[1 + 2 * LEAF_MAX + t]];
        __syncthreads();
        for (int t = threadIdx.x; t < n; t += blockDim.x) col[moves[1 + t]] = vals[t];
        __syncthreads();
    }
}

extern "C" __global__ void leaf_swaps(float* a, long long lda, int ncols, int skip, int w, const int* moves) {
    leaf_swaps_in(a, lda, ncols, skip, w, moves);
}

extern "C" __global__ void leaf_swaps_f64(double* a, long long lda, int ncols, int skip, int w, const int* moves) {
    leaf_swaps_in(a, lda, ncols, skip, w, moves);
}
