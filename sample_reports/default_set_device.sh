#!/usr/bin/env bash
# Profile every sample program's variants with drgpu profile's default metric set (issue: parity of
# the default set with `--set full`) on a GPU machine, and pack the reports into ONE file.
#
# Usage, from the repository root: bash sample_reports/default_set_device.sh ARGS_FILE OUTDIR
#
# ARGS_FILE holds the ncu arguments of the default set, one per line, as drgpu writes them:
#   python -c "from drgpu_py.specs.metric_sets import load_metric_set as m; \
#              print('\n'.join(m('gh100').selection().ncu_args()))" > ARGS_FILE
# (drgpu need not be importable on the GPU machine). Every program of sample_reports/src is built
# with -lineinfo in /opt/samples (as build_and_profile.sh builds them, so the reports name the same
# source paths) and each variant (bad and fixed; near misses nm_* only bad) is profiled once with
#   ncu ARGS --import-source yes -c 1 -f -o OUTDIR/reports/CASE_VARIANT_default ./CASE VARIANT 0
# (-c N for a program with a `// PROFILE_LAUNCHES: N` line: the whole sequence of launches).
# DEFAULT_CASES (names, space-separated) profiles those programs only. No variant is started
# once DEFAULT_BUDGET_S seconds (default 500) have passed. The reports are
# xz-compressed and packed with status.txt into OUTDIR/default_set.tar.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: $0 ARGS_FILE OUTDIR" >&2; exit 2; }
mapfile -t args <"$1"
out=$(realpath -m "$2"); rep="$out/reports"
budget=${DEFAULT_BUDGET_S:-500}
work=${SAMPLES_DIR:-/opt/samples}
start=$SECONDS
mkdir -p "$rep" "$work"
status="$rep/status.txt"; : >"$status"
note() { echo "$*" | tee -a "$status"; }
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "ncu: $(${NCU:-ncu} --version 2>/dev/null | tail -1)"
cp "$here"/src/*.cu "$here"/src/*.cuh "$work"/
cd "$work"
cases=()
if [ -n "${DEFAULT_CASES:-}" ]; then read -r -a cases <<<"$DEFAULT_CASES"
else for f in *.cu; do cases+=("${f%.cu}"); done; fi
printf '%s\n' "${cases[@]}" | xargs -P "$(nproc)" -I{} bash -c \
  'nvcc -arch=sm_90 -O3 -lineinfo -o {} {}.cu 2>{}.build.log || echo "build failed: {}"' | tee -a "$status"
note "built in $((SECONDS - start)) s"
for c in "${cases[@]}"; do
  [ -x "$c" ] || { note "not built: $c"; continue; }
  variants=(bad fixed); [[ $c == nm_* ]] && variants=(bad)
  launches=$(sed -n 's|^// PROFILE_LAUNCHES: *\([0-9][0-9]*\).*|\1|p' "$c.cu" | head -1)
  for v in "${variants[@]}"; do
    if (( SECONDS - start > budget )); then note "budget spent before ${c}_$v"; continue 2; fi
    t=$SECONDS
    if "${NCU:-ncu}" "${args[@]}" --import-source yes -c "${launches:-1}" -f -o "$rep/${c}_${v}_default" ./"$c" "$v" 0 \
        >"$rep/${c}_${v}_default.ncu.log" 2>&1; then
      note "ok ${c}_$v $((SECONDS - t)) s"
    else
      note "failed ${c}_$v (rc $?)"
    fi
  done
done
note "profiled in $((SECONDS - start)) s"
cd "$rep" && xz -9 -T0 ./*.ncu-rep && tar cf "$out/default_set.tar" . && note "packed"
