#!/usr/bin/env bash
# One device call: profile a round's programs, then time fixes, inside the call's time limit.
#
# Usage, from the repository root:
#   ROUND_PROGRAMS="a b c" FIXES_LISTS="x.tsv y.tsv" bash sample_reports/public/device_session.sh OUTDIR
# Optional: ROUND_S (seconds for the round, default 240), TOTAL_S (the whole call, default 560),
# FIXES_SKIP (a regex: list lines to leave out), plus device_round.sh's own variables (ROUND_SIZE, HOT_LAUNCHES, STEP_LIMIT_S).
# Steps: stops any ncu an earlier, killed call left running (it holds ncu's lock); runs
# device_round.sh on ROUND_PROGRAMS; joins the FIXES_LISTS into one list and runs
# device_fixes.sh on it with what time is left. Whatever each step finished is packed into
# OUTDIR/session.tar (round.tar, fixes.tar, or the loose files of a step cut short), and only that
# file is left under OUTDIR.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1"); mkdir -p "$out/round" "$out/fixes"
total=${TOTAL_S:-560}; start=$SECONDS
pkill -f 'ncu ' 2>/dev/null; sleep 1; rm -f /tmp/nsight-compute-lock* 2>/dev/null
if [ -n "${ROUND_PROGRAMS:-}" ]; then
  # shellcheck disable=SC2086
  ROUND_BUDGET_S=$(( ${ROUND_S:-240} - 60 )) timeout -k 10 "${ROUND_S:-240}" \
    bash "$here/device_round.sh" "$out/round" $ROUND_PROGRAMS
fi
if [ -n "${FIXES_LISTS:-}" ]; then
  # shellcheck disable=SC2086
  cat $FIXES_LISTS | grep -vE "${FIXES_SKIP:-^$}" >"$out/fixes.tsv"
  left=$(( total - (SECONDS - start) ))
  FIXES_BUDGET_S=$(( left - 90 )) timeout -k 10 "$left" bash "$here/device_fixes.sh" "$out/fixes" "$out/fixes.tsv"
fi
pkill -f 'ncu ' 2>/dev/null
cd "$out" || exit 1
pack() {  # STEP TARNAME: the step's own tar where it finished, else its loose files (reports compressed)
  if [ -f "$1/$2" ]; then echo "$1/$2"; return; fi
  find "$1" -name '*.ncu-rep' -exec xz -T0 {} + 2>/dev/null; find "$1" -type f
}
{ pack round round.tar; pack fixes fixes.tar; ls fixes.tsv 2>/dev/null; } >pack.list
tar cf session.tar -T pack.list
rm -rf "$out/round" "$out/fixes" "$out/fixes.tsv" "$out/pack.list"
echo "session done in $((SECONDS - start)) s"; tar tf session.tar | wc -l
