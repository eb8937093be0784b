// units.cu: the GPU's matrix instructions as matrix-multiply units: batches
// of independent dot products d = a·b + c evaluated by the real hardware.
//
// Each case has kp terms (kp a multiple of the instruction's K: the host pads
// with zeros) stored as raw codes of the input format, case after case, and
// c and d as raw codes of the output format. Eight cases make one instruction
// tile: case j's a is row j of A, its b column j of B, its c the element
// C[j][j], and its result D[j][j]. Every other element is zero, so the cases
// cannot disturb each other. Longer cases chain instructions through the
// accumulator, the way a GEMM loops over k.
//
// The m16n8kK instructions (fp16/bf16 K=16, tf32 K=8, fp8 K=32) share one
// fragment layout in 32-bit registers of E = 4/bytes elements: thread
// (g, t) = (lane/4, lane%4) holds A[g][tE..tE+E) in register 0 and
// A[g][tE+4E..) in register 2 (registers 1 and 3 are rows g+8, here zero),
// B[tE..tE+E)[g] and B[tE+4E..)[g] in its two B registers, and
// C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]. So the thread with g = j
// reads words t and t+4 of each 8-word step of case j, and C[j][j] lives in
// thread (j, j/2), element j%2. wgmma's register A operand uses the same
// layout in warp 0 of the warpgroup (rows 0..15); B comes from shared memory.
// No headers: NVRTC has none here.

typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

// Accumulators: four binary32 values, or four binary16 values in two words
// (C[g][2t] in the low half of word 0).
struct AccF32 {
    float r[4];
    __device__ void load(const void* c, long long base, int g, int t) {
        r[0] = r[1] = r[2] = r[3] = 0.0f;
        if (g >> 1 == t) {
            r[g & 1] = ((const float*)c)[base + g];
        }
    }
    __device__ void store(void* d, long long base, int g, int t) const {
        if (g >> 1 == t) {
            ((float*)d)[base + g] = r[g & 1];
        }
    }
};

struct AccF16 {
    u32 r[2];
    __device__ void load(const void* c, long long base, int g, int t) {
        r[0] = r[1] = 0;
        if (g >> 1 == t) {
            r[0] = (u32)((const u16*)c)[base + g] << (16 * (g & 1));
        }
    }
    __device__ void store(void* d, long long base, int g, int t) const {
        if (g >> 1 == t) {
            ((u16*)d)[base + g] = (u16)(r[0] >> (16 * (g & 1)));
        }
    }
};

#define ACC4 "+f"(acc.r[0]), "+f"(acc.r[1]), "+f"(acc.r[2]), "+f"(acc.r[3])
#define ACC2 "+r"(acc.r[0]), "+r"(acc.r[1])
#define FRAGS "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])

