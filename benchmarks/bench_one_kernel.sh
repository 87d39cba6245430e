#!/usr/bin/env bash
# Whole-process time of `drgpu --help` and of a one-kernel `drgpu analyze` in each output
# format, wall and CPU (user+sys of the process and everything it started: readers, nvdisasm),
# for one or more source trees side by side (first on PYTHONPATH each).
#
# Usage: benchmarks/bench_one_kernel.sh REPORT REPEAT TREE [TREE...]
# Env: PYTHON (python3), FORMATS (default "json text html csv").
# Runs from a temporary folder: `python -m drgpu_py` would otherwise import the package
# from the current directory, whatever PYTHONPATH says.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 REPORT REPEAT TREE [TREE...]" >&2; exit 2; }
report=$(realpath "$1"); repeat=$2; shift 2
PY=${PYTHON:-python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
echo "| tree | command | wall s (each run) | CPU s user+sys (each run) |"
echo "|---|---|---|---|"
for tree in "$@"; do
  tree=$(realpath "$tree")
  for what in help ${FORMATS:-json text html csv}; do
    walls=(); cpus=()
    for i in $(seq "$repeat"); do
      if [ "$what" = help ]; then argv=(-m drgpu_py --help); else argv=(-m drgpu_py analyze "$report" -f "$what" -o "out.$what" --force -q); fi
      PYTHONPATH="$tree${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/time -o "$tmp/t" -f "%e %U %S" "$PY" "${argv[@]}" >/dev/null 2>&1
      read -r w u s < "$tmp/t"
      walls+=("$w"); cpus+=("$(printf "%.2f" "$(echo "$u + $s" | bc)")")
    done
    echo "| $(basename "$tree") | ${what/help/--help} | ${walls[*]} | ${cpus[*]} |"
  done
done
