#!/usr/bin/env bash
# Profile a round of the public corpus (sample_reports/public/src/NAME, HeCBench programs) on a
# GPU machine, in the order given, until ROUND_SIZE programs have a report or the time budget ends.
#
# Usage, from the repository root: bash sample_reports/public/device_round.sh OUTDIR NAME...
#
# For each program:
#  1. builds it with its own Makefile in /opt/samples/NAME (a neutral folder, so reports carry no
#     machine paths), CC="nvcc -lineinfo" ARCH=sm_90 (all programs are built first, in parallel);
#  2. finds its hottest kernel: ncu --metrics gpu__time_duration.sum --clock-control none over its
#     first HOT_LAUNCHES launches at the Makefile's run arguments, GPU time summed per mangled name;
#  3. profiles the first launch of that kernel with drgpu profile's default set for gh100
#     (sample_reports/public/default_set_gh100.args) and --import-source yes;
#  4. extracts the program's sm_90 cubin (cuobjdump -xelf).
# A program that fails to build, fails under ncu or runs past its time limit (STEP_LIMIT_S per ncu
# run, default 150) is recorded and
# skipped. Outputs: OUTDIR/round.tar (reports xz-compressed, cubins, logs, status.txt, hot.tsv).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); shift
rep="$out/reports"; mkdir -p "$rep"
size=${ROUND_SIZE:-14}; budget=${ROUND_BUDGET_S:-480}; hot_launches=${HOT_LAUNCHES:-400}; step_limit=${STEP_LIMIT_S:-150}
mapfile -t dargs <"$here/default_set_gh100.args"
start=$SECONDS
status="$rep/status.txt"; : >"$status"
note() { echo "$*" | tee -a "$status"; }
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
note "nvcc: $(nvcc --version | tail -1)"
note "ncu: $(ncu --version | tail -1)"
mkdir -p /opt/samples
for n in "$@"; do rm -rf "/opt/samples/$n"; cp -r "$here/src/$n" "/opt/samples/$n"; done
printf '%s\n' "$@" | xargs -P 16 -I{} bash -c \
  'cd /opt/samples/{} && make CC="nvcc -lineinfo" ARCH=sm_90 >build.log 2>&1 || echo "build failed: {}"' | tee -a "$status"
note "built in $((SECONDS - start)) s"
runargs() { sed -n '/^run:/{n;p;q}' "/opt/samples/$1/Makefile" | sed 's/\$(LAUNCHER)//; s/^[[:space:]]*//' | cut -d' ' -f2-; }
progname() { sed -n 's/^program[[:space:]]*=[[:space:]]*//p' "/opt/samples/$1/Makefile" | head -1; }
done_count=0
for n in "$@"; do
  (( done_count >= size )) && break
  if (( SECONDS - start > budget )); then note "budget spent before $n"; break; fi
  d=/opt/samples/$n; p=$(progname "$n"); read -r -a a <<<"$(runargs "$n")"
  [ -x "$d/$p" ] || { note "skip $n: not built"; sed 's/^/    /' "$d/build.log" | tail -5 | tee -a "$status"; continue; }
  t=$SECONDS
  (cd "$d" && timeout -k 10 "$step_limit" ncu --metrics gpu__time_duration.sum --clock-control none --print-kernel-base mangled \
      -c "$hot_launches" --csv --page raw "./$p" "${a[@]}" >"$rep/${n}_hot.csv" 2>"$rep/${n}_hot.err")
  rc=$?
  hot=$(python3 - "$rep/${n}_hot.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
if head is None: sys.exit(0)
k, t = rows[head].index("Kernel Name"), rows[head].index("gpu__time_duration.sum")
tot, cnt = collections.Counter(), collections.Counter()
for r in rows[head + 2:]:
    try: tot[r[k]] += float(r[t].replace(",", "")); cnt[r[k]] += 1
    except (ValueError, IndexError): pass
if tot:
    name, ns = tot.most_common(1)[0]
    print(f"{name}\t{ns:.0f}\t{cnt[name]}\t{sum(tot.values()):.0f}\t{len(tot)}")
PY
)
  if [ -z "$hot" ]; then note "skip $n: no kernel timed (rc $rc)"; tail -3 "$rep/${n}_hot.err" | sed 's/^/    /' | tee -a "$status"; continue; fi
  printf '%s\t%s\n' "$n" "$hot" >>"$rep/hot.tsv"
  k=$(cut -f1 <<<"$hot")
  (cd "$d" && timeout -k 10 "$step_limit" ncu "${dargs[@]}" --import-source yes --kernel-name-base mangled -k "$k" -c 1 -f \
      -o "$rep/$n" "./$p" "${a[@]}" >"$rep/$n.ncu.log" 2>&1)
  if [ -f "$rep/$n.ncu-rep" ]; then
    done_count=$((done_count + 1)); note "ok $n ($((SECONDS - t)) s) hot: $hot"
    (cd "$d" && mkdir -p cubin && cd cubin && cuobjdump -xelf all "../$p" >/dev/null 2>&1; f=$(ls -S ./*sm_90*.cubin 2>/dev/null | head -1); [ -n "$f" ] && cp "$f" "$rep/$n.sm_90.cubin")
  else
    note "skip $n: profile failed"; tail -5 "$rep/$n.ncu.log" | sed 's/^/    /' | tee -a "$status"
  fi
done
note "profiled $done_count in $((SECONDS - start)) s"
cd "$rep" && xz -9 -T0 ./*.ncu-rep ./*_hot.csv ./*.cubin 2>/dev/null; tar cf "$out/round.tar" . && note "packed"
