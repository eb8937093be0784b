#!/usr/bin/env python3
"""Compare mwmm's rounding speed with ml_dtypes and CPFloat on one core.

Runs, pinned to one core (taskset semantics: this process and its children),
on 2^20 float64 values uniform in [-2, 2]:

  * mwmm: a prebuilt format test binary (go test -c -o .bin/format.test
    ./format/), BenchmarkRoundSlice (every kernel the CPU has: avx512, avx2
    and portable on amd64 with AVX-512F; the float32 conversion loop as baseline) and
    BenchmarkRoundSliceRatios (the same, interleaved, with the ratios);
  * ml_dtypes (and NumPy's float16): round trips float64 -> format -> float64
    (what RoundSlice does) and the encode alone, for fp16, bf16, e4m3
    (float8_e4m3fn), e5m2 (float8_e5m2), e2m1 (float4_e2m1fn) and e2m3
    (float6_e2m3fn), where the installed versions have them;
  * CPFloat (optional): scripts/cpfloat_bench.c built against a CPFloat
    source tree given with --cpfloat-src (header-only use, nothing fetched:
    copy the tree to the machine), with PCG where --pcg-c names a pcg-c
    tree (else CPFloat falls back to the C library's rand for sr). Skipped,
    with the reason in the summary, when not given or when it does not build.

Writes to OUTDIR: machine.txt, mwmm-kernel.txt (format.Kernel(): the loops
RoundSlice picks here), mwmm-roundslice.txt, mwmm-ratios.txt,
mldtypes.txt, cpfloat.txt (or cpfloat-skipped.txt), summary.md (the table:
values/s and ratios) and summary.json.

Usage:
  scripts/format-rounding-compare.py OUTDIR --format-test .bin/format.test \\
      [--core 0] [--benchtime 1s] [--count 3] [--reps 20] \\
      [--cpfloat-src DIR] [--pcg-c DIR] [--cc cc]
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

N = 1 << 20
FORMATS = ["fp16", "bf16", "e4m3", "e5m2", "e2m1", "e2m3"]
MODES = ["rne", "rz", "sr"]
# ml_dtypes' names (fp16 is NumPy's own float16).
MLDTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
            "e2m1": "float4_e2m1fn", "e2m3": "float6_e2m3fn"}
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, out_path, **kw):
    """Runs cmd, writes its stdout and stderr to out_path, returns stdout."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    with open(out_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {p.returncode}: see {out_path}")
    return p.stdout


def machine(out, core):
    lines = [f"date (UTC): {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
             f"host: {platform.node()}  {platform.platform()}",
             f"pinned to core {core}", f"python {platform.python_version()}"]
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        model = re.search(r"^model name\s*:\s*(.*)$", info, re.M)
        flags = re.search(r"^flags\s*:\s*(.*)$", info, re.M)
        lines.append("cpu: " + (model.group(1) if model else "?"))
        if flags:
            fl = flags.group(1).split()
            lines.append("vector flags: " + " ".join(x for x in fl if x.startswith(("avx", "sse4", "fma"))))
    except OSError:
        pass
    for mod in ("numpy", "ml_dtypes"):
        try:
            lines.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            lines.append(f"{mod}: not installed")
    if shutil.which("lscpu"):
        lines.append(subprocess.run(["lscpu"], capture_output=True, text=True).stdout)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write(text)
    return lines[:6]


BENCH_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+\S+ ns/op\s+(.*)$")


def mwmm(out, binary, benchtime, count):
    """The kernel RoundSlice picks, median values/s per kernel/format/mode, and
    the ratios benchmark's metrics."""
    kern = run([binary, "-test.run", "^TestKernelName$", "-test.v"], os.path.join(out, "mwmm-kernel.txt"))
    m = re.search(r'Kernel\(\) = "(\w+)"', kern)
    kernel = m.group(1) if m else "?"
    with open(os.path.join(out, "machine.txt"), "a") as f:
        f.write(f"mwmm format.Kernel(): {kernel}\n")
    base = [binary, "-test.run", "^$", "-test.cpu", "1"]
    text = run(base + ["-test.bench", "^BenchmarkRoundSlice$", "-test.benchtime", benchtime,
                       "-test.count", str(count)], os.path.join(out, "mwmm-roundslice.txt"))
    samples = {}
    for line in text.splitlines():
        m = BENCH_LINE.match(line)
        if m and m.group(1).startswith("RoundSlice/"):
            v = re.search(r"([\d.e+]+) values/s", m.group(2))
            if v:
                samples.setdefault(m.group(1)[len("RoundSlice/"):], []).append(float(v.group(1)))
    rates = {k: statistics.median(v) for k, v in samples.items()}
    text = run(base + ["-test.bench", "^BenchmarkRoundSliceRatios$", "-test.benchtime", "20x"],
               os.path.join(out, "mwmm-ratios.txt"))
    ratios = {}
    for line in text.splitlines():
        m = BENCH_LINE.match(line)
        if m:
            for v, unit in re.findall(r"([\d.e+]+) (\S+)", m.group(2)):
                ratios[unit] = float(v)
    return kernel, rates, ratios


