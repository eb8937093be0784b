#!/bin/sh
# Registers, spills and SASS mma instructions of the fused kernel's
# configurations, compiled by nvcc the way NVRTC compiles them (run on a GPU
# machine from the repository root): scripts/fused-ptxas.sh [OUTDIR]
out=${1:-/tmp/fused-ptxas}
mkdir -p "$out"
arch=${ARCH:-sm_90a}
for cfg in "0 1 0 3" "0 2 0 3" "0 2 0 2" "0 2 0 1" "1 3 0 3" "1 3 1 2" "2 2 0 3" "2 1 0 2"; do
  set -- $cfg
  for ak in 1 0; do
    for bk in 0 1; do
      name="w$1-p$2-all$3-sum$4-ak$ak-bk$bk"
      nvcc -cubin -arch="$arch" --fmad=false -Xptxas -v -DWORD=$1 -DNWORDS=$2 -DALLPAIRS=$3 -DSUM=$4 -DAK=$ak -DBKM=$bk \
        -o "$out/$name.cubin" gpu/gemm/kernels/fused.cu 2>&1 | grep -E "registers|spill|error" | sed "s/^/$name: /"
      cuobjdump -sass "$out/$name.cubin" | grep -oE "HMMA[.A-Z0-9]*|LDSM[.A-Z0-9]*" | sort | uniq -c | tr '\n' ' ' | sed "s/^/$name SASS: /"
      echo
    done
  done
done
