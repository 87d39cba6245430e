#!/usr/bin/env bash
# Make the many-kernel benchmark report on a GPU machine: build benchmarks/many_kernels.cu in a
# neutral folder (/opt/bench, so the report names no developer's paths), profile every launch
# with a lean metric set, export the raw and source CSV pages, and compress all three (xz).
#
# Usage: benchmarks/make_report.sh OUTDIR [ITERS] [BUDGET_S]
#   ITERS     iterations of the five-kernel loop (default 200: 1,000 launches)
#   BUDGET_S  seconds ncu may run (default 540); ncu is then stopped with SIGINT, and the
#             launches profiled so far are kept if ncu wrote them.
# Sections: drgpu's own set for the GPU (`drgpu_py.specs.metric_sets`, 9 replay passes on an H100) when
# drgpu imports here, else SourceCounters WarpStateStats LaunchStats Occupancy SpeedOfLight
# (20 passes); NCU_SECTION_ARGS overrides both.
#
# Cost measured on an H100 (ncu 2025.3.1): about 0.145 s per launch plus 16 ms per replay
# pass, whatever the kernel's size: 0.47 s per launch for the 20-pass sections (1,000 launches
# take ~8 min), 0.23 s with 5 passes; expect ~0.29 s with drgpu's 9-pass set (~5 min).
# Plan the device call accordingly: a killed ncu may leave no report at all.
#
# Outputs in OUTDIR: many_kernels.ncu-rep.xz, .raw.csv.xz, .source.csv.xz, many_kernels.ncu.log,
# make_report.log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")
iters=${2:-200}
budget=${3:-540}
work=${BENCH_DIR:-/opt/bench}
NCU=${NCU:-ncu}
mkdir -p "$work" "$out"
log="$out/make_report.log"
say() { echo "$*" | tee -a "$log"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { print ($1) }"; }
cp "$here/many_kernels.cu" "$work/"
say "ncu: $("$NCU" --version | tail -1)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ -n "${NCU_SECTION_ARGS:-}" ]; then
  read -r -a sections <<<"$NCU_SECTION_ARGS"
elif args=$(cd "$here/.." && python3 -c 'from drgpu_py.specs.metric_sets import load_metric_set; print(" ".join(load_metric_set("gh100").selection().ncu_args()))' 2>/dev/null) && [ -n "$args" ]; then
  read -r -a sections <<<"$args"
else
  sections=(--section SourceCounters --section WarpStateStats --section LaunchStats
            --section Occupancy --section SpeedOfLight)
fi
say "sections: ${sections[*]}"
cd "$work" || exit 1
nvcc -arch=sm_90 -O3 -lineinfo -o many_kernels many_kernels.cu || exit 1
./many_kernels "$iters" | tee -a "$log" || exit 1
t0=$(now)
timeout -s INT -k 30 "$budget" "$NCU" "${sections[@]}" --import-source yes -f -o many_kernels \
  ./many_kernels "$iters" >"$out/many_kernels.ncu.log" 2>&1
rc=$?
say "profile: rc=$rc, $((5 * iters)) launches asked, $(grep -c '^==PROF== Profiling' "$out/many_kernels.ncu.log") profiled, $(calc "$(now) - $t0") s"
[ -s many_kernels.ncu-rep ] || { say "no report written"; exit 1; }
t0=$(now)
timeout 120 "$NCU" -i many_kernels.ncu-rep --csv --page raw --print-units base >many_kernels.raw.csv &
p1=$!
timeout 120 "$NCU" -i many_kernels.ncu-rep --csv --page source --print-source sass >many_kernels.source.csv &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
say "export: raw rc=$r1, source rc=$r2, $(calc "$(now) - $t0") s"
for f in many_kernels.ncu-rep many_kernels.raw.csv many_kernels.source.csv; do
  [ -s "$f" ] && xz -T0 -6 -c "$f" >"$out/$f.xz" &
done
wait
ls -l "$work"/many_kernels.* "$out" | tee -a "$log"
