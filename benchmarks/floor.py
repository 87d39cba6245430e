"""The read floor for ``drgpu analyze``: read exactly the data drgpu reads, and nothing else.

``floor.py rep REPORT [--kernel A:B]`` loads an ``.ncu-rep`` through NVIDIA's ncu_report and,
for each selected launch, reads the scalar metrics drgpu reads (first present alias of each
metric in drgpu's metrics.yaml, the stall counters, names) and every per-PC metric it reads
(instruction columns, stall sampling and not-issued samples: correlation ids and values).
No SASS, no line table, no analysis, no output: a lower bound on any tool that reads them.
With ``--sass`` it also reads what drgpu's analysis needs from the code: each function's SASS
through ncu_report (``sass_by_pc`` from the entry PC until the first PC past the highest
per-PC id without any, as drgpu's reader walks it), the line of each instruction
(``source_info``) and the source files, once per function (drgpu's function cache does the
same); its first ``sass_by_pc`` starts ncu_report's disassembler.

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


def _code(a, base: int, end: int) -> int:
    """SASS, lines and sources of one function, walked as drgpu's reader walks it."""
    values, pc = 0, base
    while pc - base < (4 << 20):
        text = a.sass_by_pc(pc)
        if not text:
            if pc > end:
                break
        else:
            si = a.source_info(pc)
            if si is not None:
                si.file_name(), si.line()
            values += 1
        pc += 16
    files = a.source_files()
    for f in files:
        str(files[f])
    return values


def floor_rep(path: Path, selector: str | None, sass: bool = False) -> int:
    import ncu_report

    table = data.metrics_table()
    scalar_groups = [data.metric_aliases(c) for c in table["metrics"]]
    scalar_groups += [[n] for spec in data.stall_reasons().values() for n in spec["counter"]]
    pc_groups = [spec.get("rep", []) for spec in table["instruction_columns"].values()]
    sampling = [spec["sampling"] for spec in data.stall_reasons().values()]
    ctx = ncu_report.load_report(str(path))
    flat = [(r, i) for r in range(ctx.num_ranges()) for i in range(ctx.range_by_idx(r).num_actions())]
    values = 0
    walked: set[tuple[str, int]] = set()
    for kid in _span(selector, len(flat)):
        r, i = flat[kid]
        a = ctx.range_by_idx(r).action_by_idx(i)
        a.name(ncu_report.IAction.NameBase_DEMANGLED)
        mangled = a.name(ncu_report.IAction.NameBase_MANGLED)
        ids: set[int] = set()
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
        base = None
        m = a.metric_by_name("launch__function_pcs")
        if m is not None:
            base = m.as_uint64(0)
        values += _per_pc_values(a, pc_groups, sampling, ids)
        if sass and base is not None and (mangled, base) not in walked:
            walked.add((mangled, base))
            values += _code(a, base, max(ids, default=base))
    return values


def _per_pc_values(a, pc_groups: list[list[str]], sampling: list[list[str]], ids: set[int]) -> int:
    """Read every per-PC metric drgpu reads (the first present name of each); ``ids`` gets
    their correlation ids (PCs). Returns the number of values read."""
    values = 0
    for group in pc_groups:
        for name in group:
            m = a.metric_by_name(name)
            if m is not None and m.num_instances() > 0:
                pcs, vals = _per_pc(m)
                ids.update(pcs)
                values += len(vals)
                break
    for group in sampling:
        for name in group:
            m = a.metric_by_name(name)
            if m is None:
                continue
            pcs, vals = _per_pc(m)
            ids.update(pcs)
            values += len(vals)
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
    r.add_argument(
        "--sass", action="store_true", help="also read SASS, lines and sources (drgpu's analysis needs them)"
    )
    c = sub.add_parser("csv")
    c.add_argument("raw", type=Path)
    c.add_argument("source", type=Path)
    c.add_argument("--kernel")
    a = ap.parse_args(argv)
    n = floor_rep(a.report, a.kernel, a.sass) if a.kind == "rep" else floor_csv(a.raw, a.source, a.kernel)
    print(f"{n} values read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
