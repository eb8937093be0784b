// fakecuda.c: fake CUDA libraries for testing package gpu on a machine
// without a GPU (TestFakeCUDA builds and uses them). Compiled four times:
//
//   -DFAKE_DRIVER    libcuda.so.1          device memory is host memory
//   -DFAKE_NVRTC     libnvrtc.so.13        a "CUBIN" is the source, tagged
//   -DFAKE_BUILTINS  libnvrtc-builtins.so.13.0 (must be loaded before compiling)
//   -DFAKE_CUBLASLT  libcublasLt.so.13     a plain triple loop in double
//
// Each function checks what the real one would reject and what the Go side
// must get right: a current context on the calling thread, pointers into
// live allocations, argument values past the sixth (passed on the stack),
// struct layouts. The C signatures are those of cuda.h, nvrtc.h and
// cublasLt.h.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef FAKE_DRIVER

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    INVALID_CONTEXT = 201,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
};

static int initialized;
static int retained;
static char primary_ctx;
static __thread void *current; // the context bound to this thread

#define NEED_INIT \
    if (!initialized) return NOT_INITIALIZED
#define NEED_CTX \
    NEED_INIT;   \
    if (current != &primary_ctx) return INVALID_CONTEXT

CUresult cuInit(unsigned flags) {
    if (flags != 0) return INVALID_VALUE;
    initialized = 1;
    return SUCCESS;
}

CUresult cuDriverGetVersion(int *v) {
    const char *e = getenv("FAKE_CUDA_DRIVER_VERSION");
    *v = e ? atoi(e) : 13000;
    return SUCCESS;
}

static const char *names[][2] = {
    {"CUDA_SUCCESS", "no error"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
};

static int describe(CUresult r, const char **name, const char **msg) {
    switch (r) {
    case 0: case 1: case 2: case 3:
        *name = names[r][0], *msg = names[r][1];
        return 1;
    case INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE", *msg = "invalid device ordinal"; return 1;
    case INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE", *msg = "device kernel image is invalid"; return 1;
    case INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT", *msg = "invalid device context"; return 1;
    case INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE", *msg = "invalid resource handle"; return 1;
    case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND", *msg = "named symbol not found"; return 1;
    case ILLEGAL_ADDRESS: *name = "CUDA_ERROR_ILLEGAL_ADDRESS", *msg = "an illegal memory access was encountered"; return 1;
    }
    return 0;
}

CUresult cuGetErrorName(CUresult r, const char **s) {
    const char *m;
    return describe(r, s, &m) ? SUCCESS : INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult r, const char **s) {
    const char *n;
    return describe(r, &n, s) ? SUCCESS : INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) { NEED_INIT; *n = 1; return SUCCESS; }

CUresult cuDeviceGet(int *d, int ordinal) {
    NEED_INIT;
    if (ordinal != 0) return INVALID_DEVICE;
    *d = 0;
    return SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
    NEED_INIT;
    if (dev != 0 || len <= 0) return INVALID_VALUE;
    snprintf(name, len, "Fake GPU (mwmm tests)");
    return SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    NEED_INIT;
    if (dev != 0) return INVALID_DEVICE;
    switch (attr) {
    case 16: *v = 132; return SUCCESS;     // MULTIPROCESSOR_COUNT
    case 75: *v = 9; return SUCCESS;       // COMPUTE_CAPABILITY_MAJOR
    case 76: *v = 0; return SUCCESS;       // COMPUTE_CAPABILITY_MINOR
    case 97: *v = 232448; return SUCCESS;  // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    }
    return INVALID_VALUE;
}

#define TOTAL (80ull << 30)
static size_t allocated;

CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) {
    NEED_INIT;
    if (dev != 0) return INVALID_DEVICE;
    *bytes = TOTAL;
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    NEED_INIT;
    if (dev != 0) return INVALID_DEVICE;
    retained++;
    *ctx = &primary_ctx;
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
    NEED_INIT;
    if (dev != 0 || retained <= 0) return INVALID_CONTEXT;
    retained--;
    return SUCCESS;
}

CUresult cuCtxSetCurrent(void *ctx) {
    NEED_INIT;
    if (ctx != NULL && ctx != &primary_ctx) return INVALID_CONTEXT;
    current = ctx;
    return SUCCESS;
}

CUresult cuCtxSynchronize(void) { NEED_CTX; return SUCCESS; }

// Allocations, to check every device pointer we are given.
#define MAXALLOC 65536
static struct { char *p; size_t n; } allocs[MAXALLOC];

static int find(CUdeviceptr p) {
    for (int i = 0; i < MAXALLOC; i++)
        if (allocs[i].p == (char *)p) return i;
    return -1;
}

// valid reports whether [p, p+n) lies in one live allocation.
int fake_cuda_valid(CUdeviceptr p, size_t n) {
    for (int i = 0; i < MAXALLOC; i++)
        if (allocs[i].p && (char *)p >= allocs[i].p && (char *)p + n <= allocs[i].p + allocs[i].n) return 1;
    return 0;
}

// fake_cuda_current_ok reports whether the calling thread has the context
// (for the fake cuBLASLt, which shares the driver's state).
int fake_cuda_current_ok(void) { return initialized && current == &primary_ctx; }

CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
    NEED_CTX;
    *total = TOTAL;
    *free = TOTAL - allocated;
    return SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    NEED_CTX;
    if (n == 0) return INVALID_VALUE;
    if (n > TOTAL - allocated) return OUT_OF_MEMORY;
    int i = find(0);
    if (i < 0) return OUT_OF_MEMORY;
    char *m = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!m) return OUT_OF_MEMORY;
    memset(m, 0xa5, n); // like real memory: not zero
    allocs[i].p = m, allocs[i].n = n;
    allocated += n;
    *p = (CUdeviceptr)m;
    return SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    NEED_CTX;
    int i = find(p);
    if (p == 0 || i < 0) return INVALID_VALUE;
    free(allocs[i].p);
    allocated -= allocs[i].n;
    allocs[i].p = NULL, allocs[i].n = 0;
    return SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
    NEED_CTX;
    if (!fake_cuda_valid(dst, n) || !src) return INVALID_VALUE;
    memcpy((void *)dst, src, n);
    return SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
    NEED_CTX;
    if (!fake_cuda_valid(src, n) || !dst) return INVALID_VALUE;
    memcpy(dst, (void *)src, n);
    return SUCCESS;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    NEED_CTX;
    if (!fake_cuda_valid(dst, n) || !fake_cuda_valid(src, n)) return INVALID_VALUE;
    memmove((void *)dst, (void *)src, n);
    return SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
    NEED_CTX;
    if (!fake_cuda_valid(p, n)) return INVALID_VALUE;
    memset((void *)p, v, n);
    return SUCCESS;
}

CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n) {
    NEED_CTX;
    if (p % 4 || !fake_cuda_valid(p, 4 * n)) return INVALID_VALUE;
    for (size_t i = 0; i < n; i++) ((unsigned *)p)[i] = v;
    return SUCCESS;
}

// A module is the source text after the fake NVRTC's tag line (which
// starts like an ELF file, as a real CUBIN does).
#define TAG "\177ELF FAKECUBIN sm_90a\n"
typedef struct { char *src; } module;
typedef struct { module *m; char name[64]; int shared; } function;

CUresult cuModuleLoadData(void **m, const void *image) {
    NEED_CTX;
    if (!image || strncmp(image, TAG, strlen(TAG)) != 0) return INVALID_IMAGE;
    module *mod = calloc(1, sizeof *mod);
    mod->src = strdup((const char *)image + strlen(TAG));
    *m = mod;
    return SUCCESS;
}

CUresult cuModuleUnload(void *m) {
    NEED_CTX;
    module *mod = m;
    if (!mod) return INVALID_HANDLE;
    free(mod->src);
    free(mod);
    return SUCCESS;
}

CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    NEED_CTX;
    module *mod = m;
    char pat[128];
    snprintf(pat, sizeof pat, "void %s(", name);
    if (!mod || !strstr(mod->src, pat) || strlen(name) >= 64) return NOT_FOUND;
    function *fn = calloc(1, sizeof *fn);
    fn->m = mod;
    strcpy(fn->name, name);
    fn->shared = 48 << 10;
    *f = fn;
    return SUCCESS;
}

CUresult cuFuncSetAttribute(void *f, int attr, int v) {
    NEED_CTX;
    function *fn = f;
    if (!fn || attr != 8 || v < 0 || v > 232448) return INVALID_VALUE; // MAX_DYNAMIC_SHARED_SIZE_BYTES
    fn->shared = v;
    return SUCCESS;
}

