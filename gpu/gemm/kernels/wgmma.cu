// wgmma.cu: the Hopper (sm_90a) multiword GEMM with FABsum: warpgroup MMAs
// (wgmma) on words staged through an mbarrier pipeline, a persistent grid.
// The words are split once per tile, either ahead of the kernel
// (PRESPLIT: wgmma_split below writes word tiles in the layout shared
// memory wants, and the producer's thread 0 copies them with the bulk copy
// engine) or in shared memory (a producer warpgroup splits fp32 tiles that
// the tensor copy engine, TMA, stages). Splitting ahead measured 2.35×
// SGEMM against 2.16× (docs/perf/wgmma-h100.md): the split no longer takes
// the consumers' issue slots.
//
// C = A·B from fp32 A (m×k) and B (k×n), 128×128 outputs per tile, 32 k
// per pipeline item. Block of 384 threads, three warpgroups:
//   WG0 producer (PRESPLIT: thread 0 copies word tiles into SW stages).
//       Otherwise thread 0 keeps SF fp32 stages of A and B in flight (TMA,
//       zeros outside the matrices); all 128 threads split each staged
//       tile into NWORDS words (rows of A and columns of B scaled by 2^ea,
//       2^eb first) and write them, K-major in the canonical 8×16-byte core
//       matrices wgmma reads, into one of SW word stages.
//   WG1, WG2 consumers: rows 0-63 and 64-127 of the tile. Every product
//       A_iB_j, smallest first, goes into ONE tensor-core accumulator, per
//       k-step or (JPROD) each over the item in turn (the plan's
//       FABsumJoint order; one word: the plain FABsum order); every BITEMS
//       items (b = 32·BITEMS elements) the
//       accumulator is promoted into the FABsum sum on the CUDA cores and
//       the next block starts from zero (wgmma's scale-d = 0). The two
//       take turns to issue each item's MMAs (ping-pong), so that one
//       promotes while the tensor cores run the other's.
//   SUM 0 plain (one word only), 1 v1 fp32, 2 v2 fp64 (with GROUP > 1
//   through an fp32 sum of GROUP blocks), 3 pair (TwoSum).
// Every sum has a fixed order: same inputs, same bits.
//
// Configuration (NVRTC -D from gpu/gemm's wgmmaConfig; none has a default
// here, so Go and C cannot disagree): WORD (0 binary16, 1 bfloat16, 2
// tf32), NWORDS, ALLPAIRS, AK (A row-major), BKM (B column-major), SUM, SF,
// SW (stages; SF 0 with PRESPLIT), PRESPLIT, GROUP, GROUP_WREG, JPROD
// (products in turn over the block, which must be one item), UPDATE; the
// tile BM, BN, BK, the blocks THREADS and SPLIT_THREADS, and SHARED_BYTES,
// the launch's dynamic shared memory. BITSN, PREGS, CREGS below are tuning
// knobs of this file alone. wgmma_gemm takes one WgmmaParams after the
// tensor maps, wgmma_split one WgmmaSplitParams (gpu/gemm's wgmmaParams,
// wgmmaSplitParams).
// NaN, Inf and out-of-range rows and columns are recomputed afterwards by
// scan.cu's patch_specials, as for fused.cu. Compile with --fmad=false.

typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

#if !defined(WORD) || !defined(NWORDS) || !defined(ALLPAIRS) || !defined(AK) || !defined(BKM) || !defined(SUM)
#error WORD, NWORDS, ALLPAIRS, AK, BKM and SUM must be set by the Go side (gpu/gemm/config.go)
#endif
#if !defined(SF) || !defined(SW) || !defined(PRESPLIT) || !defined(GROUP) || !defined(GROUP_WREG) || !defined(JPROD)
#error SF, SW, PRESPLIT, GROUP, GROUP_WREG and JPROD must be set by the Go side (gpu/gemm/config.go)
#endif
#if !defined(UPDATE) || !defined(BM) || !defined(BN) || !defined(BK) || !defined(THREADS) || !defined(SPLIT_THREADS)
#error UPDATE, BM, BN, BK, THREADS and SPLIT_THREADS must be set by the Go side (gpu/gemm/config.go)
#endif
#if !defined(SHARED_BYTES)
#error SHARED_BYTES must be set by the Go side (gpu/gemm/config.go)
#endif
#if BM != 128 || BN != 128 || BK != 32 || THREADS != 384 || SPLIT_THREADS != 128
#error the warpgroups of wgmma.cu are written for 128x128x32 tiles, 384 threads, and 128 to split a tile
#endif
#if PRESPLIT && SF != 0
#error presplit words take no fp32 stages: SF must be 0
#endif
#if WORD == 2
#define ESZ 4
#define KSTEP 8
#else
#define ESZ 2
#define KSTEP 16
#endif
#define KSTEPS (BK / KSTEP)
#define KC (BK * ESZ / 16)        // 16-byte chunks per row of a word tile
#define WTILE (128 * BK * ESZ)    // bytes of one word of a 128-row tile
#define STAGE_F32 (2 * 128 * BK * 4)
#define STAGE_WORDS (2 * NWORDS * WTILE)

