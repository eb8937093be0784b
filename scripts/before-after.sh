#!/bin/sh
# Times builds of mwmm side by side on one GPU, in turn, so that a change
# can be shown to keep the speed (run on a GPU machine from the repository
# root): scripts/before-after.sh OUTDIR gemm|solve ROUNDS LABEL=MWMM ...
# gemm:  mwmm bench (speed: every method, the default sizes) and a small
#        accuracy sweep, whose numbers must agree to the bit;
# solve: mwmm solve --engine gpu --bench 8192,32768 --matrix centered,diagdom
#        with auto and the main forms.
# Each run writes OUTDIR/WHAT-LABEL-ROUND.txt.
out=$1 what=$2 rounds=$3
shift 3
mkdir -p "$out"
run() { # binary file-stem
  case $what in
  gemm)
    "$1" bench --accuracy 0 >"$out/bench-speed-$2.txt" 2>&1
    "$1" bench --sizes 1024 --reps 3 --accuracy 10..14 >"$out/bench-accuracy-$2.txt" 2>&1 ;;
  solve)
    "$1" solve --engine gpu --bench 8192,32768 --matrix centered,diagdom \
      --factor auto,tc32,double-fp16-fabsum,fp64 >"$out/solve-bench-$2.txt" 2>&1 ;;
  esac
}
i=1
while [ "$i" -le "$rounds" ]; do
  for pair in "$@"; do
    label=${pair%%=*} bin=${pair#*=}
    start=$(date +%s)
    run "$bin" "$label-$i"
    echo "$label round $i: $(($(date +%s) - start)) s"
  done
  i=$((i + 1))
done