static char streams[64]; // stream handles are addresses in here
static int stream_live[64];

static int stream_ok(void *s) {
    if (s == NULL) return 1;
    long i = (char *)s - streams;
    return i >= 0 && i < 64 && stream_live[i];
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
    NEED_CTX;
    function *fn = f;
    if (!fn || extra != NULL || !stream_ok(stream)) return INVALID_VALUE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024) return INVALID_VALUE;
    if (shared > (unsigned)fn->shared) return INVALID_VALUE;
    if (strcmp(fn->name, "fill_u32") == 0) {
        unsigned *p = *(unsigned **)params[0];
        unsigned v = *(unsigned *)params[1];
        unsigned long long n = *(unsigned long long *)params[2];
        if (!fake_cuda_valid((CUdeviceptr)p, 4 * n)) return ILLEGAL_ADDRESS;
        for (unsigned long long i = 0; i < n; i++) p[i] = v;
        return SUCCESS;
    }
    if (strcmp(fn->name, "echo_args") == 0) {
        unsigned long long *out = *(unsigned long long **)params[0];
        if (!fake_cuda_valid((CUdeviceptr)out, 48)) return ILLEGAL_ADDRESS;
        out[0] = (unsigned long long)(long long)*(int *)params[1];
        out[1] = *(unsigned *)params[2];
        out[2] = (unsigned long long)*(long long *)params[3];
        out[3] = *(unsigned long long *)params[4];
        memcpy(out + 4, params[5], 4);
        memcpy(out + 5, params[6], 8);
        return SUCCESS;
    }
    return NOT_FOUND;
}

CUresult cuStreamCreate(void **s, unsigned flags) {
    NEED_CTX;
    if (flags > 1) return INVALID_VALUE;
    for (int i = 0; i < 64; i++)
        if (!stream_live[i]) {
            stream_live[i] = 1;
            *s = streams + i;
            return SUCCESS;
        }
    return OUT_OF_MEMORY;
}

CUresult cuStreamSynchronize(void *s) {
    NEED_CTX;
    return stream_ok(s) ? SUCCESS : INVALID_HANDLE;
}

CUresult cuStreamDestroy_v2(void *s) {
    NEED_CTX;
    if (s == NULL || !stream_ok(s)) return INVALID_HANDLE;
    stream_live[(char *)s - streams] = 0;
    return SUCCESS;
}

typedef struct { double t; int recorded; } event;

CUresult cuEventCreate(void **e, unsigned flags) {
    NEED_CTX;
    if (flags != 0) return INVALID_VALUE;
    *e = calloc(1, sizeof(event));
    return SUCCESS;
}

CUresult cuEventRecord(void *e, void *s) {
    NEED_CTX;
    if (!e || !stream_ok(s)) return INVALID_HANDLE;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ((event *)e)->t = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    ((event *)e)->recorded = 1;
    return SUCCESS;
}

CUresult cuEventSynchronize(void *e) {
    NEED_CTX;
    return e ? SUCCESS : INVALID_HANDLE;
}

CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
    NEED_CTX;
    event *s = start, *e = end;
    if (!s || !e || !s->recorded || !e->recorded) return INVALID_HANDLE;
    *ms = (float)(e->t - s->t) + 0.001f;
    return SUCCESS;
}

CUresult cuEventDestroy_v2(void *e) {
    NEED_CTX;
    if (!e) return INVALID_HANDLE;
    free(e);
    return SUCCESS;
}

CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
    NEED_CTX;
    if (!e || !stream_ok(s) || flags != 0) return INVALID_HANDLE;
    return SUCCESS;
}

CUresult cuStreamQuery(void *s) {
    NEED_CTX;
    return stream_ok(s) ? SUCCESS : INVALID_HANDLE;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
    if (!stream_ok(s)) return INVALID_HANDLE;
    return cuMemcpyDtoD_v2(dst, src, n);
}

// CUDA_MEMCPY2D, device to device fields only.
typedef struct {
    size_t srcX, srcY;
    int srcType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstX, dstY;
    int dstType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t width, height;
} memcpy2d;

