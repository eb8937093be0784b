#!/bin/sh
# Registers, spills and SASS tensor-core instructions of the wgmma kernel's
# configurations, compiled by nvcc with the options NVRTC gets (run on a
# Hopper machine from the repository root): scripts/wgmma-ptxas.sh [OUTDIR]
# Configurations: the defaults first, on presplit words (one pair of
# layouts: the GEMM kernel reads words), then split in shared memory (all
# four layouts), with the stages the engine chooses.
# The options come from gpu/gemm's TestKernelOptions, built by the engine's
# own functions, so they exist once, in Go; the GPU machine needs only the
# test binary, built beforehand with
#   CGO_ENABLED=0 go test -c -o .bin/gpu_gemm.test ./gpu/gemm/
out=${1:-/tmp/wgmma-ptxas}
bin=.bin/gpu_gemm.test
[ -x "$bin" ] || { echo "no $bin: CGO_ENABLED=0 go test -c -o $bin ./gpu/gemm/" >&2; exit 1; }
mkdir -p "$out"
MWMM_KERNEL_OPTIONS=wgmma "$bin" -test.run '^TestKernelOptions$' >"$out/options.txt" || { cat "$out/options.txt" >&2; exit 1; }
# Lines of "NAME OPTION ...", each with --fmad=false; the rest is the test's (PASS).
grep -e ' --fmad=false ' "$out/options.txt" | while read -r name opts; do
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v $opts -o "$out/$name.cubin" gpu/gemm/kernels/wgmma.cu </dev/null 2>&1 |
    grep -E "registers|spill|error|warning" | sed "s/^/$name: /"
  cuobjdump -sass "$out/$name.cubin" </dev/null | grep -oE "HGMMA[.A-Z0-9x]*|HMMA[.A-Z0-9]*|LDL|STL|SYNCS[.A-Z0-9]*|UTMALDG[.A-Z0-9]*" |
    sort | uniq -c | tr '\n' ' ' | sed "s/^/$name SASS: /"
  echo
done
