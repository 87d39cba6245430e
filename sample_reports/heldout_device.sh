#!/usr/bin/env bash
# Build, time and profile the held-out sample pairs (src/ho_*.cu, listed in heldout.yaml) on a GPU
# machine and pack everything into ONE file, OUTDIR/heldout.tar.
#
# Usage, from the repository root: bash sample_reports/heldout_device.sh OUTDIR
#
# HELDOUT_PREFIX (default "ho_") selects the cases: every src/${HELDOUT_PREFIX}*.cu, e.g.
# HELDOUT_PREFIX=ho2_ for the second held-out set (listed in heldout2.yaml). HELDOUT_CASES (names,
# space-separated) takes those cases instead, to split a set over several runs.
#
# 1. Builds every case in parallel (xargs -P 8) in a scratch folder, only to find the cases that
#    compile; a case that fails is reported with its compiler output and skipped.
# 2. For each case that built, runs
#      SAMPLES_DIR=/opt/samples bash sample_reports/build_and_profile.sh OUTDIR/reports CASE
#    (one case per call, so a case that fails at run time does not stop the others; the outputs are
#    those of one call with all cases). No case is started once HELDOUT_BUDGET_S seconds (default
#    470) have passed since the start, so the whole run stays within a 10-minute command limit;
#    the skipped cases are listed.
# 3. xz -9 every .ncu-rep and every .csv, and packs OUTDIR/reports (the .ncu-rep.xz, .ncu.log,
#    .raw.csv.xz, .source.csv.xz, cubins, timings.txt, status.txt) into OUTDIR/heldout.tar.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1")
rep="$out/reports"
budget=${HELDOUT_BUDGET_S:-470}
prefix=${HELDOUT_PREFIX:-ho_}
start=$SECONDS
mkdir -p "$rep"
status="$rep/status.txt"
: >"$status"
note() { echo "$*" | tee -a "$status"; }

cases=()
if [ -n "${HELDOUT_CASES:-}" ]; then read -r -a cases <<<"$HELDOUT_CASES"
else for f in "$here"/src/"$prefix"*.cu; do [ -e "$f" ] && cases+=("$(basename "$f" .cu)"); done; fi
[ "$prefix" = ho_ ] || note "prefix: $prefix"
note "cases: ${#cases[@]} (${cases[*]})"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "nvcc: $(nvcc --version | tail -1)"
note "ncu: $(${NCU:-ncu} --version 2>/dev/null | tail -1)"

# 1. parallel build check
scratch=$(mktemp -d)
for c in "${cases[@]}"; do cp "$here/src/$c.cu" "$scratch"/; done
cp "$here"/src/sample.cuh "$scratch"/
export scratch
printf '%s\n' "${cases[@]}" | xargs -P 8 -I{} bash -c \
  'cd "$scratch" && if nvcc -arch=sm_90 -O3 -lineinfo -o {} {}.cu >{}.build.log 2>&1; then touch {}.ok; fi'
built=()
for c in "${cases[@]}"; do
  if [ -f "$scratch/$c.ok" ]; then built+=("$c")
  else
    note "BUILD FAILED: $c (skipped)"
    sed 's/^/    /' "$scratch/$c.build.log" | tee -a "$status"
  fi
done
note "built ${#built[@]} of ${#cases[@]} in $((SECONDS - start)) s"

# 2. time and profile, one case per call
done_cases=()
for c in "${built[@]}"; do
  if [ $((SECONDS - start)) -ge "$budget" ]; then note "SKIPPED (time budget): $c"; continue; fi
  t0=$SECONDS
  if SAMPLES_DIR=/opt/samples bash "$here/build_and_profile.sh" "$rep" "$c" >"$rep/$c.run.log" 2>&1; then
    done_cases+=("$c"); note "ok: $c ($((SECONDS - t0)) s)"
  else
    note "FAILED: $c ($((SECONDS - t0)) s), last lines of its log:"
    tail -n 15 "$rep/$c.run.log" | sed 's/^/    /' | tee -a "$status"
  fi
done
note "profiled ${#done_cases[@]} of ${#cases[@]} in $((SECONDS - start)) s"
cat "$rep/timings.txt" 2>/dev/null

# 3. compress and pack into one file
find "$rep" -maxdepth 1 \( -name '*.ncu-rep' -o -name '*.csv' \) -print0 | xargs -0 -r -P 16 -n 1 xz -9 -f
tar -C "$out" -cf "$out/heldout.tar" reports
note "packed $(du -h "$out/heldout.tar" | cut -f1) into $out/heldout.tar in $((SECONDS - start)) s"
ls -la "$out/heldout.tar"