// Registers per thread after setmaxnreg: the producers need few, the
// consumers hold an accumulator and a FABsum pair per output. The block
// starts with 168 (65536 / 384, rounded down to a multiple of 8), and
// 128·PREGS + 256·CREGS must not exceed 384·168 (72/216 uses it all).
// BITSN: see promote4.
#ifndef BITSN
#define BITSN 2
#endif
// With PRESPLIT the producer only issues copies: 40 and 232 (CUTLASS's
// split for two consumer warpgroups).
#ifndef PREGS
#define PREGS (PRESPLIT ? 40 : 72)
#endif
#ifndef CREGS
#define CREGS (PRESPLIT ? 232 : 216)
#endif
// GROUP (v2 and pair): the block sums go into an fp32 sum of GROUP blocks
// (rounded to nearest, on the fp32 pipes), and only that sum into the fp64
// one (pair: into the TwoSum pair, fp32 too): fp64 additions, which wait
// behind the other consumer's wgmma on Hopper, drop GROUP-fold. Registers
// cannot hold the accumulator, the group sum and the fp64 sum (or pair) of
// 64 outputs (256), so the fp64 sums of
// outputs GROUP_WREG..63 live in shared memory. gpu/gemm/wgmma.go passes 40
// for binary16 words (48 KB for the block; with fp16, 44 and 48 measured no
// faster and 32 4-7 % slower at n = 16384: each flush moves these sums
// through shared memory, which the other consumer's wgmma reads) and 48
// for the larger word stages of bfloat16 and tf32 (32 KB: one more stage
// fits), and 32 for pairs (with 40, TwoSum's temporaries spilled). All
// compile without spills.
#if (SUM == 2 || SUM == 3) && GROUP > 1
#define GROUPED 1
#define WREG GROUP_WREG
#define WIDE_SMEM (256 * (64 - WREG) * 8)
#else
#define GROUPED 0
#define WREG 64
#define WIDE_SMEM 0
#endif
// The stages, the fp64 sums and the mbarriers (sfull[SF], wfull[SW],
// wempty[SW]) behind up to 1024 bytes of alignment slack: wgmmaStages'
// sum in gpu/gemm/wgmma.go.
static_assert(SHARED_BYTES == 1024 + SF * STAGE_F32 + SW * STAGE_WORDS + WIDE_SMEM + 8 * (SF + 2 * SW),
              "the launch's shared memory must hold the stages (wgmmaStages)");
#define STR2(x) #x
#define STR(x) STR2(x)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

struct __align__(64) TMap {
    u64 v[16];
};

