#!/usr/bin/env bash
# Performance benchmark for the GPU host: profile-run speed against ncu's full set, and
# many-kernel analysis speed with -j workers.
#
# Usage (from the repository root, after `pip install -e .`; ncu and nvcc on PATH):
#   benchmarks/device_bench.sh OUTDIR
# Environment: CASES (default "precise_math aos_gather fma_chain": programs of
# sample_reports/src), ARCH (default sm_90), JOBS (default "1,2,4,8,16"), PYTHON (python3).
#
# 1. Builds the CASES with nvcc, then for each runs, side by side, `ncu --set full
#    --import-source yes` and `drgpu profile` on the program's bad variant (2 launches),
#    wall time of each whole command and replay passes per launch
#    (benchmarks/profile_passes.py bench; OUTDIR/profile/bench.json and table.md).
# 2. Composes the many-kernel report of every sample launch (benchmarks/compose_report.py,
#    ROUNDS rounds, default 4) and times `drgpu analyze R -f json -j J` for each J against the read floor,
#    grouped and --per-launch, checking the JSON is byte-identical to -j 1
#    (benchmarks/bench_jobs.py; OUTDIR/analyze/jobs.json and jobs.md).
# Writes OUTDIR/RESULTS.md (machine, both tables). Each part has a time limit; the whole
# run stays under 6 minutes (about 1 for part 1 on an H100, 2-3 for part 2 on 16 cores).
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1")
PY=${PYTHON:-python3}
CASES=${CASES:-"precise_math aos_gather fma_chain"}
mkdir -p "$out/build" "$out/profile" "$out/analyze"
t0=$SECONDS
{
  echo "cores: $(nproc)"; nvidia-smi -L 2>&1 | head -2; ncu --version 2>&1 | tail -1
  nvcc --version 2>&1 | tail -1; $PY --version 2>&1; git rev-parse --short HEAD 2>/dev/null
} > "$out/machine.txt"
cp sample_reports/src/*.cu sample_reports/src/*.cuh "$out/build/"
for c in $CASES; do
  timeout 60 nvcc -arch="${ARCH:-sm_90}" -O3 -lineinfo -o "$out/build/$c" "$out/build/$c.cu" || echo "build failed: $c" >&2
done
echo "== 1: profile runs ($(( SECONDS - t0 )) s)"
# shellcheck disable=SC2086
timeout 150 $PY benchmarks/profile_passes.py bench "$out/profile" "$out/build" $CASES
$PY benchmarks/profile_passes.py table "$out/profile" > "$out/profile/table.md" 2>&1
echo "== 2: many-kernel analysis ($(( SECONDS - t0 )) s)"
$PY sample_reports/unpack.py >/dev/null
budget=$(( 330 - (SECONDS - t0) ))
timeout $(( budget > 30 ? budget : 30 )) $PY benchmarks/bench_jobs.py --jobs "${JOBS:-1,2,4,8,16}" --per-launch --rounds "${ROUNDS:-4}" \
  --budget $(( budget > 60 ? budget - 40 : 20 )) --out "$out/analyze"
{
  echo "# device_bench.sh results"; echo; echo '```'; cat "$out/machine.txt"; echo '```'; echo
  echo "## Profile runs: ncu --set full --import-source yes vs drgpu profile"; echo
  cat "$out/profile/table.md" 2>/dev/null; echo
  echo "## Many-kernel analysis and -j scaling"; echo
  cat "$out/analyze/jobs.md" 2>/dev/null
  echo; echo "total: $(( SECONDS - t0 )) s"
} > "$out/RESULTS.md"
rm -f "$out/analyze/composed.ncu-rep" "$out/analyze"/*_j*.json
echo "wrote $out/RESULTS.md ($(( SECONDS - t0 )) s)"