def timed(fn, reps):
    fn()  # untimed: allocation, page faults
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return N / statistics.median(ts)


def mldtypes(out, reps):
    """values/s of the round trip and of the encode alone, per format."""
    res, notes = {}, []
    try:
        import numpy as np
    except ImportError:
        notes.append("NumPy not installed: no ml_dtypes or NumPy numbers")
        return res, notes
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
        notes.append("ml_dtypes not installed: NumPy's float16 only")
    x = np.random.default_rng(1).uniform(-2, 2, N)
    back = np.empty(N, dtype=np.float64)
    for f in FORMATS:
        if f == "fp16":
            dt = np.float16
        elif ml_dtypes is not None and hasattr(ml_dtypes, MLDTYPES[f]):
            dt = getattr(ml_dtypes, MLDTYPES[f])
        else:
            if ml_dtypes is not None:
                notes.append(f"ml_dtypes {ml_dtypes.__version__} has no {MLDTYPES[f]}")
            continue
        low = np.empty(N, dtype=dt)

        def enc():
            np.copyto(low, x, casting="unsafe")

        def trip():
            np.copyto(low, x, casting="unsafe")
            np.copyto(back, low, casting="unsafe")

        res[f] = {"roundtrip": timed(trip, reps), "encode": timed(enc, reps)}
    with open(os.path.join(out, "mldtypes.txt"), "w") as fh:
        for f, r in res.items():
            fh.write(f"{f} roundtrip {r['roundtrip']:.6e} encode {r['encode']:.6e} values/s\n")
        for n in notes:
            fh.write("note: " + n + "\n")
    return res, notes


def cpfloat(out, src, pcg, cc, reps):
    """values/s per format/mode, or None and the reason."""
    if not src:
        reason = "no --cpfloat-src given"
    elif not os.path.isfile(os.path.join(src, "src", "cpfloat_binary64.h")):
        reason = f"{src}/src/cpfloat_binary64.h not found"
    else:
        exe = os.path.join(out, "cpfloat_bench")
        cmd = [cc, "-O3", "-march=native", "-std=gnu11", "-w", "-I", os.path.join(src, "src")]
        if pcg:
            cmd += ["-include", os.path.join(pcg, "include", "pcg_variants.h"), "-I", os.path.join(pcg, "include")]
        cmd += ["-o", exe, os.path.join(HERE, "cpfloat_bench.c")]
        if pcg:
            lib = os.path.join(pcg, "src")
            if not os.path.isfile(os.path.join(lib, "libpcg_random.a")):
                subprocess.run(["make", "-s", "-C", lib, "libpcg_random.a"], capture_output=True)
            cmd += ["-L", lib, "-lpcg_random"]
        cmd += ["-lm"]
        try:
            run(cmd, os.path.join(out, "cpfloat-build.txt"))
            text = run([exe, str(reps)], os.path.join(out, "cpfloat.txt"))
            res = {}
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] == "cpfloat" and parts[2] != "unsupported":
                    res[parts[1]] = float(parts[2])
            return res, ("PCG" if pcg else "C library rand (no --pcg-c): sr is slow") + \
                "; CPFloat needs emin < 0, so no e2m1 or e2m3"
        except (RuntimeError, OSError) as e:
            reason = f"build or run failed: {e}"
    with open(os.path.join(out, "cpfloat-skipped.txt"), "w") as f:
        f.write(reason + "\n")
    return None, reason


def fmt_rate(v):
    return f"{v / 1e9:.3f}" if v else "—"


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a and b else "—"


def fmt_x(r):
    return f"{r:.2f}" if r else "—"


