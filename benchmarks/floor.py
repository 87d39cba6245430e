"""The read floor for ``drgpu analyze``: read exactly the data drgpu reads, and nothing else.

``floor.py rep REPORT [--kernel A:B]`` loads an ``.ncu-rep`` through NVIDIA's ncu_report and,
for each selected launch, reads the scalar metrics drgpu reads (first present alias of each
metric in drgpu's metrics.yaml, the stall counters, names) and every per-PC metric it reads
(instruction columns, stall sampling and not-issued samples: correlation ids and values).
No SASS, no line table, no analysis, no output: a lower bound on any tool that reads them.

``floor.py csv RAW_CSV SOURCE_CSV [--kernel A:B]`` does the same for the CSV exports: parse
both pages with the csv module and convert the cells of the columns drgpu uses to numbers.

benchmarks/bench_analyze.py runs these as child processes and compares drgpu against them.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
from pathlib import Path

from functools import partial

from drgpu_py.specs import loader as data  # metric names only (no pandas)


def _dedupe(names):
    return list(dict.fromkeys(names))


def _span(selector: str | None, n: int) -> range:
    if not selector:
        return range(n)
    lo, _, hi = selector.partition(":")
    return range(int(lo or 0), min(n, int(hi)) if hi else n)


def _instance_getters():
    try:
        from ncu_report import _ncu_report as raw

        return raw.IMetric_as_uint64, raw.IMetric_as_double
    except (ImportError, AttributeError):
        import ncu_report

        return ncu_report.IMetric.as_uint64, ncu_report.IMetric.as_double


def _per_pc(m) -> tuple[list[int], list[float]]:
    n = m.num_instances()
    if n == 0 or not m.has_correlation_ids():
        return [], []
    ids = m.correlation_ids()
    # The same SWIG getters, called the same way, as drgpu's reader (readers/ncu_rep.py).
    as_id, as_value = _instance_getters()
    return list(map(partial(as_id, ids), range(n))), list(map(partial(as_value, m), range(n)))


def floor_rep(path: Path, selector: str | None) -> int:
    import ncu_report

    table = data.metrics_table()
    scalar_groups = [data.metric_aliases(c) for c in table["metrics"]]
    scalar_groups += [[n] for spec in data.stall_reasons().values() for n in spec["counter"]]
    pc_groups = [spec.get("rep", []) for spec in table["instruction_columns"].values()]
    sampling = [spec["sampling"] for spec in data.stall_reasons().values()]
    ctx = ncu_report.load_report(str(path))
    flat = [(r, i) for r in range(ctx.num_ranges()) for i in range(ctx.range_by_idx(r).num_actions())]
    values = 0
    for kid in _span(selector, len(flat)):
        r, i = flat[kid]
        a = ctx.range_by_idx(r).action_by_idx(i)
        a.name(ncu_report.IAction.NameBase_DEMANGLED)
        a.name(ncu_report.IAction.NameBase_MANGLED)
        for group in scalar_groups:
            for name in group:
                m = a.metric_by_name(name)
                if m is not None:
                    m.as_double()
                    values += 1
                    break
        for name in ("device__attribute_display_name", "launch__func_cache_config"):
            m = a.metric_by_name(name)
            if m is not None:
                m.as_string()
        m = a.metric_by_name("launch__function_pcs")
        if m is not None:
            m.as_uint64(0)
        for group in pc_groups:
            for name in group:
                m = a.metric_by_name(name)
                if m is not None and m.num_instances() > 0:
                    values += len(_per_pc(m)[1])
                    break
        for group in sampling:
            for name in group:
                m = a.metric_by_name(name)
                if m is None:
                    continue
                values += len(_per_pc(m)[1])
                mn = a.metric_by_name(name + "_not_issued")
                if mn is not None:
                    values += len(_per_pc(mn)[1])
                break
    return values


def _num(s: str) -> float:
    s = s.strip().replace(",", "")
    try:
        return float(s) if s else math.nan
    except ValueError:
        return math.nan


def floor_csv(raw: Path, source: Path, selector: str | None) -> int:
    table = data.metrics_table()
    wanted = set()
    for c in table["metrics"]:
        wanted.update(data.metric_aliases(c))
    for spec in data.stall_reasons().values():
        wanted.update(spec["counter"])
    rows = list(csv.reader(io.StringIO(raw.read_text(encoding="utf-8", errors="replace"))))
    header, body = rows[0], rows[2:]
    cols = [i for i, h in enumerate(header) if h in wanted]
    span = _span(selector, len(body))
    values = 0
    for kid in span:
        row = body[kid]
        values += sum(1 for i in cols if not math.isnan(_num(row[i])))
    src_wanted = {c for spec in table["instruction_columns"].values() for c in spec.get("csv", [])}
    src_wanted.update(c for spec in data.stall_reasons().values() for c in spec["csv"])
    src_rows = list(csv.reader(io.StringIO(source.read_text(encoding="utf-8", errors="replace"))))
    block, i = -1, 0
    keep = set(span)
    hcols: list[int] = []
    while i < len(src_rows):
        r = src_rows[i]
        if r and r[0] == "Kernel Name":
            block += 1
            head = src_rows[i + 1] if i + 1 < len(src_rows) else []
            hcols = [j for j, h in enumerate(head) if h in src_wanted]
            addr = head.index("Address") if "Address" in head else 0
            i += 2
            continue
        if r and block in keep:
            int(r[addr], 16)
            values += sum(1 for j in hcols if j < len(r) and not math.isnan(_num(r[j])))
        i += 1
    return values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("rep")
    r.add_argument("report", type=Path)
    r.add_argument("--kernel")
    c = sub.add_parser("csv")
    c.add_argument("raw", type=Path)
    c.add_argument("source", type=Path)
    c.add_argument("--kernel")
    a = ap.parse_args(argv)
    n = floor_rep(a.report, a.kernel) if a.kind == "rep" else floor_csv(a.raw, a.source, a.kernel)
    print(f"{n} values read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