__device__ __forceinline__ u32 smemAddr(const void* p) {
    u32 a;
    asm("{\n.reg .u64 t;\ncvta.to.shared.u64 t, %1;\ncvt.u32.u64 %0, t;\n}" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ float pow2f(int e) { return __uint_as_float((u32)(e + 127) << 23); }
__device__ __forceinline__ double pow2d(int e) { return __longlong_as_double((long long)(e + 1023) << 52); }

__device__ __forceinline__ void mbarInit(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarArrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbarExpect(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarWait(u32 bar, u32 parity) {
    asm volatile("{\n.reg .pred p;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WAIT;\n}" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}
// bulkLoad copies bytes (a multiple of 16) from global src to shared dst.
__device__ __forceinline__ void bulkLoad(u32 dst, const void* src, u32 bytes, u32 bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"((u64)src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void tmaLoad(u32 dst, const TMap* map, int x, int y, u32 bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"((u64)map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}

// Shared memory of one word tile, K-major without swizzling: core matrix
// (8 rows × 16 bytes) (r/8, c) at ((r/8)·KC + c)·128 bytes. wgmma's
// descriptor: LBO, between core matrices adjacent in K, 128 bytes; SBO,
// between those adjacent in M or N, KC·128.
__device__ __forceinline__ u64 descriptor(u32 addr) {
    return (u64)((addr >> 4) & 0x3fff) | ((u64)(128 >> 4) << 16) | ((u64)(KC * 128 >> 4) << 32);
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define D64 D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
#define DREGS "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#if WORD == 0
#define WG_OP "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " DREGS ", %64, %65, p, 1, 1, 0, 0;\n"
#elif WORD == 1
#define WG_OP "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " DREGS ", %64, %65, p, 1, 1, 0, 0;\n"
#else
#define WG_OP "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " DREGS ", %64, %65, p, 1, 1;\n"
#endif

// d = A·B (+ d unless zero): 64 rows × 128 columns, one k-step.
__device__ __forceinline__ void wgmma(float* d, u64 da, u64 db, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" WG_OP "}" : D64 : "l"(da), "l"(db), "r"(accumulate));
}
// wgmmaWaitD names the accumulators, so that the compiler reads them only
// after the tensor cores are done (the plain sum's epilogue). The other
// waits must not: the compiler would copy the accumulators around them.
__device__ __forceinline__ void wgmmaWaitD(float* d) { asm volatile("wgmma.wait_group.sync.aligned 0;" : D64::"memory"); }
__device__ __forceinline__ void wgmmaWait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
__device__ __forceinline__ void wgmmaWait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }
__device__ __forceinline__ void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// The FABsum accumulator of one element (as fused.cu). add is asm
// volatile: it must stay after the wait for the MMAs (the waits do not
// name the accumulators, which would make the compiler copy them).
struct Wide {
#if SUM == 2
    double v; // promote4 adds to it, four at a time
    __device__ void zero() { v = 0.0; }
    __device__ float value(int e) const { return (float)(v * pow2d(e)); }
    // load and store move it to and from shared memory (8 bytes).
    __device__ void load(u32 a) { asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(a) : "memory"); }
    __device__ void store(u32 a) const { asm volatile("st.shared.f64 [%0], %1;" ::"r"(a), "d"(v) : "memory"); }
#elif SUM == 3
    float hi, lo;
    __device__ void zero() { hi = lo = 0.0f; }
    // Knuth's TwoSum: s + e = hi + x exactly; hi = s, lo += e.
    __device__ void add(float x) {
        asm volatile("{\n.reg .f32 s, bb, t, u;\n"
                     "add.rn.f32 s, %0, %2;\n"
                     "sub.rn.f32 bb, s, %0;\n"
                     "sub.rn.f32 t, s, bb;\n"
                     "sub.rn.f32 t, %0, t;\n"
                     "sub.rn.f32 u, %2, bb;\n"
                     "add.rn.f32 t, t, u;\n"
                     "add.rn.f32 %1, %1, t;\n"
                     "mov.f32 %0, s;\n}"
                     : "+f"(hi), "+f"(lo)
                     : "f"(x));
    }
    __device__ float value(int e) const { return (float)((double)(hi + lo) * pow2d(e)); }
    __device__ void load(u32 a) { asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(hi), "=f"(lo) : "r"(a) : "memory"); }
    __device__ void store(u32 a) const { asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(hi), "f"(lo) : "memory"); }
#else
    float v;
    __device__ void zero() { v = 0.0f; }
    __device__ void add(float x) { asm volatile("add.rn.f32 %0, %0, %1;" : "+f"(v) : "f"(x)); }
    __device__ float value(int e) const { return (float)((double)v * pow2d(e)); }
#endif
};

// promote4 adds four block sums into their FABsum accumulators. v2
// converts all four before it adds, so that the conversions overlap (one
// at a time, ptxas kept two in flight). cvt.f64.f32 runs at 16 per clock
// per SM, so for fp16 words the last BITSN of the four go through the
// integer pipes instead: x's bits shifted right by 3, sign kept, are the
// double x·2^-896, exactly, for every finite x (zero and subnormals too),
// and one fma scales it back and adds it with one rounding, as add does.
// Not for Inf and NaN, which fp16 products cannot make of an fp32 block
// (or group) sum of finite words (NaN and Inf inputs are patched
// afterwards). Two of four measured best with groups of 8 (1 and 4: up to
// 3 % slower at n = 16384, 3 no faster); the flushes of the sums in shared
// memory take the same path.
#if WORD != 0
#undef BITSN
#define BITSN 0
#endif
// Operands: %0-%3 the sums, %4-%7 the block sums, %8-%11 their bits.
#define PCVT(i, x) "cvt.f64.f32 t" #i ", %" #x ";\n"
#define PADD(i) "add.rn.f64 %" #i ", %" #i ", t" #i ";\n"
#define PBIT(i, u) "shr.s32 h, %" #u ", 3;\nand.b32 h, h, 0x8fffffff;\nshl.b32 l, %" #u ", 29;\nmov.b64 t" #i ", {l, h};\n"
#define PFMA(i) "fma.rn.f64 %" #i ", t" #i ", 0d77F0000000000000, %" #i ";\n"
__device__ __forceinline__ void promote4(Wide* w, const float* x) {
#if SUM == 2
    asm volatile("{\n.reg .f64 t0, t1, t2, t3;\n.reg .b32 h, l;\n"
#if BITSN >= 4
                 PBIT(0, 8)
#else
                 PCVT(0, 4)
#endif
#if BITSN >= 3
                 PBIT(1, 9)
#else
                 PCVT(1, 5)
#endif
#if BITSN >= 2
                 PBIT(2, 10)
#else
                 PCVT(2, 6)
#endif
#if BITSN >= 1
                 PBIT(3, 11)
#else
                 PCVT(3, 7)
#endif
#if BITSN >= 4
                 PFMA(0)
#else
                 PADD(0)
#endif
#if BITSN >= 3
                 PFMA(1)
#else
                 PADD(1)
#endif
#if BITSN >= 2
                 PFMA(2)
#else
                 PADD(2)
#endif
#if BITSN >= 1
                 PFMA(3)
#else
                 PADD(3)
#endif
                 "}"
                 : "+d"(w[0].v), "+d"(w[1].v), "+d"(w[2].v), "+d"(w[3].v)
                 : "f"(x[0]), "f"(x[1]), "f"(x[2]), "f"(x[3]), "r"(__float_as_uint(x[0])),
                   "r"(__float_as_uint(x[1])), "r"(__float_as_uint(x[2])), "r"(__float_as_uint(x[3])));
#else
#pragma unroll
    for (int i = 0; i < 4; i++) {
        w[i].add(x[i]);
    }
#endif
}

// split8 scales eight consecutive-k values of one line, splits them into
// the words and hands each word's 8·ESZ bytes, as 16-byte pieces, to
// st(offset in the tile, four words): line r, chunk c8·ESZ/2 of the
// canonical layout. The same code splits in shared memory (splitTile) and
// ahead of the kernel (wgmma_split), so both give the same words.
template <class Store>
__device__ __forceinline__ void split8(Store st, int r, int c8, float v[8], float s) {
    const u32 row = ((r >> 3) * KC) * 128 + (r & 7) * 16;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        v[j] *= s;
    }
#pragma unroll
    for (int w = 0; w < NWORDS; w++) {
#if WORD == 2
        u32 b[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            u32 u = __float_as_uint(v[j]);
            b[j] = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u; // 10 fraction bits, ties to even
            if (w + 1 < NWORDS) { // the last word leaves no residual to compute
                v[j] = v[j] - __uint_as_float(b[j]);
            }
        }
        const u32 p = row + w * WTILE + (2 * c8) * 128;
        st(p, b[0], b[1], b[2], b[3]);
        st(p + 128, b[4], b[5], b[6], b[7]);
#else
        u32 h[4];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            float flo, fhi;
#if WORD == 0
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h[q]) : "f"(v[2 * q + 1]), "f"(v[2 * q]));
            if (w + 1 == NWORDS) {
                continue;
            }
            u16 l16, h16;
            asm("mov.b32 {%0, %1}, %2;" : "=h"(l16), "=h"(h16) : "r"(h[q]));
            asm("cvt.f32.f16 %0, %1;" : "=f"(flo) : "h"(l16));
            asm("cvt.f32.f16 %0, %1;" : "=f"(fhi) : "h"(h16));
#else
            asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(h[q]) : "f"(v[2 * q + 1]), "f"(v[2 * q]));
            if (w + 1 == NWORDS) {
                continue;
            }
            flo = __uint_as_float(h[q] << 16);
            fhi = __uint_as_float(h[q] & 0xffff0000u);
