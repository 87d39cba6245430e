#!/usr/bin/env bash
# What each part of a `drgpu profile` run costs, one change at a time (issue: what drgpu profile
# costs; item 3). On a one-kernel sample (aos_gather bad, -c 1) and the many-kernel application
# (benchmarks/many_kernels.cu, 4 iterations: 20 launches), it times:
#   app       the application alone, no ncu
#   base      ncu with drgpu's default metric set and --import-source yes (what drgpu profile runs)
#   nosource  the same without --import-source (source files not embedded)
#   cachenone the same with --cache-control none (caches not flushed between passes)
#   clocknone the same with --clock-control none (clocks not locked to base)
#   appreplay the same with --replay-mode application (the whole app rerun per pass, no save/restore)
#   analyze   drgpu analyze of the base report (the analysis alone)
# REPEATS times each (default 2). Usage, from the repository root: bash benchmarks/profile_costs.sh OUTDIR
# Results: OUTDIR/costs.tsv (program, way, seconds, rc). Needs nvcc, ncu, python3.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1"); mkdir -p "$out"
work=${SAMPLES_DIR:-/opt/samples}/costs; mkdir -p "$work"
repeats=${REPEATS:-2}
. "$here/benchmarks/device_env.sh"
cp "$here/sample_reports/src/aos_gather.cu" "$here/sample_reports/src/sample.cuh" "$here/benchmarks/many_kernels.cu" "$work/"
cd "$work" || exit 1
nvcc -arch=sm_90 -O3 -lineinfo -o aos_gather aos_gather.cu && nvcc -arch=sm_90 -O3 -lineinfo -o many_kernels many_kernels.cu || exit 1
printf 'program\tway\tseconds\trc\n' >"$out/costs.tsv"
for r in $(seq "$repeats"); do
  for prog in one_kernel many_kernels; do
    case $prog in
      one_kernel) app=(./aos_gather bad 0); filt=(-c 1) ;;
      many_kernels) app=(./many_kernels 4); filt=() ;;
    esac
    rep="$work/${prog}_base"
    timed "$out/costs.tsv" "$prog" app "${app[@]}"
    timed "$out/costs.tsv" "$prog" base ncu "${dargs[@]}" --import-source yes "${filt[@]}" -f -o "$rep" "${app[@]}"
    timed "$out/costs.tsv" "$prog" nosource ncu "${dargs[@]}" "${filt[@]}" -f -o "$work/${prog}_x" "${app[@]}"
    timed "$out/costs.tsv" "$prog" cachenone ncu "${dargs[@]}" --import-source yes --cache-control none "${filt[@]}" -f -o "$work/${prog}_x" "${app[@]}"
    timed "$out/costs.tsv" "$prog" clocknone ncu "${dargs[@]}" --import-source yes --clock-control none "${filt[@]}" -f -o "$work/${prog}_x" "${app[@]}"
    timed "$out/costs.tsv" "$prog" appreplay ncu "${dargs[@]}" --import-source yes --replay-mode application "${filt[@]}" -f -o "$work/${prog}_x" "${app[@]}"
    timed "$out/costs.tsv" "$prog" analyze drgpu analyze -q "$rep.ncu-rep" -f json -o "$work/${prog}.json" --force
  done
done
