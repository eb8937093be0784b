// Splitting into words (eq. 2.2 of multiword-matmul-tensor-cores.txt):
// word i = fl((x − Σ_{k<i} 2^(−t·k)·word k) · 2^(t·i)), rounded to nearest
// even in double arithmetic, so that one kernel serves every format and the
// residual x − word is exact. No headers: NVRTC has none here.

#define KIND_F16 0  // binary16 bits (unsigned short)
#define KIND_BF16 1 // bfloat16 bits (unsigned short)
#define KIND_F32 2  // float (tf32 words: 13 low bits zero)

__device__ __forceinline__ double pow2(int e) {
    return __longlong_as_double((long long)(e + 1023) << 52); // e in [-1022, 1023]
}

// roundTo rounds x to p bits with exponents from emin (gradual underflow)
// and overflows past maxv to ±Inf.
__device__ __forceinline__ double roundTo(double x, int p, int emin, double maxv) {
    long long bits = __double_as_longlong(x);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    if (x == 0.0 || e == 1024) {
        return x; // zero, Inf, NaN
    }
    if (e < emin) {
        e = emin;
    }
    double ulp = pow2(e - p + 1), inv = pow2(p - 1 - e);
    double q = x * inv, r;
    asm("cvt.rni.f64.f64 %0, %1;" : "=d"(r) : "d"(q));
    r *= ulp;
    if (r > maxv || r < -maxv) {
        r = __longlong_as_double(0x7ff0000000000000LL | (bits & 0x8000000000000000LL));
    }
    return r;
}

__device__ __forceinline__ void store(void* w, long long i, int kind, double v) {
    float f = (float)v; // exact: v has at most 24 bits in binary32's range
    if (kind == KIND_F32) {
        ((float*)w)[i] = f;
    } else if (kind == KIND_F16) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
        ((unsigned short*)w)[i] = h;
    } else if (kind == KIND_BF16) {
        ((unsigned short*)w)[i] = (unsigned short)(__float_as_uint(f) >> 16);
    }
}

__device__ __forceinline__ void split(double x, void* w0, void* w1, void* w2, void* w3, long long i,
                                      int p, int kind, int prec, int emin, double maxv, double shift) {
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (k >= p) {
            break;
        }
        double w = roundTo(x, prec, emin, maxv);
        store(k == 0 ? w0 : k == 1 ? w1 : k == 2 ? w2 : w3, i, kind, w);
        x = (x - w) * shift; // exact: the residual of a rounding, times 2^t
        if (!(x - x == 0.0)) {
            x = 0.0; // an overflowed word ends the expansion
        }
    }
}

// The split kernels' parameters: x (float or double, as the kernel's name
// says) into `words` words w0.. (up to four), each an array of n elements
// of the kind's type, rounded to prec bits with exponents from emin,
// overflowing past maxv, the residuals scaled by shift. gpu/gemm's
// splitParams mirrors SplitParams (TestParamsLayout).
struct SplitParams {
    const void* x;
    void* w0;
    void* w1;
    void* w2;
    void* w3;
    long long n;
    int words;
    int kind;
    int prec;
    int emin;
    double maxv;
    double shift;
};

extern "C" __global__ void split_f32(const SplitParams p) {
    const float* x = (const float*)p.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < p.n; i += (long long)gridDim.x * blockDim.x) {
        split((double)x[i], p.w0, p.w1, p.w2, p.w3, i, p.words, p.kind, p.prec, p.emin, p.maxv, p.shift);
    }
}

extern "C" __global__ void split_f64(const SplitParams p) {
    const double* x = (const double*)p.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < p.n; i += (long long)gridDim.x * blockDim.x) {
        split(x[i], p.w0, p.w1, p.w2, p.w3, i, p.words, p.kind, p.prec, p.emin, p.maxv, p.shift);
    }
}

// hash24 is 24 random bits for element i of stream `stream`: the top bits
// of splitmix64's finalizer of seed + stream·C + i·φ (φ = 2^64/golden
// ratio, C another odd constant). Stream 0 is the hash of earlier releases,
// so the uniform data of dist 0 and 1 are unchanged for a seed.
__device__ __forceinline__ unsigned int hash24(unsigned long long seed, long long i, unsigned long long stream) {
    unsigned long long z = seed + stream * 0xd1b54a32d192ed03ULL + (unsigned long long)i * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (unsigned int)(z >> 40);
}

// fill_random fills x with fp32 data of distribution dist, reproducible for
// a seed (a counter-based hash of seed and index: made on the device, the
// same whatever the launch shape). With u = hash24(stream 0)·2^-24, uniform
// in [0,1) and exact in float:
//
//	dist 0: 1 − u, uniform in (0,1]
//	dist 1: 0.5 − u, uniform in (−0.5,0.5]
//	dist 2: standard normal by Box–Muller, √(−2 ln u₁)·cos(2π u₂), with
//	        u₁ = (hash24(stream 1) + 1)·2^-24 in (0,1] (no log of 0; |x| ≤
//	        5.8) and u₂ = u
//	dist 3: ±10^(6v − 3), v = hash24(stream 1)/(2^24 − 1) in [0,1]:
//	        magnitudes log-uniform in [1e-3,1e3] (clamped to fp32's
//	        1e-3 and 1e3), the sign from stream 2
extern "C" __global__ void fill_random(float* x, long long n, unsigned long long seed, int dist) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float u = (float)hash24(seed, i, 0) * (1.0f / 16777216.0f); // 24 bits: exact in float
        float v;
        if (dist == 0) {
            v = 1.0f - u;
        } else if (dist == 1) {
            v = 0.5f - u;
        } else if (dist == 2) {
            float u1 = (float)(hash24(seed, i, 1) + 1u) * (1.0f / 16777216.0f); // (0,1]: exact in float
            v = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u);
        } else {
            float e = (float)hash24(seed, i, 1) * (1.0f / 16777215.0f); // [0,1]
            v = fminf(fmaxf(exp10f(6.0f * e - 3.0f), 1e-3f), 1e3f); // exp10f is within 2 ulps: stay in range
            if (hash24(seed, i, 2) & 1u) {
                v = -v;
            }
        }
        x[i] = v;
    }
}

// Helpers of the accuracy measurement: |x| in double, and float → double.
extern "C" __global__ void abs_f64(const double* x, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = x[i] < 0 ? -x[i] : x[i];
    }
}

extern "C" __global__ void f32_to_f64(const float* x, double* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = (double)x[i];
    }
}
