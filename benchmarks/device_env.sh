# Shared set-up of the device benchmarks that run drgpu beside ncu (profile_wall.sh,
# profile_costs.sh); sourced with $here (the repository root) and $out (the results folder) set.
# Gives: PYTHONPATH with this checkout, the carried pure-Python packages (.device/pylib) and
# ncu's own ncu_report (extras/python); `drgpu` (the CLI from this checkout); `dargs` (ncu's
# arguments for drgpu's default metric set on gh100); `timed TSV NAME WAY CMD...` (runs CMD,
# its output to $out/NAME_WAY.log, and appends NAME, WAY, wall seconds and exit status to TSV).
ncu_py=$(dirname "$(find "$(dirname "$(readlink -f "$(command -v ncu)")")/.." /usr/local/cuda* /opt -name ncu_report.py -path "*extras/python*" 2>/dev/null | head -1)")
export PYTHONPATH="$here:$here/.device/pylib:$ncu_py${PYTHONPATH:+:$PYTHONPATH}"
drgpu() { python3 -c "import sys; from drgpu_py.cli import main; sys.argv[0] = 'drgpu'; main()" "$@"; }
mapfile -t dargs < <(cd "$here" && python3 -c 'from drgpu_py.specs.metric_sets import load_metric_set as m; print("\n".join(m("gh100").selection().ncu_args()))')
timed() {
  local tsv=$1 name=$2 way=$3; shift 3
  local t0 t1 rc
  t0=$(date +%s.%N); "$@" >"$out/${name}_$way.log" 2>&1; rc=$?; t1=$(date +%s.%N)
  printf '%s\t%s\t%s\t%s\n' "$name" "$way" "$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")" "$rc" | tee -a "$tsv"
}
