#!/bin/bash
# Counts the matrix and FMA instructions of each kernel in the cached CUBINs
# (cuobjdump from the CUDA toolkit): which hardware instruction each unit
# really runs. Usage: scripts/sass-summary.sh CACHE_DIR > summary.txt
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/mwmm/kernels}
for f in "$dir"/*.cubin; do
	cuobjdump -sass "$f"
done | awk '
/Function :/ { fn = $NF }
{ for (i = 1; i <= NF; i++) if ($i ~ /^(HMMA|HGMMA|QGMMA|QMMA|DMMA|FFMA|DFMA|IMMA)/) { split($i, p, "."); n[fn " " p[1]]++ } }
END { for (k in n) print k, n[k] }' | sort
