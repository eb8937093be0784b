#!/bin/sh
# Times two builds of mwmm side by side on one GPU, alternating, so that a
# change can be shown to keep the speed (run on a GPU machine from the
# repository root): scripts/before-after.sh BEFORE AFTER OUTDIR gemm|solve [ROUNDS]
# gemm:  mwmm bench (speed, every method, the default sizes) and a small
#        accuracy sweep, whose numbers must agree to the bit;
# solve: mwmm solve --engine gpu --bench 8192,32768 --matrix centered,diagdom
#        with auto and the main forms.
before=$1 after=$2 out=$3 what=$4 rounds=${5:-2}
mkdir -p "$out"
run() { # label binary
  case $what in
  gemm)
    "$2" bench --accuracy 0 >"$out/bench-speed-$1.txt" 2>&1
    "$2" bench --sizes 1024 --reps 3 --accuracy 10..14 >"$out/bench-accuracy-$1.txt" 2>&1 ;;
  solve)
    "$2" solve --engine gpu --bench 8192,32768 --matrix centered,diagdom \
      --factor auto,tc32,double-fp16-fabsum,fp64 >"$out/solve-bench-$1.txt" 2>&1 ;;
  esac
}
i=1
while [ "$i" -le "$rounds" ]; do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    start=$(date +%s)
    run "$side-$i" "$bin"
    echo "$side round $i: $(($(date +%s) - start)) s"
  done
  i=$((i + 1))
done
