#!/usr/bin/env bash
# Build, time and profile drgpu's sample programs on a GPU machine.
#
# Usage: sample_reports/build_and_profile.sh OUTDIR [CASE ...]
#
# For each case (a file src/CASE.cu) it builds CASE with -lineinfo in a neutral folder
# (/opt/samples, so reports name no developer's paths), extracts its cubin, times both
# variants (median of 50 launches), profiles each variant's first launch with
# `ncu --set full --import-source yes -c 1`, and exports the raw and source CSV pages. A program
# whose variant is a sequence of launches says so with a line `// PROFILE_LAUNCHES: N` (N
# launches per run of the variant): it is profiled with -c N, the whole sequence.
# Outputs in OUTDIR: CASE_{bad,fixed}.ncu-rep / .raw.csv / .source.csv / .ncu.log,
# CASE.sm_90.cubin, and timings.txt (one line per variant). The repository keeps the reports
# compressed: `xz -9 CASE_*.ncu-rep` before committing (sample_reports/unpack.py unpacks them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); shift
work=${SAMPLES_DIR:-/opt/samples}
arch=${SAMPLES_ARCH:-sm_90}
NCU=${NCU:-ncu}
mkdir -p "$work" "$out"
cp "$here"/src/*.cu "$here"/src/*.cuh "$work"/
cd "$work"
if [ $# -gt 0 ]; then cases=("$@"); else cases=(); for f in *.cu; do cases+=("${f%.cu}"); done; fi
for c in "${cases[@]}"; do
  echo "== $c"
  nvcc -arch="$arch" -O3 -lineinfo -o "$c" "$c.cu"
  rm -rf "xelf_$c" && mkdir "xelf_$c" && (cd "xelf_$c" && cuobjdump -xelf all "../$c" >/dev/null)
  cp "xelf_$c"/*."$arch".cubin "$out/$c.$arch.cubin"
  launches=$(sed -n 's|^// PROFILE_LAUNCHES: *\([0-9][0-9]*\).*|\1|p' "$c.cu" | head -1)
  for v in bad fixed; do
    ./"$c" "$v" 50 | tee -a "$out/timings.txt"
    "$NCU" --set full --import-source yes -c "${launches:-1}" -f -o "$out/${c}_$v" ./"$c" "$v" 0 >"$out/${c}_$v.ncu.log" 2>&1
    "$NCU" -i "$out/${c}_$v.ncu-rep" --csv --page raw --print-units base >"$out/${c}_$v.raw.csv"
    "$NCU" -i "$out/${c}_$v.ncu-rep" --csv --page source --print-source sass >"$out/${c}_$v.source.csv"
  done
done
