#!/usr/bin/env bash
# Profile one inference step of a small PyTorch model with `drgpu profile`, and three library
# kernels with ncu's full set (the kind of report users bring), on a GPU machine.
# Usage: sample_reports/library/run_step.sh OUTDIR   (same needs as run_device.sh)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1")
work=${SAMPLES_DIR:-/opt/samples}/library
mkdir -p "$out" "$work"
ncu_py=$(dirname "$(find "$(dirname "$(readlink -f "$(command -v ncu)")")/.." /usr/local/cuda* /opt -name ncu_report.py -path "*extras/python*" 2>/dev/null | head -1)")
export PYTHONPATH="$here:$ncu_py${PYTHONPATH:+:$PYTHONPATH}"
drgpu() { python3 -c "import sys; from drgpu_py.cli import main; sys.argv[0] = 'drgpu'; main()" "$@"; }
cp "$here/sample_reports/library/workload.py" "$work/"
cd "$work" || exit 1
echo "== model step (drgpu profile)"
time drgpu profile -q -d "$out" --name step --force --ncu-arg=--profile-from-start --ncu-arg=off -- python3 workload.py step
echo "== three library kernels, ncu --set full"
time ncu --set full --import-source yes --profile-from-start off -f -o "$out/full_set" python3 workload.py profile gemm_bf16_4096 sdpa_bf16 conv_fp16 >"$out/full_set.ncu.log" 2>&1
echo "rc=$?"; grep -c "Profiling" "$out/full_set.ncu.log"
ls -la "$out"
