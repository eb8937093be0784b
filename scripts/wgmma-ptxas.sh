#!/bin/sh
# Registers, spills and SASS tensor-core instructions of the wgmma kernel's
# configurations, compiled by nvcc the way NVRTC compiles them (run on a
# Hopper machine from the repository root): scripts/wgmma-ptxas.sh [OUTDIR]
# Configurations: WORD NWORDS ALLPAIRS SUM SW SF PRESPLIT [GROUP] (the
# defaults first, with the stages gpu/wgmma.go chooses; presplit words, then
# split in shared memory).
out=${1:-/tmp/wgmma-ptxas}
mkdir -p "$out"
for cfg in "0 2 0 2 5 0 1 8" "1 3 0 2 3 0 1 8" "2 2 0 2 2 0 1 8" "0 2 0 2 7 0 1" "1 3 0 2 4 0 1" "2 2 0 2 3 0 1" "0 1 0 2 8 0 1" "0 2 0 3 7 0 1" \
  "0 2 0 2 3 4 0" "1 3 0 2 2 4 0" "2 2 0 2 2 3 0" "0 1 0 2 4 4 0" "0 2 0 1 3 4 0" "0 2 0 3 3 4 0" "2 1 0 0 3 4 0"; do
  set -- $cfg
  # presplit words: the layouts do not change the GEMM kernel
  lay="1 0"; [ "$7" = 1 ] && lay=1
  for ak in $lay; do
    for bk in 0 $([ "$7" = 1 ] || echo 1); do
      name="w$1-p$2-all$3-sum$4-pre$7-g${8:-1}-ak$ak-bk$bk"
      nvcc -cubin -gencode=arch=compute_90a,code=sm_90a --fmad=false -Xptxas -v -DWORD=$1 -DNWORDS=$2 -DALLPAIRS=$3 \
        -DSUM=$4 -DSW=$5 -DSF=$6 -DPRESPLIT=$7 -DGROUP=${8:-1} -DAK=$ak -DBKM=$bk -o "$out/$name.cubin" gpu/gemm/kernels/wgmma.cu 2>&1 |
        grep -E "registers|spill|error|warning" | sed "s/^/$name: /"
      cuobjdump -sass "$out/$name.cubin" | grep -oE "HGMMA[.A-Z0-9x]*|HMMA[.A-Z0-9]*|LDL|STL|SYNCS[.A-Z0-9]*|UTMALDG[.A-Z0-9]*" |
        sort | uniq -c | tr '\n' ' ' | sed "s/^/$name SASS: /"
      echo
    done
  done
done