#endif
            v[2 * q] -= flo; // exact: the residual of a rounding
            v[2 * q + 1] -= fhi;
        }
        st(row + w * WTILE + c8 * 128, h[0], h[1], h[2], h[3]);
#endif
    }
}

// A thread splits 4 pieces (one line, 8 consecutive k) of each 128-line ×
// 32-k tile: piece i of lane `lane` of warp pw is line pieceLine, k-chunk
// pieceK8 (see splitTile for why). lineScales, splitTile and wgmma_split
// must agree on it.
__device__ __forceinline__ int pieceLine(int kContig, int pw, int lane, int i) {
    return kContig ? pw * 8 + (lane & 7) + 32 * i : pw * 32 + lane;
}
__device__ __forceinline__ int pieceK8(int kContig, int lane, int i) { return kContig ? lane >> 3 : i; }

// splitTile splits one staged fp32 tile of 128 lines (rows of A, columns
// of B) × 32 k into word tiles at dst. kContig: the stage holds 128-byte
// lines of k, swizzled by the copy engine (16-byte chunk j of line r at
// chunk j ^ (r mod 8)). Lane l takes line l mod 8 and k 8·(l/8): each
// quarter-warp of 16-byte accesses then reads 8 distinct chunks and writes
// one 128-byte core-matrix row, without bank conflicts (lines l/4 and k
// l mod 4 made the stores 4-way conflicted). Otherwise the stage is 32
// k-rows of 128 lines.
template <int kContig>
__device__ __forceinline__ void splitTile(const float* stage, u32 dst, const float* sc, int pw, int lane) {
    // Two (line, 8 k) pieces at a time: both loads in flight before the
    // stores, which the compiler may not move them past.
#pragma unroll
    for (int i0 = 0; i0 < 4; i0 += 2) {
        float v[2][8];
        int r[2], c8[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int i = i0 + h;
            r[h] = pieceLine(kContig, pw, lane, i);
            c8[h] = pieceK8(kContig, lane, i);
            if (kContig) {
                const u32 line = smemAddr(stage + r[h] * 32);
#pragma unroll
                for (int q = 0; q < 2; q++) {
                    asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
                                 : "=f"(v[h][4 * q]), "=f"(v[h][4 * q + 1]), "=f"(v[h][4 * q + 2]), "=f"(v[h][4 * q + 3])
                                 : "r"(line + ((((2 * c8[h] + q) ^ (r[h] & 7))) << 4))
                                 : "memory");
                }
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    v[h][j] = stage[(8 * c8[h] + j) * 128 + r[h]];
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            split8([&](u32 off, u32 x, u32 y, u32 z, u32 w) {
                asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" ::"r"(dst + off), "r"(x), "r"(y), "r"(z), "r"(w));
            }, r[h], c8[h], v[h], kContig ? sc[i0 + h] : sc[0]);
        }
    }
}

