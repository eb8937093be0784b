#!/bin/sh
# Registers, spills and SASS mma instructions of the fused kernel's
# configurations, compiled by nvcc with the options NVRTC gets (run on a GPU
# machine from the repository root): scripts/fused-ptxas.sh [OUTDIR]
# The options come from gpu/gemm's TestKernelOptions, built by the engine's
# own functions, so they exist once, in Go; the GPU machine needs only the
# test binary, built beforehand with
#   CGO_ENABLED=0 go test -c -o .bin/gpu_gemm.test ./gpu/gemm/
out=${1:-/tmp/fused-ptxas}
arch=${ARCH:-sm_90a}
bin=.bin/gpu_gemm.test
[ -x "$bin" ] || { echo "no $bin: CGO_ENABLED=0 go test -c -o $bin ./gpu/gemm/" >&2; exit 1; }
mkdir -p "$out"
MWMM_KERNEL_OPTIONS=fused "$bin" -test.run '^TestKernelOptions$' >"$out/options.txt" || { cat "$out/options.txt" >&2; exit 1; }
# Lines of "NAME OPTION ...", each with --fmad=false; the rest is the test's (PASS).
grep -e ' --fmad=false ' "$out/options.txt" | while read -r name opts; do
  nvcc -cubin -arch="$arch" -Xptxas -v $opts -o "$out/$name.cubin" gpu/gemm/kernels/fused.cu </dev/null 2>&1 |
    grep -E "registers|spill|error" | sed "s/^/$name: /"
  cuobjdump -sass "$out/$name.cubin" </dev/null | grep -oE "HMMA[.A-Z0-9]*|LDSM[.A-Z0-9]*" | sort | uniq -c | tr '\n' ' ' |
    sed "s/^/$name SASS: /"
  echo
done