def summary(out, head, kernel, rates, ratios, ml, ml_notes, cpf, cpf_note):
    # The kernel RoundSlice picks first, then the others by name, portable last.
    kernels = sorted({k.split("/")[0] for k in rates if "/" in k}, key=lambda k: (k != kernel, k == "portable", k))
    kern = kernels[0] if kernels else "portable"
    base = rates.get("baseline-float32")
    lines = ["# format rounding: mwmm against ml_dtypes and CPFloat", ""]
    lines += ["    " + h for h in head] + [""]
    lines += [f"G values/s, one core, 2^20 float64 values in [-2, 2]; float32 loop {fmt_rate(base)}. "
              f"ml_dtypes: round trip float64 -> format -> float64 (rne only; fp16 is NumPy's float16); "
              f"CPFloat: cpfloat() float64 -> float64 ({cpf_note}).", ""]
    cols = [f"mwmm {k}" for k in kernels] + ["ml_dtypes", "CPFloat",
                                              f"{kern}/float32", f"{kern}/ml_dtypes", f"{kern}/CPFloat"]
    if "portable" in kernels and kern != "portable":
        cols.append(f"portable/{kern}")
    cols.append("sr/rne")
    lines.append("| format/mode | " + " | ".join(cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")
    table = {}
    for f in FORMATS:
        for m in MODES:
            fm = f"{f}/{m}"
            row = {k: rates.get(f"{k}/{fm}") for k in kernels}
            mlv = ml.get(f, {}).get("roundtrip") if m == "rne" else None
            cv = (cpf or {}).get(fm)
            k = row.get(kern)
            # Ratios among mwmm's own cases from the interleaved run where
            # it has them (load on the machine hits both sides alike).
            x32 = ratios.get(f"{kern}/{fm}-x-float32") or (k / base if k and base else None)
            cells = [fmt_rate(row[k2]) for k2 in kernels] + [fmt_rate(mlv), fmt_rate(cv),
                                                             fmt_x(x32), fmt_ratio(k, mlv), fmt_ratio(k, cv)]
            if "portable" in kernels and kern != "portable":
                pk = ratios.get(f"{fm}-portable/{kern}")
                cells.append(fmt_x(pk) if pk else fmt_ratio(row.get("portable"), k))
            if m == "sr":
                sr = ratios.get(f"{kern}/{f}/sr/rne")
                cells.append(fmt_x(sr) if sr else fmt_ratio(k, rates.get(f"{kern}/{f}/rne")))
            else:
                cells.append("")
            lines.append(f"| {fm} | " + " | ".join(cells) + " |")
            table[fm] = {"mwmm": row, "ml_dtypes_roundtrip": mlv, "cpfloat": cv}
    lines += ["", "ml_dtypes encode alone (float64 -> format), G values/s: " +
              ", ".join(f"{f} {fmt_rate(r['encode'])}" for f, r in ml.items())]
    lines += [f"note: {n}" for n in ml_notes]
    if cpf is None:
        lines.append(f"CPFloat skipped: {cpf_note}")
    lines += ["", f"{kern}/float32, portable/{kern} and sr/rne are from the interleaved run "
              "(BenchmarkRoundSliceRatios, mwmm-ratios.txt) where it has them; the values/s "
              "columns from BenchmarkRoundSlice (mwmm-roundslice.txt, the median of --count runs)."]
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump({"machine": head, "baseline_float32": base, "rates": rates, "table": table,
                   "ml_dtypes": ml, "cpfloat": cpf, "cpfloat_note": cpf_note,
                   "ratios_interleaved": ratios}, fh, indent=1)
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--format-test", required=True, help="prebuilt go test -c binary of ./format")
    ap.add_argument("--core", type=int, default=0)
    ap.add_argument("--benchtime", default="1s")
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20, help="timed calls per ml_dtypes/CPFloat case")
    ap.add_argument("--cpfloat-src", help="a CPFloat source tree (its src/ has cpfloat_binary64.h)")
    ap.add_argument("--pcg-c", help="a pcg-c source tree, for CPFloat's sr")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    a = ap.parse_args()
    out = os.path.abspath(a.outdir)
    os.makedirs(out, exist_ok=True)
    binary = os.path.abspath(a.format_test)
    os.sched_setaffinity(0, {a.core})  # children inherit it
    head = machine(out, a.core)
    print("\n".join(head), file=sys.stderr)
    kernel, rates, ratios = mwmm(out, binary, a.benchtime, a.count)
    head.append(f"mwmm format.Kernel() on this CPU: {kernel}")
    ml, ml_notes = mldtypes(out, a.reps)
    cpf, cpf_note = cpfloat(out, a.cpfloat_src, a.pcg_c, a.cc, a.reps)
    summary(out, head, kernel, rates, ratios, ml, ml_notes, cpf, cpf_note)


if __name__ == "__main__":
    main()
