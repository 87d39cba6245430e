#!/usr/bin/env bash
# Profile real library kernels (and the launch-floor / serial-step programs) with
# `drgpu profile` on a GPU machine, and time them independently of ncu.
#
# Usage: sample_reports/library/run_device.sh OUTDIR
# Needs: ncu and nvcc on PATH, python3 with PyTorch (cuBLAS, cuDNN, Triton), drgpu's
# dependencies; ncu_report is taken from ncu's extras/python when not installed.
# Outputs in OUTDIR: library.ncu-rep (+ ncu log and drgpu's outputs), library_timings.json
# (CUDA-event times at the GPU's own clocks, with FLOPs and bytes from the problem sizes),
# serial/serial_steps_{floor,bad}.ncu-rep, serial_steps_timings.txt, passes/roofline_passes.json,
# env.txt. The library report is made with --with tensor_ops, so it also holds ncu's own
# tensor-operation counters (a cross-check of drgpu's SASS-derived tensor FLOPs).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1")
work=${SAMPLES_DIR:-/opt/samples}
mkdir -p "$out" "$work/src" "$work/launch" "$work/library"
ncu_py=$(dirname "$(find "$(dirname "$(readlink -f "$(command -v ncu)")")/.." /usr/local/cuda* /opt -name ncu_report.py -path "*extras/python*" 2>/dev/null | head -1)")
export PYTHONPATH="$here:$ncu_py${PYTHONPATH:+:$PYTHONPATH}"
drgpu() { python3 -c "import sys; from drgpu_py.cli import main; sys.argv[0] = 'drgpu'; main()" "$@"; }
cp "$here/sample_reports/src/sample.cuh" "$work/src/"
cp "$here/sample_reports/launch/serial_steps.cu" "$work/launch/"
cp "$here/sample_reports/library/workload.py" "$work/library/"
{ ncu --version | tail -1; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'; } >"$out/env.txt" 2>&1

echo "== serial_steps"
(cd "$work/launch" && nvcc -arch=sm_90 -O3 -lineinfo -o serial_steps serial_steps.cu) || exit 1
for m in floor bad fixed; do "$work/launch/serial_steps" "$m" 50; done | tee "$out/serial_steps_timings.txt"
(cd "$work/launch" && drgpu profile -q -d "$out/serial" --name serial_steps_floor --force -c 2 -- ./serial_steps floor 1 \
  && drgpu profile -q -d "$out/serial" --name serial_steps_bad --force -c 3 -- ./serial_steps bad 0)
echo "rc=$?"

echo "== replay passes of the default set with and without its roofline metrics"
python3 "$here/benchmarks/roofline_passes.py" "$out/passes" "$work/launch/serial_steps" bad 0

echo "== library: timing"
(cd "$work/library" && python3 workload.py time "$out/library_timings.json") 2>&1 | tail -20
echo "== library: profile"
(cd "$work/library" && time drgpu profile -q -d "$out/library" --name library --force --with tensor_ops \
  --ncu-arg=--profile-from-start --ncu-arg=off -- python3 workload.py profile)
echo "rc=$?"
grep -h "passes" "$out"/library/*.ncu.log | sort | uniq -c | head -20
ls -la "$out" "$out/library" "$out/serial"
