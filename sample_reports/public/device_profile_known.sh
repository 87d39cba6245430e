#!/usr/bin/env bash
# Profile public-corpus programs whose hottest kernel is already known (device_round.sh's hot.tsv
# from an earlier call on the same machine), without the hot-kernel pass: the programs must be
# built in /opt/samples/NAME by device_round.sh. Same profile as device_round.sh step 3 and 4.
# Usage, from the repository root: bash sample_reports/public/device_profile_known.sh OUTDIR HOT_TSV
# HOT_TSV: NAME<TAB>MANGLED_KERNEL per line. Output: OUTDIR/round.tar (reports xz, cubins, logs).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); list=$(realpath "$2"); rep="$out/reports"; mkdir -p "$rep"
mapfile -t dargs <"$here/default_set_gh100.args"
runargs() { sed -n '/^run:/{n;p;q}' "/opt/samples/$1/Makefile" | sed 's/\$(LAUNCHER)//; s/^[[:space:]]*//' | cut -d' ' -f2-; }
progname() { sed -n 's/^program[[:space:]]*=[[:space:]]*//p' "/opt/samples/$1/Makefile" | head -1; }
while IFS=$'\t' read -r n k; do
  [ -z "$n" ] && continue
  d=/opt/samples/$n; p=$(progname "$n"); read -r -a a <<<"$(runargs "$n")"; t=$SECONDS
  (cd "$d" && timeout 150 ncu "${dargs[@]}" --import-source yes --kernel-name-base mangled -k "$k" -c 1 -f \
      -o "$rep/$n" "./$p" "${a[@]}" >"$rep/$n.ncu.log" 2>&1)
  if [ -f "$rep/$n.ncu-rep" ]; then echo "ok $n ($((SECONDS - t)) s)" | tee -a "$rep/status.txt"
    (cd "$d" && mkdir -p cubin && cd cubin && cuobjdump -xelf all "../$p" >/dev/null 2>&1; f=$(ls -S ./*sm_90*.cubin 2>/dev/null | head -1); [ -n "$f" ] && cp "$f" "$rep/$n.sm_90.cubin")
  else echo "failed $n" | tee -a "$rep/status.txt"; tail -3 "$rep/$n.ncu.log"; fi
done <"$list"
cd "$rep" && xz -9 -T0 ./*.ncu-rep ./*.cubin 2>/dev/null; tar cf "$out/round.tar" . && echo packed