CUresult cuMemcpy2DAsync_v2(const memcpy2d *p, void *s) {
    NEED_CTX;
    if (!stream_ok(s) || p->srcType != 2 || p->dstType != 2 || p->width > p->srcPitch || p->width > p->dstPitch) return INVALID_VALUE;
    for (size_t r = 0; r < p->height; r++) {
        CUdeviceptr d = p->dstDevice + r * p->dstPitch, src = p->srcDevice + r * p->srcPitch;
        if (!fake_cuda_valid(d, p->width) || !fake_cuda_valid(src, p->width)) return INVALID_VALUE;
        memmove((void *)d, (void *)src, p->width);
    }
    return SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int *can, int dev, int peer) {
    *can = 0;
    return SUCCESS;
}

#endif // FAKE_DRIVER

#ifdef FAKE_BUILTINS
int fake_nvrtc_builtins = 1;
#endif

#ifdef FAKE_NVRTC

typedef int nvrtcResult;
typedef struct { char *src, *name, *log, *cubin; } program;

nvrtcResult nvrtcVersion(int *major, int *minor) {
    *major = 13, *minor = 0;
    return 0;
}

const char *nvrtcGetErrorString(nvrtcResult r) {
    switch (r) {
    case 0: return "NVRTC_SUCCESS";
    case 3: return "NVRTC_ERROR_INVALID_INPUT";
    case 4: return "NVRTC_ERROR_INVALID_PROGRAM";
    case 5: return "NVRTC_ERROR_INVALID_OPTION";
    case 6: return "NVRTC_ERROR_COMPILATION";
    case 7: return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    }
    return "NVRTC_ERROR unknown";
}

nvrtcResult nvrtcCreateProgram(void **prog, const char *src, const char *name, int numHeaders,
                               const char *const *headers, const char *const *includeNames) {
    if (!prog || !src || numHeaders != 0 || headers || includeNames) return 3;
    program *p = calloc(1, sizeof *p);
    p->src = strdup(src);
    p->name = strdup(name ? name : "default_program");
    p->log = strdup("");
    *prog = p;
    return 0;
}

nvrtcResult nvrtcDestroyProgram(void **prog) {
    if (!prog || !*prog) return 4;
    program *p = *prog;
    free(p->src), free(p->name), free(p->log), free(p->cubin), free(p);
    *prog = NULL;
    return 0;
}

nvrtcResult nvrtcCompileProgram(void *prog, int n, const char *const *opts) {
    program *p = prog;
    if (!p) return 4;
    // The real NVRTC dlopens its builtins by name: they must be loaded.
    if (!dlopen("libnvrtc-builtins.so.13.0", RTLD_NOW | RTLD_NOLOAD)) return 7;
    const char *arch = NULL;
    for (int i = 0; i < n; i++) {
        if (!opts[i] || opts[i][0] != '-') return 5;
        if (strncmp(opts[i], "--gpu-architecture=", 19) == 0) arch = opts[i] + 19;
    }
    if (!arch || strcmp(arch, "sm_90a") != 0) return 5;
    free(p->log);
    p->log = malloc(strlen(p->name) + 200);
    if (strncmp(p->src, "#include", 8) == 0 || strstr(p->src, "\n#include")) {
        sprintf(p->log, "%s(1): catastrophic error: cannot open source file\n", p->name);
        return 6;
    }
    if (strstr(p->src, "undefined_name")) {
        sprintf(p->log, "%s(3): error: identifier \"undefined_name\" is undefined\n\n1 error detected in the compilation of \"%s\".\n", p->name, p->name);
        return 6;
    }
    strcpy(p->log, "");
    size_t m = strlen(p->src);
    p->cubin = malloc(strlen("\177ELF FAKECUBIN sm_90a\n") + m + 1);
    strcpy(p->cubin, "\177ELF FAKECUBIN sm_90a\n");
    strcat(p->cubin, p->src);
    return 0;
}

nvrtcResult nvrtcGetProgramLogSize(void *prog, size_t *n) {
    program *p = prog;
    if (!p) return 4;
    *n = strlen(p->log) + 1;
    return 0;
}

nvrtcResult nvrtcGetProgramLog(void *prog, char *log) {
    program *p = prog;
    if (!p) return 4;
    strcpy(log, p->log);
    return 0;
}

nvrtcResult nvrtcGetCUBINSize(void *prog, size_t *n) {
    program *p = prog;
    if (!p) return 4;
    *n = p->cubin ? strlen(p->cubin) + 1 : 0;
    return 0;
}

