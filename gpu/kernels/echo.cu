// echo.cu: a kernel that writes its scalar arguments to memory, so that a
// test can check how Function.Launch passes each Go type to C.

// echo_args stores a..f in out[0..5]: the integers widened to 64 bits (a
// sign-extended), the floating-point values in the low bytes of their
// word (out must be zeroed first).
extern "C" __global__ void echo_args(unsigned long long* out, int a, unsigned b, long long c,
                                     unsigned long long d, float e, double f)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    out[0] = (unsigned long long)(long long)a;
    out[1] = b;
    out[2] = (unsigned long long)c;
    out[3] = d;
    *(float*)(out + 4) = e;
    *(double*)(out + 5) = f;
}