// The tiles in a persistent block's order: groups of 8 tile-rows walked
// column by column, so that concurrent blocks share A and B in L2.
__device__ __forceinline__ void tileCoords(int t, int tilesM, int tilesN, int& tm, int& tn) {
    const int group = 8 * tilesN, first = (t / group) * 8;
    const int size = min(tilesM - first, 8);
    tm = first + (t % group) % size;
    tn = (t % group) / size;
}

// lineScales loads the scales 2^e of the lines a producer thread splits.
template <int kContig>
__device__ __forceinline__ void lineScales(const int* e, int base, int lim, int pw, int lane, float* sc) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int r = base + pieceLine(kContig, pw, lane, i);
        sc[i] = (e && r < lim) ? pow2f(e[r]) : 1.0f;
    }
}

// wgmma_gemm's parameters after the tensor maps (gpu/gemm's wgmmaParams
// mirrors this struct; TestParamsLayout pins the two). bitems: FABsum's
// block in items; wordsA, wordsB: the presplit words (PRESPLIT).
struct WgmmaParams {
    float* C;
    long long ldc;
    int c_rowmajor;
    int M;
    int N;
    int K;
    const int* ea;
    const int* eb;
    int bitems;
    const char* wordsA;
    const char* wordsB;
};

// The tensor maps stay parameters of their own: the copy engine reads them
// where they are, __grid_constant__ and 64-byte aligned.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_gemm(const __grid_constant__ TMap tmA, const __grid_constant__ TMap tmB, const WgmmaParams p) {
    // The former parameters, by name, so that the body reads as before.
    float* const C = p.C;
    const long long ldc = p.ldc;
    const int c_rowmajor = p.c_rowmajor, M = p.M, N = p.N, K = p.K;
    const int* __restrict__ ea = p.ea;
    const int* __restrict__ eb = p.eb;
    const int bitems = p.bitems;
    const char* __restrict__ wordsA = p.wordsA;
    const char* __restrict__ wordsB = p.wordsB;
    (void)bitems, (void)wordsA, (void)wordsB; // unused in some configurations, as the parameters were
    extern __shared__ char smemRaw[];
    // The copy engine's 128-byte swizzle needs 1024-byte aligned stages.
    char* smem = smemRaw + ((1024 - (smemAddr(smemRaw) & 1023)) & 1023);
    const u32 sbase = smemAddr(smem);
#if !PRESPLIT
    const u32 stageF = sbase;                       // SF × (A, B) fp32