nvrtcResult nvrtcGetCUBIN(void *prog, char *cubin) {
    program *p = prog;
    if (!p || !p->cubin) return 4;
    strcpy(cubin, p->cubin);
    return 0;
}

#endif // FAKE_NVRTC

#ifdef FAKE_CUBLASLT

typedef int cublasStatus_t;
enum { OK = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };

// cublasLt.h's structs, to check the Go mirrors.
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "layout");

#define MAGIC 0x6d776d6d /* "mwmm" */

typedef struct { int compute, scale, transa, transb; } desc;
typedef struct { int type; uint64_t rows, cols; int64_t ld; } layout;
typedef struct { uint64_t ws; } pref;

static int (*valid)(unsigned long long, size_t);
static int (*current_ok)(void);

static int driver(void) {
    if (!valid) {
        valid = dlsym(RTLD_DEFAULT, "fake_cuda_valid");
        current_ok = dlsym(RTLD_DEFAULT, "fake_cuda_current_ok");
    }
    return valid && current_ok && current_ok();
}

cublasStatus_t cublasLtCreate(void **h) {
    if (!driver()) return NOT_INITIALIZED;
    *h = malloc(1);
    return OK;
}

cublasStatus_t cublasLtDestroy(void *h) {
    if (!h) return NOT_INITIALIZED;
    free(h);
    return OK;
}

size_t cublasLtGetVersion(void) { return 130100; }

const char *cublasLtGetStatusName(cublasStatus_t s) {
    switch (s) {
    case OK: return "CUBLAS_STATUS_SUCCESS";
    case NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasLtGetStatusString(cublasStatus_t s) {
    return s == NOT_SUPPORTED ? "the functionality requested is not supported" : "see the status name";
}

cublasStatus_t cublasLtMatmulDescCreate(void **d, int compute, int scale) {
    int ok = (compute == 68 || compute == 69 || compute == 74 || compute == 75 || compute == 77) && scale == 0;
    ok = ok || (compute == 70 && scale == 1);
    if (!ok) return INVALID_VALUE;
    desc *x = calloc(1, sizeof *x);
    x->compute = compute, x->scale = scale;
    *d = x;
    return OK;
}

cublasStatus_t cublasLtMatmulDescDestroy(void *d) { free(d); return OK; }

cublasStatus_t cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t n) {
    desc *x = d;
    if (!x || n != 4 || (attr != 3 && attr != 4)) return INVALID_VALUE;
    int v = *(const int *)buf;
    if (v != 0 && v != 1) return INVALID_VALUE;
    if (attr == 3) x->transa = v; else x->transb = v;
    return OK;
}

cublasStatus_t cublasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
    if (ld < (int64_t)rows || rows == 0 || cols == 0) return INVALID_VALUE;
    layout *x = calloc(1, sizeof *x);
    x->type = type, x->rows = rows, x->cols = cols, x->ld = ld;
    *l = x;
    return OK;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(void *l) { free(l); return OK; }

cublasStatus_t cublasLtMatrixLayoutSetAttribute(void *l, int attr, const void *buf, size_t n) { return INVALID_VALUE; }

cublasStatus_t cublasLtMatmulPreferenceCreate(void **p) { *p = calloc(1, sizeof(pref)); return OK; }

cublasStatus_t cublasLtMatmulPreferenceDestroy(void *p) { free(p); return OK; }

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t n) {
    if (!p || attr != 1 || n != 8) return INVALID_VALUE; // MAX_WORKSPACE_BYTES, uint64_t
    ((pref *)p)->ws = *(const uint64_t *)buf;
    return OK;
}

