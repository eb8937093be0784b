#!/bin/bash
# Probes every GPU unit and cross-checks it, on a machine with an NVIDIA GPU.
# Built binaries come from .bin/ (see docs/hardware/hopper.md):
#   CGO_ENABLED=0 go build -o .bin/mwmm ./cmd/mwmm
#   CGO_ENABLED=0 go test -c -o .bin/gpu_gemm.test ./gpu/gemm/
# Usage: scripts/hopper-probe.sh OUTDIR [CROSSCHECK_CASES [AGAINST]]
#   RECORD=1 also keeps every cross-check case and result (OUTDIR/*.jsonl).
#   AGAINST "" cross-checks each unit against its own fit; "presets"
#   against h100-mma.sync (mma.sync), h100 (wgmma) and ieee:k=1 (fma).
set -u
out=${1:?usage: $0 OUTDIR [CASES [presets]]}
cases=${2:-0}
against=${3:-}
mkdir -p "$out"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/mwmm-cache}
units=${UNITS:-"mma.sync:fp16:fp32 mma.sync:fp16:fp16 mma.sync:bf16:fp32 mma.sync:tf32:fp32 mma.sync:fp64:fp64
mma.sync:e4m3:fp32 mma.sync:e5m2:fp32 mma.sync:e4m3:fp16 mma.sync:e5m2:fp16
wgmma:fp16:fp32 wgmma:fp16:fp16 wgmma:bf16:fp32 wgmma:tf32:fp32
wgmma:e4m3:fp32 wgmma:e5m2:fp32 wgmma:e4m3:fp16 wgmma:e5m2:fp16
fma:fp32:fp32 fma:fp64:fp64"}
for u in $units; do
	IFS=: read -r instr in outf <<<"$u"
	name="$instr-$in-$outf"
	args=(--unit "gpu:$instr" --input "$in" --output "$outf")
	if [ "$cases" -gt 0 ]; then
		args+=(--crosscheck "$cases")
		if [ "$against" = presets ]; then
			case $instr in
			mma.sync) args+=(--against h100-mma.sync) ;;
			wgmma) args+=(--against h100) ;;
			fma) args+=(--against ieee:k=1) ;;
			esac
		fi
	fi
	if [ -n "${RECORD:-}" ] && [ "$cases" -gt 0 ]; then
		args+=(--record "$out/$name.jsonl")
	fi
	start=$(date +%s)
	timeout "${UNIT_TIMEOUT:-300}" ./.bin/mwmm probe "${args[@]}" --evidence >"$out/$name.txt" 2>&1
	rc=$?
	printf '%-22s rc=%d %4ds  %s\n' "$name" "$rc" "$(($(date +%s) - start))" \
		"$(grep -E '^(random check|  all)' "$out/$name.txt" | tr '\n' ' ' | cut -c1-160)"
done
