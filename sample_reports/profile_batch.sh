#!/usr/bin/env bash
# Build, time and profile many sample programs on a GPU machine within a time budget.
#
# Usage: sample_reports/profile_batch.sh OUTDIR SECONDS CASE [CASE ...]
#
# Same outputs as build_and_profile.sh (near misses, nm_*, profile only their bad variant) (CASE/CASE_{bad,fixed}.ncu-rep.xz with their raw and
# source CSV exports and ncu logs, CASE.sm_90.cubin, timings.txt), but the programs are
# compiled in parallel, the CSV exports and xz compression run in the background while the
# GPU profiles the next case, and no case is started once SECONDS have passed: the cases done
# are listed in OUTDIR/done.txt, so a second call can finish the rest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); budget=$2; shift 2
work=${SAMPLES_DIR:-/opt/samples}
arch=${SAMPLES_ARCH:-sm_90}
NCU=${NCU:-ncu}
jobs=$(nproc)
start=$SECONDS
mkdir -p "$work" "$out"
cp "$here"/src/*.cu "$here"/src/*.cuh "$work"/
cd "$work"
build() {
  local c=$1
  nvcc -arch="$arch" -O3 -lineinfo -o "$c" "$c.cu" 2>"$c.build.log" || { echo "build failed: $c"; cat "$c.build.log"; return 0; }
  rm -rf "xelf_$c" && mkdir "xelf_$c" && (cd "xelf_$c" && cuobjdump -xelf all "../$c" >/dev/null)
}
export -f build; export arch
printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'build {}'
echo "built in $((SECONDS - start)) s"
post() {   # CSV exports and compression of one profiled variant (CPU only)
  local rep=$1
  "$NCU" -i "$rep.ncu-rep" --csv --page raw --print-units base >"$rep.raw.csv" 2>/dev/null || true
  "$NCU" -i "$rep.ncu-rep" --csv --page source --print-source sass >"$rep.source.csv" 2>/dev/null || true
  xz -9 -T1 -f "$rep.ncu-rep"
}
for c in "$@"; do
  if (( SECONDS - start > budget )); then echo "budget spent before $c"; break; fi
  [ -x "$c" ] || continue
  d="$out/$c"; mkdir -p "$d"
  cp "xelf_$c"/*."$arch".cubin "$d/$c.$arch.cubin" 2>/dev/null || true
  for v in bad fixed; do
    timeout 60 ./"$c" "$v" 50 | tee -a "$out/timings.txt" || echo "$c $v failed" | tee -a "$out/failed.txt"
    # A near miss (nm_*) is checked on its bad variant; its fixed variant is only timed.
    if [[ $c == nm_* && $v == fixed ]]; then continue; fi
    timeout 120 "$NCU" --set full --import-source yes -c 1 -f -o "$d/${c}_$v" ./"$c" "$v" 0 >"$d/${c}_$v.ncu.log" 2>&1 || true
    [ -f "$d/${c}_$v.ncu-rep" ] && post "$d/${c}_$v" &
  done
  echo "$c" >>"$out/done.txt"
  echo "== $c at $((SECONDS - start)) s"
done
wait
echo "finished in $((SECONDS - start)) s"