// One mma.sync per instruction kind: D = A·B + D.
#define MMA_F32(NAME, SHAPE_TYPES)                                                                  \
    struct NAME {                                                                                   \
        typedef AccF32 Acc;                                                                         \
        static __device__ void mma(Acc& acc, const u32* a, const u32* b) {                         \
            asm volatile("mma.sync.aligned." SHAPE_TYPES                                            \
                         " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                   \
                         : ACC4 : FRAGS);                                                           \
        }                                                                                           \
    };
#define MMA_F16(NAME, SHAPE_TYPES)                                                                  \
    struct NAME {                                                                                   \
        typedef AccF16 Acc;                                                                         \
        static __device__ void mma(Acc& acc, const u32* a, const u32* b) {                         \
            asm volatile("mma.sync.aligned." SHAPE_TYPES " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};" \
                         : ACC2 : FRAGS);                                                           \
        }                                                                                           \
    };

MMA_F32(SyncF16F32, "m16n8k16.row.col.f32.f16.f16.f32")
MMA_F16(SyncF16F16, "m16n8k16.row.col.f16.f16.f16.f16")
MMA_F32(SyncBF16F32, "m16n8k16.row.col.f32.bf16.bf16.f32")
MMA_F32(SyncTF32F32, "m16n8k8.row.col.f32.tf32.tf32.f32")
#if __CUDA_ARCH__ >= 890 // fp8 mma.sync: Ada and later
MMA_F32(SyncE4M3F32, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
MMA_F32(SyncE5M2F32, "m16n8k32.row.col.f32.e5m2.e5m2.f32")
MMA_F16(SyncE4M3F16, "m16n8k32.row.col.f16.e4m3.e4m3.f16")
MMA_F16(SyncE5M2F16, "m16n8k32.row.col.f16.e5m2.e5m2.f16")
#endif

// mmaCases runs groups of 8 cases of kp/E words each, one warp per group.
template <class Op>
__device__ void mmaCases(const u32* a, const u32* b, const void* c, void* d, long long groups, int words) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long grp = warp; grp < groups; grp += warps) {
        const u32* ar = a + (grp * 8 + g) * words;
        const u32* br = b + (grp * 8 + g) * words;
        typename Op::Acc acc;
        acc.load(c, grp * 8, g, t);
        for (int k = 0; k < words; k += 8) {
            u32 fa[4] = {ar[k + t], 0, ar[k + 4 + t], 0};
            u32 fb[2] = {br[k + t], br[k + 4 + t]};
            Op::mma(acc, fa, fb);
        }
        acc.store(d, grp * 8, g, t);
    }
}

#define MMA_KERNEL(NAME, OP)                                                                                  \
    extern "C" __global__ void NAME(const u32* a, const u32* b, const void* c, void* d, long long groups, \
                                    int words) {                                                          \
        mmaCases<OP>(a, b, c, d, groups, words);                                                          \
    }

MMA_KERNEL(mma_f16_f32, SyncF16F32)
MMA_KERNEL(mma_f16_f16, SyncF16F16)
MMA_KERNEL(mma_bf16_f32, SyncBF16F32)
MMA_KERNEL(mma_tf32_f32, SyncTF32F32)
#if __CUDA_ARCH__ >= 890
MMA_KERNEL(mma_e4m3_f32, SyncE4M3F32)
MMA_KERNEL(mma_e5m2_f32, SyncE5M2F32)
MMA_KERNEL(mma_e4m3_f16, SyncE4M3F16)
MMA_KERNEL(mma_e5m2_f16, SyncE5M2F16)
#endif

// mma_f64: m8n8k4 in binary64. A[g][t], B[t][g], C[g][2t], C[g][2t+1] per
// thread: the thread with g = j reads term t of each 4-term step of case j.
extern "C" __global__ void mma_f64(const double* a, const double* b, const double* c, double* d,
                                   long long groups, int kp) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long grp = warp; grp < groups; grp += warps) {
        const double* ar = a + (grp * 8 + g) * kp;
        const double* br = b + (grp * 8 + g) * kp;
        double r[2] = {0.0, 0.0};
        if (g >> 1 == t) {
            r[g & 1] = c[grp * 8 + g];
        }
        for (int k = 0; k < kp; k += 4) {
            asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                         : "+d"(r[0]), "+d"(r[1])
                         : "d"(ar[k + t]), "d"(br[k + t]));
        }
        if (g >> 1 == t) {
            d[grp * 8 + g] = r[g & 1];
        }
    }
}

// The fused multiply-adds of the CUDA cores, one thread per case: the
// non-tensor-core baseline d = fma(a_i, b_i, d) from c in index order.
__device__ __forceinline__ float fmaRN(float a, float b, float c) {
    asm("fma.rn.f32 %0, %1, %2, %0;" : "+f"(c) : "f"(a), "f"(b));
    return c;
}
__device__ __forceinline__ double fmaRN(double a, double b, double c) {
    asm("fma.rn.f64 %0, %1, %2, %0;" : "+d"(c) : "d"(a), "d"(b));
    return c;
}

template <class T>
__device__ void fmaCases(const T* a, const T* b, const T* c, T* d, long long n, int kp) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        T s = c[i];
        for (int k = 0; k < kp; k++) {
            s = fmaRN(a[i * kp + k], b[i * kp + k], s);
        }
        d[i] = s;
    }
}

extern "C" __global__ void fma_f32(const float* a, const float* b, const float* c, float* d, long long n, int kp) {
    fmaCases(a, b, c, d, n, kp);
}

extern "C" __global__ void fma_f64(const double* a, const double* b, const double* c, double* d, long long n, int kp) {
    fmaCases(a, b, c, d, n, kp);
}

// wgmma (sm_90a): one warpgroup of 128 threads per block, m64n8kK, A from
// registers (warp 0 holds the cases' rows, warps 1-3 zeros), B from shared
// memory as two 8×16-byte core matrices without swizzling: column n of B (a
// case's b, K-contiguous) at bytes 16n of core matrix q, which holds bytes
// 16q..16q+15 of each column. Both descriptor strides are 128 bytes, so it
// does not matter which of them the unit takes for the K direction. Only an
// sm_90a build has these kernels; elsewhere the host finds none.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ u64 wgmmaDescriptor(const void* smem) {
    u32 addr32;
    asm("{\n.reg .u64 t;\ncvta.to.shared.u64 t, %1;\ncvt.u32.u64 %0, t;\n}" : "=r"(addr32) : "l"(smem));
    u64 addr = addr32;
    const u64 stride = 128 >> 4;
    return ((addr >> 4) & 0x3fff) | (stride << 16) | (stride << 32); // bits 62-63: 0, no swizzle
}

