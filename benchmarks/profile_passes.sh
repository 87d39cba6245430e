#!/usr/bin/env bash
# Measure `drgpu profile` on a GPU machine against `ncu --set full --import-source yes`, and
# exercise its failure paths and per-rank reports with the real ncu.
#
# Usage: benchmarks/profile_passes.sh WORKDIR
# Needs ncu and nvcc on PATH, drgpu importable (PYTHONPATH=checkout) with its dependencies,
# and ncu_report importable (pip ncu-report, or ncu's extras/python on PYTHONPATH).
# Stages (STAGES, default all, in this order):
#   build       sample programs into SAMPLES_DIR (default /opt/samples), sm_90
#   matrix      replay passes of each metric group alone (matrix/)
#   candidates  which optional unit throughputs fit in 12 passes (candidates/; the bench and
#               ranks stages then add them with --add-metrics)
#   ranks       one report per MPI rank: two ranks by benchmarks/two_ranks.sh, one drgpu each
#   multiproc   one ncu over a launcher that starts two processes (--target-processes all)
#   fail        failure exit codes with the real ncu (fail/)
#   interrupt   SIGINT to drgpu and ncu mid-run (fail/interrupt)
#   bench       per case: ncu --set full vs drgpu profile (bench/, table.md)
# CASES: sample programs for the bench (default below).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$1")
work=${SAMPLES_DIR:-/opt/samples}
arch=${SAMPLES_ARCH:-sm_90}
CASES=${CASES:-"aos_gather smem_stride double_literal global_atomics fma_chain precise_math"}
STAGES=" ${STAGES:-build matrix candidates ranks multiproc fail interrupt bench} "
mkdir -p "$out" "$work"
# drgpu from this checkout, as a program (timeout and the rank launcher run it)
drgpu="$out/drgpu"
printf '#!/bin/sh\nexec python3 -c "import sys; from drgpu_py.cli import main; sys.argv[0] = \x27drgpu\x27; main()" "$@"\n' >"$drgpu"
chmod +x "$drgpu"
has() { [[ "$STAGES" == *" $1 "* ]]; }
add=()
[ -s "$out/candidates/chosen_metrics.txt" ] && add=(--add-metrics "$(cat "$out/candidates/chosen_metrics.txt")")

if has build; then
  echo "== build"
  cp "$here"/sample_reports/src/*.cu "$here"/sample_reports/src/*.cuh "$here"/scripts/device/fail_app.cu "$work"/
  (cd "$work" && for c in $(printf '%s\n' $CASES precise_math few_blocks fail_app | sort -u); do nvcc -arch="$arch" -O3 -lineinfo -o "$c" "$c.cu" & done; wait)
  ncu --version | tail -1
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
fi

if has matrix; then
  echo "== matrix: passes per metric group (aos_gather, first launch)"
  timeout 180 python3 "$here"/benchmarks/profile_passes.py matrix "$out/matrix" "$work/aos_gather" bad 0
fi

if has candidates; then
  echo "== candidates: unit throughputs that fit in 12 passes"
  timeout 120 python3 "$here"/benchmarks/profile_passes.py candidates "$out/candidates" "$work/aos_gather" bad 0
  [ -s "$out/candidates/chosen_metrics.txt" ] && add=(--add-metrics "$(cat "$out/candidates/chosen_metrics.txt")")
  echo "chosen: ${add[*]:-none}"
fi

if has ranks; then
  echo "== ranks, mpirun style: one drgpu (and ncu) per rank, rank variable from each one's environment"
  rm -rf "$out/ranks"
  timeout 120 "$here"/benchmarks/two_ranks.sh "$drgpu" profile -q -d "$out/ranks" --name precise_math "${add[@]}" -- "$work/precise_math" bad 0
  echo "rc=$?"; ls -la "$out/ranks"
fi

if has multiproc; then
  echo "== multiproc: one ncu, a launcher starting two processes"
  rm -rf "$out/multiproc"
  timeout 120 "$drgpu" profile -d "$out/multiproc" --name two --target-processes all "${add[@]}" \
    -- "$here"/benchmarks/two_ranks.sh "$work/precise_math" bad 0
  echo "rc=$?"; ls -la "$out/multiproc"
fi

if has fail; then
  echo "== failures (exit codes)"
  mkdir -p "$out/fail"
  f() { local name=$1; shift; timeout 90 "$drgpu" profile -d "$out/fail/$name" "$@" >"$out/fail/$name.console" 2>&1; echo "$name rc=$?"; tail -4 "$out/fail/$name.console"; }
  f badmetric -c 1 --add-metrics sm__no_such_metric.sum --skip-metric-check -- "$work/precise_math" bad 0
  f strict -c 1 --strict-metrics --add-metrics sm__no_such_metric.sum --skip-metric-check -- "$work/precise_math" bad 0
  f preflight -c 1 --add-metrics sm__no_such_metric.sum -- "$work/precise_math" bad 0
  f nokernel -k no_kernel_has_this_name -- "$work/precise_math" bad 0
  f appfail -- "$work/fail_app"
  f args -- /usr/bin/env python3 -c 'import sys, json; print("ARGV=" + json.dumps(sys.argv[1:]))' "a b" "it's" 'x;y' '$(true)' '"q"'
  grep -h "ARGV=" "$out/fail/args.console" | head -1
fi

if has interrupt; then
  echo "== interrupt: SIGINT to drgpu's process group (drgpu, ncu, app) after 8 s"
  rm -rf "$out/fail/interrupt"; mkdir -p "$out/fail"
  # From Python: a background job of a non-interactive shell would start with SIGINT ignored.
  python3 - "$drgpu" "$out/fail/interrupt" "$work/few_blocks" <<'EOF'
import os, signal, subprocess, sys, time
drgpu, folder, app = sys.argv[1:]
with open(folder + ".console", "w") as fh:
    p = subprocess.Popen([drgpu, "profile", "-d", folder, "--", app, "bad", "8"], stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    time.sleep(8)
    os.killpg(p.pid, signal.SIGINT)
    print("interrupt rc=", p.wait())
EOF
  tail -4 "$out/fail/interrupt.console"; ls -la "$out/fail/interrupt"
fi

if has bench; then
  echo "== bench: ncu --set full vs drgpu profile (${add[*]:-default set})"
  # shellcheck disable=SC2086
  DRGPU_BENCH_ADD_METRICS="${add[1]:-}" timeout 330 python3 "$here"/benchmarks/profile_passes.py bench "$out/bench" "$work" $CASES
  cp "$out/matrix/matrix.json" "$out/bench/" 2>/dev/null
  python3 "$here"/benchmarks/profile_passes.py table "$out/bench" | tee "$out/table.md"
fi