#endif
    const u32 stageW = sbase + SF * STAGE_F32;      // SW × (A words, B words)
    const u32 wideS = stageW + SW * STAGE_WORDS;    // GROUPED: fp64 sums of outputs WREG..63
    const u32 bars = wideS + WIDE_SMEM;             // sfull[SF], wfull[SW], wempty[SW]
    const u32 sfull = bars, wfull = bars + 8 * SF, wempty = wfull + 8 * SW;

    const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31;
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN, tiles = tilesM * tilesN;
    const int ktiles = (K + BK - 1) / BK;
    if (tid == 0) {
        for (int s = 0; s < SF; s++) {
            mbarInit(sfull + 8 * s, 1);
        }
        for (int s = 0; s < SW; s++) {
            mbarInit(wfull + 8 * s, PRESPLIT ? 1 : 128);
            mbarInit(wempty + 8 * s, 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    const int myTiles = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int items = myTiles * ktiles;

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 " STR(PREGS) ";");
#if PRESPLIT
        // The words are in global memory, tile after tile (wgmma_split):
        // thread 0 copies an item's A and B words into the next free word
        // stage with two bulk copies.
        if (tid == 0) {
            int kt = 0, tl = 0, tm = 0, tn = 0, sw = 0, swPhase = 0;
            const u32 wbytes = NWORDS * WTILE;
            for (int it = 0; it < items; it++) {
                if (kt == 0) {
                    tileCoords(blockIdx.x + tl * gridDim.x, tilesM, tilesN, tm, tn);
                }
                mbarWait(wempty + 8 * sw, swPhase ^ 1);
                const u32 wa = stageW + sw * STAGE_WORDS, bar = wfull + 8 * sw;
                mbarExpect(bar, STAGE_WORDS);
                bulkLoad(wa, wordsA + ((long long)tm * ktiles + kt) * wbytes, wbytes, bar);
                bulkLoad(wa + wbytes, wordsB + ((long long)tn * ktiles + kt) * wbytes, wbytes, bar);
                if (++kt == ktiles) {
                    kt = 0;
                    tl++;
                }
                if (++sw == SW) {
                    sw = 0;
                    swPhase ^= 1;
                }
            }
        }
#else
        const int pw = tid >> 5;
        // Thread 0 issues the items in order: item (tile it_, k-tile ik)
        // into fp32 stage is. Stages, phases and tiles are counters, not
        // quotients: a division by a runtime value is some 20 dependent
        // instructions per item in both loops.
        int it_ = 0, ik = 0, itm = 0, itn = 0;
        auto issue = [&](int is) {
            if (ik == 0) {
                tileCoords(blockIdx.x + it_ * gridDim.x, tilesM, tilesN, itm, itn);
            }
            const int k0 = ik * BK;
            const u32 dA = stageF + is * STAGE_F32, dB = dA + STAGE_F32 / 2, bar = sfull + 8 * is;
            mbarExpect(bar, STAGE_F32);
#if AK
            tmaLoad(dA, &tmA, k0, itm * BM, bar);
#else
            tmaLoad(dA, &tmA, itm * BM, k0, bar);
#endif
#if BKM
            tmaLoad(dB, &tmB, k0, itn * BN, bar);
#else
            tmaLoad(dB, &tmB, itn * BN, k0, bar);
#endif
            if (++ik == ktiles) {
                ik = 0;
                it_++;
            }
        };
        if (tid == 0) {
            for (int i = 0; i < SF && i < items; i++) {
                issue(i);
            }
        }
        float sa[4], sb[4];
        int kt = 0, tl = 0, sf = 0, sfPhase = 0, sw = 0, swPhase = 0;
        for (int it = 0; it < items; it++) {
            if (kt == 0) {
                int tm, tn;
                tileCoords(blockIdx.x + tl * gridDim.x, tilesM, tilesN, tm, tn);
                lineScales<AK>(ea, tm * BM, M, pw, lane, sa);
                lineScales<BKM>(eb, tn * BN, N, pw, lane, sb);
            }
            mbarWait(sfull + 8 * sf, sfPhase);
            mbarWait(wempty + 8 * sw, swPhase ^ 1);
            const float* fa = (const float*)(smem + sf * STAGE_F32);
            const u32 wa = stageW + sw * STAGE_WORDS, wb = wa + NWORDS * WTILE;
            splitTile<AK>(fa, wa, sa, pw, lane);
            splitTile<BKM>(fa + STAGE_F32 / 8, wb, sb, pw, lane);
            // The tensor cores read what these generic stores wrote.
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            mbarArrive(wfull + 8 * sw);
            // Every producer thread is done with fp32 stage sf: refill it.
            asm volatile("bar.sync 1, 128;" ::: "memory");
            if (tid == 0 && it + SF < items) {
                issue(sf); // item it + SF, into the stage just emptied
            }
            if (++kt == ktiles) {
                kt = 0;
                tl++;
            }
            if (++sf == SF) {
                sf = 0;
                sfPhase ^= 1;
            }
            if (++sw == SW) {
                sw = 0;
                swPhase ^= 1;
            }
        }
#endif
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 " STR(CREGS) ";");
        const int c = wg - 1, warp = (tid >> 5) & 3;
        // The consumers take turns to issue an item's MMAs (named barriers
        // 2 and 3, ping-pong): warpgroup 0's then finish first, and it
        // promotes while the tensor cores run warpgroup 1's, and so on.
        // Issued at the same time, both finished together and both
        // promoted together, competing for the 16 conversions per clock
        // while the tensor cores idled. Warpgroup 1 grants the first turn
        // and one after each item; warpgroup 0 takes the one left over
        // after its last item.
        if (c == 1) {
            asm volatile("bar.arrive 2, 256;" ::: "memory");
        }
        float d[64];
#if SUM != 0
        Wide wide[WREG];
#endif
#if GROUPED
        float mid[64]; // the group's fp32 sums
        const u32 wideMine = wideS + (tid - 128) * 8; // + (j − WREG)·2048: output j's fp64 sum
#endif
        for (int j = 0; j < 64; j++) {
            d[j] = 0.0f;
        }
        int sw = 0, swPhase = 0;
        for (int tl = 0; tl < myTiles; tl++) {
            int tm, tn;
            tileCoords(blockIdx.x + tl * gridDim.x, tilesM, tilesN, tm, tn);
#if SUM != 0
#pragma unroll
            for (int j = 0; j < WREG; j++) {
                wide[j].zero();
            }
#endif
#if GROUPED
#pragma unroll
            for (int j = 0; j < 64; j++) {
                mid[j] = 0.0f;
                if (j >= WREG) {
                    Wide w;
                    w.zero();
                    w.store(wideMine + (j - WREG) * 2048);
                }
            }
            int inGroup = 0;
#endif
            int fresh = 1, pending = -1, inBlock = 0;
            for (int kt = 0; kt < ktiles; kt++) {
                mbarWait(wfull + 8 * sw, swPhase);
                if (c == 0) {
                    asm volatile("bar.sync 2, 256;" ::: "memory");
                } else {
                    asm volatile("bar.sync 3, 256;" ::: "memory");
                }
                const u32 wa = stageW + sw * STAGE_WORDS + c * (64 / 8) * KC * 128, wb = stageW + sw * STAGE_WORDS + NWORDS * WTILE;
                wgmmaFence();
                // Products smallest first: by decreasing i+j, A_iB_j before
                // A_jB_i for i > j (multiword.Triangle, AllPairs); JPROD:
                // each over the item's k-steps in turn (multiword's
                // JointProducts; the item is the block), else the products
                // take turns k-step by k-step (JointSteps).
#pragma unroll
                for (int x = 0; x < KSTEPS * NWORDS * NWORDS * 2; x++) {
                    const int ks = JPROD ? x % KSTEPS : x / (NWORDS * NWORDS * 2);
                    const int q = JPROD ? x / KSTEPS : x % (NWORDS * NWORDS * 2);
                    const int s = 2 * (NWORDS - 1) - q / NWORDS, i = NWORDS - 1 - q % NWORDS, j = s - i;
                    if (s < 0 || j < 0 || j >= NWORDS || (!ALLPAIRS && s > NWORDS - 1)) {
                        continue;
                    }
                    const u32 off = ks * (KSTEP * ESZ / 16) * 128;
                    wgmma(d, descriptor(wa + i * WTILE + off), descriptor(wb + j * WTILE + off), !fresh);
                    fresh = 0;
                }
                wgmmaCommit();
                // The other's turn.
                if (c == 0) {
                    asm volatile("bar.arrive 3, 256;" ::: "memory");
                } else {
                    asm volatile("bar.arrive 2, 256;" ::: "memory");
                }
                wgmmaWait1();
                if (pending >= 0 && lane == 0) {
                    mbarArrive(wempty + 8 * pending);
                }
                pending = sw;
                if (++sw == SW) {
                    sw = 0;
                    swPhase ^= 1;
                }
#if SUM != 0
                const bool promote = ++inBlock == bitems || kt + 1 == ktiles;
#else
                const bool promote = kt + 1 == ktiles;
#endif
                if (promote) {
#if SUM == 0
                    wgmmaWaitD(d);
#else
                    wgmmaWait0();
#endif
                    if (lane == 0) {
                        mbarArrive(wempty + 8 * pending);
                    }
                    pending = -1;
#if GROUPED
                    inBlock = 0;
#pragma unroll
                    for (int j = 0; j < 64; j++) {
                        asm volatile("add.rn.f32 %0, %0, %1;" : "+f"(mid[j]) : "f"(d[j]));
                    }
                    fresh = 1;
                    if (++inGroup == GROUP || kt + 1 == ktiles) {
                        inGroup = 0;
#pragma unroll
                        for (int j = 0; j < WREG; j += 4) {
                            promote4(&wide[j], &mid[j]);
                        }
#pragma unroll
                        for (int j = WREG; j < 64; j += 4) {
                            Wide w[4];
#pragma unroll
                            for (int q = 0; q < 4; q++) {
                                w[q].load(wideMine + (j + q - WREG) * 2048);
                            }
                            promote4(w, &mid[j]);
#pragma unroll
                            for (int q = 0; q < 4; q++) {
                                w[q].store(wideMine + (j + q - WREG) * 2048);
                            }
                        }
#pragma unroll
                        for (int j = 0; j < 64; j++) {
                            mid[j] = 0.0f;
                        }
                    }
#elif SUM != 0
                    inBlock = 0;
#pragma unroll
                    for (int j = 0; j < 64; j += 4) {
                        promote4(&wide[j], &d[j]);
                    }
                    fresh = 1;
#endif
                }
            }
            // Epilogue: element j of this thread is row 16·warp + lane/4
            // (+8 for j mod 4 ≥ 2), column 8·(j/4) + 2·(lane mod 4) + j mod 2.
            // Columns in pairs: one 8-byte store where C is row-major and
            // 8-byte aligned, so that a row's 8 columns fill one 32-byte
            // sector (two 4-byte stores used half of each, ncu says).
            auto value = [&](int j, int ex) -> float {
#if GROUPED
                if (j < WREG) {
                    return wide[j].value(ex);
                }
                Wide w;
                w.load(wideMine + (j - WREG) * 2048);
                return w.value(ex);
#elif SUM != 0
                return wide[j].value(ex);
#else
                return (float)((double)d[j] * pow2d(ex));
#endif
            };
            const int row0 = tm * BM + c * 64 + warp * 16 + (lane >> 2), col0 = tn * BN + 2 * (lane & 3);
            const bool pairs = c_rowmajor && (ldc & 1) == 0 && ((u64)C & 7) == 0;
            int er[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                er[h] = (ea && row0 + 8 * h < M) ? ea[row0 + 8 * h] : 0;
            }
#pragma unroll
            for (int g = 0; g < 16; g++) {
                const int col = col0 + 8 * g;
                const int ec0 = (eb && col < N) ? eb[col] : 0, ec1 = (eb && col + 1 < N) ? eb[col + 1] : 0;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int row = row0 + 8 * h, j = 4 * g + 2 * h;
                    if (row >= M || col >= N) {
                        continue;
                    }
                    float v0 = value(j, -(er[h] + ec0)), v1 = value(j + 1, -(er[h] + ec1));
#if UPDATE
                    // C −= A·B: the old C less the product, rounded again.
                    if (c_rowmajor) {
                        v0 = C[(long long)row * ldc + col] - v0;
                        v1 = col + 1 < N ? C[(long long)row * ldc + col + 1] - v1 : 0.0f;
                    } else {
                        v0 = C[(long long)col * ldc + row] - v0;
                        v1 = col + 1 < N ? C[(long long)(col + 1) * ldc + row] - v1 : 0.0f;
                    }
#endif
                    if (pairs && col + 1 < N) {
                        asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(C + (long long)row * ldc + col), "f"(v0), "f"(v1) : "memory");
                    } else if (c_rowmajor) {
                        C[(long long)row * ldc + col] = v0;
                        if (col + 1 < N) {
                            C[(long long)row * ldc + col + 1] = v1;
                        }
                    } else {
                        C[(long long)col * ldc + row] = v0;
                        if (col + 1 < N) {
                            C[(long long)(col + 1) * ldc + row] = v1;
                        }
                    }
                }
            }
        }
        if (c == 0) {
            asm volatile("bar.sync 2, 256;" ::: "memory"); // the turn left over
        }
    }
}