// shape checks op(A) (m×k), op(B) (k×n), C and D (m×n) and the types.
static cublasStatus_t shape(desc *x, layout *a, layout *b, layout *c, layout *d) {
    uint64_t m = x->transa ? a->cols : a->rows, k = x->transa ? a->rows : a->cols;
    uint64_t kb = x->transb ? b->cols : b->rows, n = x->transb ? b->rows : b->cols;
    if (k != kb || c->rows != m || c->cols != n || d->rows != m || d->cols != n) return INVALID_VALUE;
    // F32=0 F64=1 F16=2 BF16=14 E4M3=28 E5M2=29
    if (a->type == 28 || a->type == 29) return NOT_SUPPORTED; // no fp8 here
    if (x->compute == 70) return a->type == 1 && b->type == 1 && c->type == 1 && d->type == 1 ? OK : NOT_SUPPORTED;
    if (a->type != b->type || (a->type != 0 && a->type != 2 && a->type != 14)) return NOT_SUPPORTED;
    if (c->type != d->type || (d->type != 0 && d->type != a->type)) return NOT_SUPPORTED;
    return OK;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void *h, void *d, void *a, void *b, void *c, void *dd, void *p,
                                              int requested, cublasLtMatmulHeuristicResult_t *results, int *returned) {
    if (!h || !driver()) return NOT_INITIALIZED;
    if (!d || !a || !b || !c || !dd || !p || requested < 1 || !results || !returned) return INVALID_VALUE;
    cublasStatus_t s = shape(d, a, b, c, dd);
    if (s != OK) return s;
    memset(results, 0, requested * sizeof *results);
    results[0].algo.data[0] = MAGIC;
    results[0].algo.data[7] = ((pref *)p)->ws;
    results[0].workspaceSize = ((pref *)p)->ws ? 1024 : 0;
    results[0].state = OK;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return OK;
}

static double get(int type, const void *p, uint64_t i) {
    switch (type) {
    case 0: return ((const float *)p)[i];
    case 1: return ((const double *)p)[i];
    case 2: return (double)((const _Float16 *)p)[i];
    case 14: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    }
    return 0;
}

static void set(int type, void *p, uint64_t i, double v) {
    switch (type) {
    case 0: ((float *)p)[i] = (float)v; break;
    case 1: ((double *)p)[i] = v; break;
    case 2: ((_Float16 *)p)[i] = (_Float16)v; break;
    }
}

static size_t elem(int type) { return type == 1 ? 8 : type == 0 ? 4 : type == 2 || type == 14 ? 2 : 1; }

static int inside(const void *p, layout *l) {
    return valid((unsigned long long)p, ((l->cols - 1) * l->ld + l->rows) * elem(l->type));
}

cublasStatus_t cublasLtMatmul(void *h, void *dsc, const void *alpha, const void *A, void *Adesc, const void *B,
                              void *Bdesc, const void *beta, const void *C, void *Cdesc, void *D, void *Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsSize, void *stream) {
    desc *x = dsc;
    layout *a = Adesc, *b = Bdesc, *c = Cdesc, *d = Ddesc;
    if (!h || !driver()) return NOT_INITIALIZED;
    if (!x || !a || !b || !c || !d || !alpha || !beta || !algo) return INVALID_VALUE;
    // The arguments past the sixth come on the stack: check them all.
    if (algo->data[0] != MAGIC || algo->data[7] != wsSize) return INVALID_VALUE;
    if ((ws == NULL) != (wsSize == 0) || (ws && !valid((unsigned long long)ws, wsSize))) return INVALID_VALUE;
    if (stream != NULL) {
        // A stream from the fake driver: any non-null handle it gave.
        if ((uintptr_t)stream < 4096) return INVALID_VALUE;
    }
    cublasStatus_t s = shape(x, a, b, c, d);
    if (s != OK) return s;
    if (!inside(A, a) || !inside(B, b) || !inside(C, c) || !inside(D, d)) return EXECUTION_FAILED;
    if (C == D && (c->ld != d->ld || c->type != d->type)) return INVALID_VALUE;
    double al = x->scale == 1 ? *(const double *)alpha : *(const float *)alpha;
    double be = x->scale == 1 ? *(const double *)beta : *(const float *)beta;
    uint64_t m = d->rows, n = d->cols, k = x->transa ? a->rows : a->cols;
    double *out = malloc(m * n * sizeof *out);
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            double sum = 0;
            for (uint64_t l = 0; l < k; l++) {
                double av = x->transa ? get(a->type, A, l + i * a->ld) : get(a->type, A, i + l * a->ld);
                double bv = x->transb ? get(b->type, B, j + l * b->ld) : get(b->type, B, l + j * b->ld);
                sum += av * bv;
            }
            out[i + j * m] = al * sum + (be != 0 ? be * get(c->type, C, i + j * c->ld) : 0);
        }
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) set(d->type, D, i + j * d->ld, out[i + j * m]);
    free(out);
    return OK;
}

#endif // FAKE_CUBLASLT
