// poison.cu: fill device memory with a pattern, so that a test can tell
// the words a kernel wrote from those it did not.
//
// NVRTC compiles it without CUDA headers: it includes nothing.

// fill_u32 sets the n 32-bit words at p to v; any grid works (grid-stride
// loop).
extern "C" __global__ void fill_u32(unsigned* p, unsigned v, unsigned long long n)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = v;
    }
}