// splitTileAhead splits tile t (line tile lt, k-tile kt) of X, which holds
// `lines` lines (rows of A, columns of B) of K elements, element (line l,
// k) at l·ld + k if kContig, else at k·ld + l, into its NWORDS word
// tiles, in the layout the kernel's shared memory wants, at out +
// (lt·ktiles + kt)·NWORDS·WTILE; lines and k past the matrix are zeros, as
// the copy engine gives. A block of 128 threads splits one tile as
// splitTile does (same lanes, so the 16-byte stores of a quarter-warp fill
// one 128-byte row). flags, if not null, takes line_amax's flags
// (flags[l], and flags[lines] for any line: set to mark) for entries whose
// magnitude bits exceed limit (NaN, Inf, beyond the words' range): an
// unscaled plan needs no scan before the split.
__device__ __forceinline__ void splitTileAhead(const float* __restrict__ X, long long ld, int kContig, int lines, int K,
                                               const int* __restrict__ e, char* __restrict__ out, long long t, u32 limit,
                                               u32* __restrict__ flags, u32 mark) {
    const int lane = threadIdx.x & 31, pw = threadIdx.x >> 5;
    const int ktiles = (K + BK - 1) / BK;
    const int lt = (int)(t / ktiles), kt = (int)(t % ktiles);
    char* tile = out + t * (NWORDS * WTILE);
    auto st = [&](u32 off, u32 x, u32 y, u32 z, u32 w) {
        asm volatile("st.global.v4.b32 [%0], {%1,%2,%3,%4};" ::"l"(tile + off), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
    };
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int r = pieceLine(kContig, pw, lane, i), c8 = pieceK8(kContig, lane, i);
        const int l = lt * BM + r, k0 = kt * BK + 8 * c8;
        float v[8];
        u32 bad = 0;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            v[j] = 0.0f;
            if (l < lines && k0 + j < K) {
                v[j] = kContig ? X[(long long)l * ld + k0 + j] : X[(long long)(k0 + j) * ld + l];
            }
            bad |= (__float_as_uint(v[j]) & 0x7fffffffu) > limit;
        }
        if (bad && flags) {
            flags[l] = mark;
            flags[lines] = mark;
        }
        split8(st, r, c8, v, (e && l < lines) ? pow2f(e[l]) : 1.0f);
    }
}

