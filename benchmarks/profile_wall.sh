#!/usr/bin/env bash
# End-to-end wall time of `drgpu profile` against `ncu --set full --import-source yes` with the same
# kernel filter, on programs of three sizes, on a GPU machine (issue: what drgpu profile costs).
#
# Usage, from the repository root: bash benchmarks/profile_wall.sh OUTDIR
#
# Programs: a one-kernel sample (sample_reports/src/aos_gather.cu, bad variant, 1 launch), the
# many-kernel application (benchmarks/many_kernels.cu, 4 iterations: 20 launches of five kernels)
# and one inference step of a small PyTorch model (sample_reports/library/workload.py step, between
# cudaProfilerStart/Stop). Each is run three ways, one after another, REPEATS times (default 1):
#   full   ncu --set full --import-source yes -f -o ...
#   drgpu  drgpu profile -q --force -d ... (ncu with drgpu's default set, then drgpu's analysis)
#   drgpu2 drgpu profile --passes 2 (a cheap ncu run over every launch, then the rest of the set
#          for the kernels holding --focus-share, FOCUS_SHARE, default 0.8, of the GPU time)
#   dargs  ncu with drgpu's default set alone (the ncu part of `drgpu profile`)
# drgpu runs from this checkout (PYTHONPATH) with ncu's own ncu_report (extras/python). Results:
# OUTDIR/wall.tsv (program, way, seconds, rc), OUTDIR/passes.tsv (program, way, ncu run,
# kernel, launch, replay passes: from each ncu log's "==PROF== Profiling ... - N passes" lines)
# and the logs. Needs nvcc, ncu, python3 with torch.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1"); mkdir -p "$out"
work=${SAMPLES_DIR:-/opt/samples}/wall; mkdir -p "$work"
repeats=${REPEATS:-1}
. "$here/benchmarks/device_env.sh"
cp "$here/sample_reports/src/aos_gather.cu" "$here/sample_reports/src/sample.cuh" "$here/benchmarks/many_kernels.cu" \
   "$here/sample_reports/library/workload.py" "$work/"
cd "$work" || exit 1
nvcc -arch=sm_90 -O3 -lineinfo -o aos_gather aos_gather.cu && nvcc -arch=sm_90 -O3 -lineinfo -o many_kernels many_kernels.cu || exit 1
printf 'program\tway\tseconds\trc\n' >"$out/wall.tsv"
printf 'program\tway\trun\tkernel\tlaunch\tpasses\n' >"$out/passes.tsv"
share=${FOCUS_SHARE:-0.8}
# passes_of LOG PROGRAM WAY RUN: one passes.tsv row per launch ncu's log says it profiled.
passes_of() {
  [ -f "$1" ] || return 0
  sed -n 's/^==PROF== Profiling "\(.*\)" - \([0-9]*\).* - \([0-9]*\) pass\(es\)\{0,1\}$/\1\t\2\t\3/p' "$1" |
    while IFS= read -r row; do printf '%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$row"; done >>"$out/passes.tsv"
}
for r in $(seq "$repeats"); do
  for prog in one_kernel many_kernels torch_step; do
    case $prog in
      one_kernel) app=(./aos_gather bad 0); filt=(-c 1) ;;
      many_kernels) app=(./many_kernels 4); filt=() ;;
      torch_step) app=(python3 workload.py step); filt=(--profile-from-start off) ;;
    esac
    dfilt=(); [ "$prog" = one_kernel ] && dfilt=(-c 1); [ "$prog" = torch_step ] && dfilt=(--no-from-start)
    timed "$out/wall.tsv" "$prog" full ncu --set full --import-source yes "${filt[@]}" -f -o "$work/${prog}_full" "${app[@]}"
    timed "$out/wall.tsv" "$prog" drgpu drgpu profile -q --force -d "$work/${prog}_drgpu" --name "$prog" "${dfilt[@]}" -- "${app[@]}"
    timed "$out/wall.tsv" "$prog" drgpu2 drgpu profile -q --force --passes 2 --focus-share "$share" \
      -d "$work/${prog}_drgpu2" --name "$prog" "${dfilt[@]}" -- "${app[@]}"
    timed "$out/wall.tsv" "$prog" dargs ncu "${dargs[@]}" --import-source yes "${filt[@]}" -f -o "$work/${prog}_dargs" "${app[@]}"
    if [ "$r" = 1 ]; then
      passes_of "$out/${prog}_full.log" "$prog" full 1
      passes_of "$work/${prog}_drgpu/$prog.ncu.log" "$prog" drgpu 1
      passes_of "$work/${prog}_drgpu2/$prog.pass1.ncu.log" "$prog" drgpu2 1
      passes_of "$work/${prog}_drgpu2/$prog.pass2.ncu.log" "$prog" drgpu2 2
      passes_of "$out/${prog}_dargs.log" "$prog" dargs 1
    fi
  done
done
for f in "$work"/*_full.ncu-rep "$work"/*_drgpu/*.ncu-rep "$work"/*_drgpu2/*.ncu-rep; do ls -la "$f"; done >"$out/reports.txt" 2>&1
