#!/usr/bin/env bash
# Record facts about the installed ncu that drgpu's profile command and its tests rely on:
# version, help text, sets, metric catalogues per chip, and how ncu reports failures
# (missing app, failing app, no kernel matched, unknown metric, CSV source-page variants).
# Usage: scripts/device/ncu_facts.sh OUTDIR [PROFILED_APP ARGS...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); shift
NCU=${NCU:-ncu}
mkdir -p "$out" /opt/samples
run() { local name=$1; shift; { echo "\$ $*"; "$@"; echo "[exit $?]"; } >"$out/$name.txt" 2>&1; }
run version "$NCU" --version
run help "$NCU" --help
run list_sets "$NCU" --list-sets
run nvidia_smi nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
for chip in tu102 ga100 ga102 ad102 gh100 gb100 gb202; do
  "$NCU" --query-metrics --chips "$chip" 2>&1 | xz -9 >"$out/metrics_$chip.txt.xz"
done
cp "$here/fail_app.cu" /opt/samples/ && (cd /opt/samples && nvcc -arch=sm_90 -lineinfo -o fail_app fail_app.cu)
cd /opt/samples
run fail_missing_app "$NCU" -f -o "$out/missing" ./no_such_app
run fail_app_exit "$NCU" -f -o "$out/failapp" ./fail_app
run fail_no_kernel "$NCU" -k regex:no_kernel_has_this_name -f -o "$out/nokernel" ./fail_app
run fail_bad_metric "$NCU" --metrics sm__no_such_metric.sum,sm__cycles_elapsed.avg -f -o "$out/badmetric" ./fail_app
run badmetric_csv "$NCU" -i "$out/badmetric.ncu-rep" --csv --page raw
if [ $# -gt 0 ]; then
  rep=$1
  run source_cuda_sass "$NCU" -i "$rep" --csv --page source --print-source cuda,sass
  run source_sass_cuda "$NCU" -i "$rep" --csv --page source --print-source sass,cuda
  run source_cuda "$NCU" -i "$rep" --csv --page source --print-source cuda
  run details_csv "$NCU" -i "$rep" --csv --page details
fi
rm -f "$out"/*.ncu-rep