// wgmma_split splits A's tA tiles and then B's tB ahead of the kernel
// (PRESPLIT), both in one launch (one launch fewer before the product).
// The operand is chosen before the one call: two inlined calls measured
// 30 µs at n = 2048, against 27 for two launches.
//
// Its parameters: for A then B, the fp32 matrix X, its leading dimension,
// whether k is contiguous, its lines, scale exponents (null: none), the
// output words, the tiles and the line flags (null: none); then K and the
// flags' limit and mark (gpu/gemm's wgmmaSplitParams mirrors this struct).
struct WgmmaSplitParams {
    const float* XA;
    long long ldA;
    int kContigA;
    int linesA;
    const int* eA;
    char* outA;
    long long tA;
    u32* flagsA;
    const float* XB;
    long long ldB;
    int kContigB;
    int linesB;
    const int* eB;
    char* outB;
    long long tB;
    u32* flagsB;
    int K;
    u32 limit;
    u32 mark;
};

extern "C" __global__ void __launch_bounds__(SPLIT_THREADS) wgmma_split(const WgmmaSplitParams p) {
    for (long long t = blockIdx.x; t < p.tA + p.tB; t += gridDim.x) {
        const bool a = t < p.tA;
        splitTileAhead(a ? p.XA : p.XB, a ? p.ldA : p.ldB, a ? p.kContigA : p.kContigB, a ? p.linesA : p.linesB, p.K,
                       a ? p.eA : p.eB, a ? p.outA : p.outB, a ? t : t - p.tA, p.limit, a ? p.flagsA : p.flagsB,
                       p.mark);
    }
}

#endif
