// scan.cu: the passes around the fused kernel. line_amax finds each row's
// (or column's) largest finite magnitude and whether it holds a NaN or Inf;
// scale_exps turns the magnitudes into power-of-two scalings; and
// patch_specials recomputes the elements of C in rows and columns with
// non-finite inputs as IEEE arithmetic would (a float64 dot product).
// Maxima are combined with atomicMax, which is order-independent: the
// results are the same every run. No headers: NVRTC has none here.

typedef unsigned int u32;

// A matrix seen as `lines` lines of `len` elements: element i of line l is
// x[l·ls + i·es]. info[l] gets the bits of the largest finite |x| (0 for
// none; info must be zeroed beforehand), and flags[l] is set to mark if
// the line holds a NaN, an Inf or a magnitude above limit (given as bits:
// one the words cannot hold), and flags[lines] to mark if any line does.
// The caller's mark is new to the flags: they need no clearing.
// gpu/gemm's amaxParams mirrors AmaxParams (TestParamsLayout).
struct AmaxParams {
    const float* x;
    long long ls;
    long long es;
    int lines;
    long long len;
    u32 limit;
    u32* info;
    u32* flags;
    u32 mark;
};

extern "C" __global__ void line_amax(const AmaxParams p) {
    // The former parameters, by name, so that the body reads as before.
    const float* x = p.x;
    const long long ls = p.ls, es = p.es, len = p.len;
    const int lines = p.lines;
    const u32 limit = p.limit, mark = p.mark;
    u32 *info = p.info, *flags = p.flags;
    u32 big = 0, bad = 0;
    int line;
    if (es == 1) {
        // Contiguous lines: one block per line and chunk, threads along it.
        line = blockIdx.x;
        long long chunk = (len + gridDim.y - 1) / gridDim.y;
        long long lo = blockIdx.y * chunk, hi = min(len, lo + chunk);
        for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
            u32 b = __float_as_uint(x[line * ls + i]) & 0x7fffffffu;
            if (b > limit) {
                bad = 1;
            }
            if (b < 0x7f800000u && b > big) {
                big = b;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            big = max(big, __shfl_xor_sync(0xffffffffu, big, o));
            bad |= __shfl_xor_sync(0xffffffffu, bad, o);
        }
        if ((threadIdx.x & 31) != 0) {
            return;
        }
    } else {
        // Lines side by side (ls = 1): one thread per line, coalesced.
        line = blockIdx.x * blockDim.x + threadIdx.x;
        if (line >= lines) {
            return;
        }
        long long chunk = (len + gridDim.y - 1) / gridDim.y;
        long long lo = blockIdx.y * chunk, hi = min(len, lo + chunk);
        for (long long i = lo; i < hi; i++) {
            u32 b = __float_as_uint(x[line * ls + i * es]) & 0x7fffffffu;
            if (b > limit) {
                bad = 1;
            }
            if (b < 0x7f800000u && b > big) {
                big = b;
            }
        }
    }
    if (big != 0) {
        atomicMax(&info[line], big);
    }
    if (bad) {
        flags[line] = mark;
        flags[lines] = mark;
    }
}

// scale_exps replaces info[l] (magnitude bits) by the exponent e of the
// largest power of two with 2^e·max ≤ theta (multiword.RowScales), clamped
// to binary32's normal range [-126, 127]; 0 for a line of zeros.
extern "C" __global__ void scale_exps(u32* info, int lines, double theta) {
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= lines) {
        return;
    }
    u32 b = info[l];
    int e = 0;
    if (b != 0) {
        double x = (double)__uint_as_float(b);
        long long xb = __double_as_longlong(x), tb = __double_as_longlong(theta);
        e = (int)((tb >> 52) & 0x7ff) - (int)((xb >> 52) & 0x7ff);
        double y = __longlong_as_double(xb + ((long long)e << 52)); // x·2^e: same exponent as theta
        if (y > theta) {
            e--;
        }
        e = max(-126, min(127, e));
    }
    info[l] = (u32)e;
}

// patch_specials sets C[i][j] for every row i of A and column j of B with a
// NaN, an Inf or an entry beyond the words' range (flags equal to this
// call's mark, from line_amax or wgmma_split) to the float64 dot product,
// rounded to binary32. Element (i, l) of A is a[i·ars + l·acs], (l, j) of B is
// b[l·brs + j·bcs], (i, j) of C is c[i·crs + j·ccs]. Does nothing, at once,
// when no input is non-finite. With update (C −= A·B, whose C the product
// kernel has already changed), the flagged elements become NaN: the
// caller's plan holds every finite input, so only NaN and Inf are flagged.
// anyA and anyB are the flags of any row and any column.
// gpu/gemm's patchParams mirrors PatchParams (TestParamsLayout).
struct PatchParams {
    const float* a;
    long long ars;
    long long acs;
    const float* b;
    long long brs;
    long long bcs;
    float* c;
    long long crs;
    long long ccs;
    int m;
    int n;
    long long k;
    const u32* rowFlags;
    const u32* colFlags;
    const u32* anyA;
    const u32* anyB;
    u32 mark;
    int update;
};

extern "C" __global__ void patch_specials(const PatchParams p) {
    // The former parameters, by name, so that the body reads as before.
    const float* a = p.a;
    const long long ars = p.ars, acs = p.acs;
    const float* b = p.b;
    const long long brs = p.brs, bcs = p.bcs;
    float* c = p.c;
    const long long crs = p.crs, ccs = p.ccs;
    const int m = p.m, n = p.n;
    const long long k = p.k;
    const u32 *rowFlags = p.rowFlags, *colFlags = p.colFlags, *anyA = p.anyA, *anyB = p.anyB;
    const u32 mark = p.mark;
    const int update = p.update;
    if (*anyA != mark && *anyB != mark) {
        return;
    }
    long long total = (long long)m * n;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < total; x += (long long)gridDim.x * blockDim.x) {
        int i = (int)(x / n), j = (int)(x % n);
        if (rowFlags[i] != mark && colFlags[j] != mark) {
            continue;
        }
        if (update) {
            c[i * crs + j * ccs] = __int_as_float(0x7fc00000);
            continue;
        }
        double s = 0.0;
        for (long long l = 0; l < k; l++) {
            s += (double)a[i * ars + l * acs] * (double)b[l * brs + j * bcs];
        }
        c[i * crs + j * ccs] = (float)s;
    }
}

// zero_u32 clears n words on the caller's stream (cuMemset would run on
// the default stream).
extern "C" __global__ void zero_u32(u32* x, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        x[i] = 0;
    }
}
