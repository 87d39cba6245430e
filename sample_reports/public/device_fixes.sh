#!/usr/bin/env bash
# Time the public corpus's fixes against the originals on a GPU machine, in one call.
#
# Usage, from the repository root: bash sample_reports/public/device_fixes.sh OUTDIR FIXES_TSV
#
# FIXES_TSV: one line per variant, tab-separated: PROGRAM VARIANT KERNEL_REGEX LAUNCHES [MODE [ARGS]].
# ARGS replaces the Makefile's run arguments (fewer repetitions: a program runs slowly under ncu
# when it launches many kernels, every launch intercepted). VARIANT
# "orig" is the program as selected (with fixes/PROGRAM/orig.patch applied where one exists: it
# only prints a checksum of the outputs); any other names sample_reports/public/fixes/PROGRAM/VARIANT.patch
# (a unified diff of the program's folder, applied with patch -p1 inside it). For each line:
#  1. builds the variant with its Makefile in /opt/samples/PROGRAM.VARIANT (CC="nvcc -lineinfo"
#     ARCH=sm_90; all variants first, in parallel);
#  2. runs it once at the Makefile's run arguments and keeps its output with the lines that
#     print times removed (OUTDIR/PROGRAM.VARIANT.out): the outputs to compare;
#  3. times it: ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none
#     over the first LAUNCHES launches of the kernels matching KERNEL_REGEX (a regex on the demangled
#     function name); the variant's time is the sum over distinct kernels of each kernel's median
#     launch time (a fix that splits or fuses kernels launches each once per step); MODE "mean":
#     the matched launches' total time over their number (launches of one kernel that do
#     different work, e.g. one per parameter value, where a fix names a kernel per value); MODE
#     "sum": the matched launches' total time (a fix that does the same work in fewer launches,
#     LAUNCHES set to each variant's whole run).
# The original of each program is timed twice, first and last, to show the spread between runs.
# Output: OUTDIR/times.tsv (PROGRAM VARIANT RUN US LAUNCHES KERNELS) and OUTDIR/fixes.tar.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); list=$(realpath "$2")
mkdir -p "$out/logs"; budget=${FIXES_BUDGET_S:-540}; start=$SECONDS
times="$out/times.tsv"; printf 'program\tvariant\trun\tus\tlaunches\tkernels\n' >"$times"
mkdir -p /opt/samples
while IFS=$'\t' read -r prog var regex launches mode; do
  [ -z "$prog" ] || [[ $prog == \#* ]] && continue
  d=/opt/samples/$prog.$var; rm -rf "$d"; cp -r "$here/src/$prog" "$d"
  if [ -f "$here/fixes/$prog/$var.patch" ]; then (cd "$d" && patch -s -p1 <"$here/fixes/$prog/$var.patch") || echo "patch failed: $prog $var"; fi
done <"$list"
cut -f1,2 "$list" | grep -v '^#' | sort -u | tr '\t' '.' | xargs -P 16 -I{} bash -c \
  'cd /opt/samples/{} && make CC="nvcc -lineinfo" ARCH=sm_90 >build.log 2>&1 || echo "build failed: {}"'
echo "built in $((SECONDS - start)) s"
runargs() { sed -n '/^run:/{n;p;q}' "$1/Makefile" | sed 's/\$(LAUNCHER)//; s/^[[:space:]]*//' | cut -d' ' -f2-; }
progname() { sed -n 's/^program[[:space:]]*=[[:space:]]*//p' "$1/Makefile" | head -1; }
time_one() {  # PROGRAM VARIANT REGEX LAUNCHES RUN MODE [ARGS]
  local d=/opt/samples/$1.$2 p a
  p=$(progname "$d"); read -r -a a <<<"${7:-$(runargs "$d")}"
  (cd "$d" && timeout 200 ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none --kernel-name-base demangled \
     -k "regex:$3" -c "$4" --csv --page raw "./$p" "${a[@]}" >"$out/logs/$1.$2.$5.csv" 2>"$out/logs/$1.$2.$5.err")
  python3 - "$out/logs/$1.$2.$5.csv" "$1" "$2" "$5" "${6:-median}" >>"$times" <<'PY'
import csv, sys, statistics, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
per = collections.defaultdict(list)
if head is not None:
    k, t = rows[head].index("Kernel Name"), rows[head].index("gpu__time_duration.sum")
    for r in rows[head + 2:]:
        try: per[r[k].split("(")[0]].append(float(r[t].replace(",", "")))
        except (ValueError, IndexError): pass
n = sum(len(v) for v in per.values())
if not per: us = float("nan")
elif sys.argv[5] == "mean": us = sum(sum(v) for v in per.values()) / n / 1000
elif sys.argv[5] == "sum": us = sum(sum(v) for v in per.values()) / 1000
else: us = sum(statistics.median(v) for v in per.values()) / 1000
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{sys.argv[4]}\t{us:.3f}\t{n}\t{len(per)}")
PY
}
declare -A seen
while IFS=$'\t' read -r prog var regex launches mode args; do
  [ -z "$prog" ] || [[ $prog == \#* ]] && continue
  if (( SECONDS - start > budget )); then echo "budget spent before $prog $var"; continue; fi
  d=/opt/samples/$prog.$var
  [ -x "$d/$(progname "$d")" ] || { echo "not built: $prog $var"; tail -5 "$d/build.log"; continue; }
  p=$(progname "$d"); read -r -a a <<<"${args:-$(runargs "$d")}"
  (cd "$d" && timeout 200 "./$p" "${a[@]}" 2>&1 | grep -viE 'time|elapsed|throughput|GB/s|bandwidth|[0-9] *(ms|us|s)\b' >"$out/$prog.$var.out")
  time_one "$prog" "$var" "$regex" "$launches" 1 "${mode:-median}" "$args"
  [ "$var" = orig ] && seen[$prog]="$regex	$launches	${mode:-median}	$args"
done <"$list"
for prog in "${!seen[@]}"; do IFS=$'\t' read -r regex launches mode args <<<"${seen[$prog]}"; time_one "$prog" orig "$regex" "$launches" 2 "$mode" "$args"; done
for f in "$out"/*.out; do b=${f%.*}; prog=${b##*/}; prog=${prog%.*}; o="$out/$prog.orig.out"
  [ "$f" = "$o" ] || { cmp -s "$f" "$o" && echo "same output: ${f##*/}" || echo "DIFFERENT output: ${f##*/}"; }; done | tee "$out/outputs.txt"
column -t "$times"
tar -C "$out" -cf "$out/fixes.tar" times.tsv outputs.txt logs $(cd "$out" && ls ./*.out)