// The whole asynchronous sequence is one asm statement, so that the compiler
// cannot touch the accumulators between issue and completion.
#define WG_END "\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}"
#define WG_F32(NAME, SHAPE_TYPES, TAIL)                                                              \
    struct NAME {                                                                                    \
        typedef AccF32 Acc;                                                                          \
        static __device__ void mma(Acc& acc, const u32* a, u64 desc) {                               \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\nwgmma.fence.sync.aligned;\n"     \
                         "wgmma.mma_async.sync.aligned." SHAPE_TYPES                                  \
                         " {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1" TAIL ";" WG_END                \
                         : ACC4                                                                      \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1)            \
                         : "memory");                                                                \
        }                                                                                            \
    };
#define WG_F16(NAME, SHAPE_TYPES, TAIL)                                                              \
    struct NAME {                                                                                    \
        typedef AccF16 Acc;                                                                          \
        static __device__ void mma(Acc& acc, const u32* a, u64 desc) {                               \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %7, 0;\nwgmma.fence.sync.aligned;\n"     \
                         "wgmma.mma_async.sync.aligned." SHAPE_TYPES                                  \
                         " {%0,%1}, {%2,%3,%4,%5}, %6, p, 1, 1" TAIL ";" WG_END                      \
                         : ACC2                                                                      \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1)            \
                         : "memory");                                                                \
        }                                                                                            \
    };

// fp16 and bf16 take a transpose flag for B (0: K-major); tf32 and fp8 do not.
WG_F32(WgF16F32, "m64n8k16.f32.f16.f16", ", 0")
WG_F16(WgF16F16, "m64n8k16.f16.f16.f16", ", 0")
WG_F32(WgBF16F32, "m64n8k16.f32.bf16.bf16", ", 0")
WG_F32(WgTF32F32, "m64n8k8.f32.tf32.tf32", "")
WG_F32(WgE4M3F32, "m64n8k32.f32.e4m3.e4m3", "")
WG_F32(WgE5M2F32, "m64n8k32.f32.e5m2.e5m2", "")
WG_F16(WgE4M3F16, "m64n8k32.f16.e4m3.e4m3", "")
WG_F16(WgE5M2F16, "m64n8k32.f16.e5m2.e5m2", "")

// wgmmaCases runs groups of 8 cases, one warpgroup (block) per group.
template <class Op>
__device__ void wgmmaCases(const u32* a, const u32* b, const void* c, void* d, long long groups, int words) {
    __shared__ __align__(128) u32 sb[64];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    u64 desc = wgmmaDescriptor(sb);
    for (long long grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const u32* ar = a + (grp * 8 + g) * words;
        const u32* br = b + (grp * 8 + g) * words;
        typename Op::Acc acc;
        acc.load(c, grp * 8, warp == 0 ? g : 8, t); // warps 1-3 hold no case: zero C
        for (int k = 0; k < words; k += 8) {
            u32 fa[4] = {0, 0, 0, 0};
            if (warp == 0) {
                fa[0] = ar[k + t];
                fa[2] = ar[k + 4 + t];
                sb[g * 4 + t] = br[k + t];
                sb[32 + g * 4 + t] = br[k + 4 + t];
            }
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncthreads();
            Op::mma(acc, fa, desc);
            __syncthreads(); // the next step overwrites B
        }
        if (warp == 0) {
            acc.store(d, grp * 8, g, t);
        }
    }
}

#define WG_KERNEL(NAME, OP)                                                                                   \
    extern "C" __global__ void __launch_bounds__(128) NAME(const u32* a, const u32* b, const void* c, void* d, \
                                                           long long groups, int words) {                     \
        wgmmaCases<OP>(a, b, c, d, groups, words);                                                            \
    }

WG_KERNEL(wgmma_f16_f32, WgF16F32)
WG_KERNEL(wgmma_f16_f16, WgF16F16)
WG_KERNEL(wgmma_bf16_f32, WgBF16F32)
WG_KERNEL(wgmma_tf32_f32, WgTF32F32)
WG_KERNEL(wgmma_e4m3_f32, WgE4M3F32)
WG_KERNEL(wgmma_e5m2_f32, WgE5M2F32)
WG_KERNEL(wgmma_e4m3_f16, WgE4M3F16)
WG_KERNEL(wgmma_e5m2_f16, WgE5M2F16)

#endif
