#!/usr/bin/env bash
# Reports made otherwise, on our own GPU machine: the same programs profiled with every ncu set,
# single sections and section mixes, and with every other ncu the machine has (issue: reports from
# anywhere). drgpu must read each as what it holds: no finding on an absent metric, estimates
# within their limits, the dominant kernel named (tests/robustness/test_outside_reports.py's
# checks, run on these reports too once they are here).
#
# Usage, from the repository root: bash sample_reports/sets/device_sets.sh OUTDIR
#
# Programs (built with -lineinfo in /opt/samples, as build_and_profile.sh builds them):
#   aos_gather bad   one memory-bound kernel (sample_reports/src/aos_gather.cu), 1 launch
#   many_kernels     five kernels, 4 iterations (benchmarks/many_kernels.cu), 20 launches
# Ways, each a report NAME.WAY.ncu-rep: the sets of `ncu --list-sets` (basic, detailed, full,
# roofline, pmsampling), one section alone (SECTIONS), and section mixes (MIXES: a line each,
# sections joined by '+'). Every other ncu found under /opt/nvidia and /usr/local/cuda*
# profiles aos_gather with --set full and its default set (its version in the name). No way is
# started after SETS_BUDGET_S seconds (default 420). Outputs: OUTDIR/sets.tar (reports
# xz-compressed, ways.tsv: program, way, ncu version, seconds, exit code; status.txt).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1"); rep="$out/reports"; mkdir -p "$rep"
budget=${SETS_BUDGET_S:-420}; start=$SECONDS
work=${SAMPLES_DIR:-/opt/samples}/sets; mkdir -p "$work"
status="$rep/status.txt"; : >"$status"
note() { echo "$*" | tee -a "$status"; }
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
SETS="basic detailed full roofline pmsampling"
SECTIONS="LaunchStats Occupancy SpeedOfLight SourceCounters WarpStateStats MemoryWorkloadAnalysis ComputeWorkloadAnalysis SchedulerStats InstructionStats"
MIXES="LaunchStats+Occupancy
SpeedOfLight+LaunchStats
SpeedOfLight+SourceCounters
WarpStateStats+SchedulerStats+LaunchStats"
cp "$here/sample_reports/src/aos_gather.cu" "$here/sample_reports/src/sample.cuh" "$here/benchmarks/many_kernels.cu" "$work/"
cd "$work" || exit 1
nvcc -arch=sm_90 -O3 -lineinfo -o aos_gather aos_gather.cu && nvcc -arch=sm_90 -O3 -lineinfo -o many_kernels many_kernels.cu \
  || { note "build failed"; exit 1; }
printf 'program\tway\tncu\tseconds\trc\n' >"$rep/ways.tsv"
app() {  # PROGRAM: its command line and launch count
  case $1 in
    aos_gather) echo "1 ./aos_gather bad 0" ;;
    many_kernels) echo "20 ./many_kernels 4" ;;
  esac
}
profile() {  # NCU VERSION PROGRAM WAY ARGS...: one report, timed, its row in ways.tsv
  local ncu=$1 version=$2 prog=$3 way=$4; shift 4
  if (( SECONDS - start > budget )); then note "budget spent before $prog $way ($version)"; return; fi
  read -r count cmd <<<"$(app "$prog")"
  local t0=$SECONDS
  # shellcheck disable=SC2086
  timeout -k 5 90 "$ncu" "$@" -c "$count" -f -o "$rep/$prog.$way" $cmd >"$rep/$prog.$way.ncu.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\t%s\t%s\n' "$prog" "$way" "$version" "$((SECONDS - t0))" "$rc" >>"$rep/ways.tsv"
}
current=$(ncu --version | tail -1 | grep -oE '[0-9]{4}\.[0-9.]+' | head -1)
note "ncu: $current"
for prog in aos_gather many_kernels; do
  for s in $SETS; do profile ncu "$current" "$prog" "set_$s" --set "$s" --import-source yes; done
  for s in $SECTIONS; do profile ncu "$current" "$prog" "section_$s" --section "$s"; done
  while read -r mix; do
    [ -n "$mix" ] || continue
    args=(); IFS=+ read -r -a parts <<<"$mix"; for s in "${parts[@]}"; do args+=(--section "$s"); done
    profile ncu "$current" "$prog" "mix_${mix//+/_}" "${args[@]}"
  done <<<"$MIXES"
done
# Other ncu versions on the machine (older ones first found first).
for other in $(ls -d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/nsight-compute*/ncu 2>/dev/null | sort -u); do
  v=$("$other" --version 2>/dev/null | tail -1 | grep -oE '[0-9]{4}\.[0-9.]+' | head -1)
  [ -n "$v" ] && [ "$v" != "$current" ] || continue
  note "other ncu: $v ($other)"
  profile "$other" "$v" aos_gather "ncu${v}_set_full" --set full --import-source yes
  profile "$other" "$v" aos_gather "ncu${v}_set_default" 
done
note "done in $((SECONDS - start)) s"
cd "$rep" && find . -name '*.ncu-rep' -exec xz -T0 {} + && tar cf "$out/sets.tar" . && cd "$out" && rm -rf "$rep"
echo "sets: $(tar tf "$out/sets.tar" | grep -c ncu-rep) reports"
