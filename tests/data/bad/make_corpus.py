"""Regenerate the committed bad-input corpus (tests/data/bad/*) from one real sample.

Run from the repository root: ``python tests/data/bad/make_corpus.py``. The files it
writes are committed, so the tests never depend on this script; it exists so that every
case can be traced to how it was made. Cases derived from the 1 MB ``.ncu-rep`` samples
(truncation, byte flips) are not committed: ``tests/robustness/test_bad_inputs.py`` builds them at
test time, as described by ``cases.yaml``.

Base: ``sample_reports/few_blocks/few_blocks_bad.raw.csv`` reduced to the identity columns
and the metrics drgpu reads (``specs/metrics.yaml``), and its source-page export.
ncu cannot run here, so the ``--set basic`` report is emulated: the raw export with the
SourceCounters and WarpStateStats columns (PC sampling, stall counters) removed.
"""

from __future__ import annotations

import csv
import io
import lzma
import random
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SAMPLE = ROOT / "sample_reports" / "few_blocks" / "few_blocks_bad"
ID_COLS = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]

# Hostile text: HTML, quotes, braces, DOT syntax, rich markup, format strings, newlines.
HOSTILE = (
    '<script>alert("x")</script> {a} ${b} %s \'q\' "q" ]; n1 -> n2 [label="pwn"]; '
    "} digraph { [bold]x[/] [/nope] <!-- --> &amp; \\ \u202e"
)


def _csv(rows: list[list[str]], delimiter: str = ",", newline: str = "\n") -> str:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, quoting=csv.QUOTE_ALL, lineterminator=newline)
    w.writerows(rows)
    return buf.getvalue()


def _used_metrics() -> set[str]:
    sys.path.insert(0, str(ROOT))
    from drgpu_py.specs import loader as data

    names: set[str] = set()
    for canon in data.metrics_table()["metrics"]:
        names.update(data.metric_aliases(canon))
    for spec in data.stall_reasons().values():
        names.update(spec["counter"])
        names.update(spec.get("sampling", []))
    return names


def base_table() -> tuple[list[str], list[str], list[str]]:
    """(header, units, kernel row) of the reduced raw export."""
    rows = list(csv.reader(io.StringIO((SAMPLE.with_suffix(".raw.csv")).read_text())))
    header, units, row = rows[0], rows[1], rows[2]
    keep = [i for i, h in enumerate(header) if h in ID_COLS or h in _used_metrics()]
    return [header[i] for i in keep], [units[i] for i in keep], [row[i] for i in keep]


def _with(header, row, **cells) -> list[str]:
    row = list(row)
    for k, v in cells.items():
        row[header.index(k.replace("_", " ") if k in ("Kernel_Name", "Process_Name") else k)] = v
    return row


def _zipped(name: str, text: str) -> bytes:
    """A zip archive of one file, the same bytes on every run (fixed date)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo(name, date_time=(2025, 1, 1, 0, 0, 0)), text)
    return buf.getvalue()


def main() -> None:
    header, units, row = base_table()
    src_text = SAMPLE.with_suffix(".source.csv").read_text()
    src_rows = list(csv.reader(io.StringIO(src_text)))
    files: dict[str, str | bytes] = {}

    files["mini.raw.csv"] = _csv([header, units, row])
    files["mini.source.csv"] = src_text
    files["empty.ncu-rep"] = b""
    files["empty.raw.csv"] = b""
    files["blank_lines.raw.csv"] = "\n\n   \n"
    files["not_a_report.ncu-rep"] = "this is a text file someone renamed\n"
    files["magic_only.ncu-rep"] = b"NVR\x00\x02\x00\x00\x00"
    rnd = random.Random(7)
    files["binary_garbage.csv"] = bytes(rnd.randrange(256) for _ in range(2048))
    # Compressed inputs drgpu does not read: a zip archive (it says how to unpack it) and an xz
    # file cut short (xz, gzip and bzip2 are read through a decompressed copy).
    files["zipped.ncu-rep"] = _zipped("mini.raw.csv", files["mini.raw.csv"])
    files["cut.raw.csv.xz"] = lzma.compress(files["mini.raw.csv"].encode("utf-8"))[:-64]

    # Details page: the header ncu 2025.3 writes for --page details (scripts/device/facts).
    det_header = ID_COLS + [
        "Section Name",
        "Metric Name",
        "Metric Unit",
        "Metric Value",
        "Rule Name",
        "Rule Type",
        "Rule Description",
        "Estimated Speedup Type",
        "Estimated Speedup",
    ]
    ident = row[: len(ID_COLS)]
    files["details_page.csv"] = _csv(
        [
            det_header,
            ident + ["GPU Speed Of Light Throughput", "Duration", "us", "4.06", "", "", "", "", ""],
            ident + ["GPU Speed Of Light Throughput", "Memory Throughput", "%", "1.20", "", "", "", "", ""],
        ]
    )
    files["source_page_as_raw.csv"] = _csv(src_rows[:12])

    files["zero_kernels.raw.csv"] = _csv([header, units])
    files["header_only.raw.csv"] = _csv([header])
    full = _csv([header, units, row])
    files["truncated_row.raw.csv"] = full[: len(_csv([header, units])) + len(_csv([row])) // 2]
    renamed = ["Name" if h == "Kernel Name" else h for h in header]
    files["no_kernel_name_column.raw.csv"] = _csv([renamed, units, row])
    files["semicolon.raw.csv"] = _csv([header, units, row], delimiter=";")
    files["leading_blank_lines.raw.csv"] = "\n\n\n" + _csv([header, units, row])
    files["crlf_bom.raw.csv"] = ("\ufeff" + _csv([header, units, row], newline="\r\n")).encode("utf-8")

    # No sampling: the SourceCounters (pcsamp, derived source metrics) and WarpStateStats
    # (stall counter) columns removed, as in a report collected without those sections.
    drop = [
        i
        for i, h in enumerate(header)
        if h.startswith("smsp__pcsamp")
        or h.startswith("derived__")
        or "issue_stalled" in h
        or h.startswith("smsp__average_warp")
    ]
    keep = [i for i in range(len(header)) if i not in drop]
    files["no_sampling.raw.csv"] = _csv([[r[i] for i in keep] for r in (header, units, row)])
    # --set basic emulation (LaunchStats, Occupancy, SpeedOfLight, WorkloadDistribution):
    # only the metrics that specs/metrics.yaml files under those sections.
    from drgpu_py.specs import loader as data

    basic = {"LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution"}
    keep = [i for i, h in enumerate(header) if h in ID_COLS or data.metric_section(h) in basic]
    files["basic_set.raw.csv"] = _csv([[r[i] for i in keep] for r in (header, units, row)])

    # Older ncu: metrics under their former names (aliases in specs/metrics.yaml), others gone.
    old = {
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "smsp__sass_branch_targets_threads_divergent.sum": "smsp__branch_targets_threads_divergent.sum",
        "launch__shared_mem_per_block": "launch__shared_mem_per_block_allocated",
    }
    old_header = [old.get(h, h) for h in header]
    cut = [i for i, h in enumerate(header) if h.startswith("sm__inst_executed_pipe_") or h.startswith("sm__pipe_")]
    files["older_ncu.raw.csv"] = _csv(
        [[r[i] for i in range(len(header)) if i not in cut] for r in (old_header, units, row)]
    )
    # Only a handful of columns (e.g. ncu --metrics with two metrics), no units row.
    few = [
        i
        for i, h in enumerate(header)
        if h in ID_COLS or h.startswith("sm__cycles_elapsed") or h == "gpu__time_duration.sum"
    ]
    files["few_metrics_no_units.raw.csv"] = _csv([[r[i] for i in few] for r in (header, row)])

    na = [c if h in ID_COLS else "n/a" for h, c in zip(header, row)]
    files["all_na.raw.csv"] = _csv([header, units, na])
    mixed = [("n/a" if i % 3 == 0 else c) if h not in ID_COLS else c for i, (h, c) in enumerate(zip(header, row))]
    files["some_na.raw.csv"] = _csv([header, units, mixed])
    weird = list(row)
    for i, h in enumerate(header):
        if h not in ID_COLS:
            weird[i] = ["inf", "-inf", "nan", "-1", "1e308", "1.2.3", "", "0x10", "--", "12%"][i % 10]
    weird[header.index("ID")] = "abc"
    weird[header.index("Grid Size")] = "(x, y, z)"
    weird[header.index("Block Size")] = ""
    files["weird_numbers.raw.csv"] = _csv([header, units, weird])

    files["unknown_chip.raw.csv"] = _csv([header, units, _with(header, row, CC="99.9")])
    files["non_utf8.raw.csv"] = (
        _csv([header, units, _with(header, row, Kernel_Name="kern\udcff")])
        .encode("utf-8", errors="surrogateescape")
        .replace(b"kern\xff", b"kern\xff\xfe caf\xe9 \x80")
    )
    files["nul_bytes.raw.csv"] = _csv(
        [header, units, _with(header, row, Kernel_Name="ker\x00nel", Process_Name="p\x00")]
    )
    long_name = "void k<" + "A" * 9990 + ">()"
    files["long_name.raw.csv"] = _csv([header, units, _with(header, row, Kernel_Name=long_name)])
    files["long_name.source.csv"] = src_text.replace(src_rows[0][1], long_name, 1)
    dup = header + [header[len(ID_COLS)]]
    files["duplicate_columns.raw.csv"] = _csv([dup, units + [units[len(ID_COLS)]], row + ["n/a"]])
    two = _with(header, row, ID="1")
    files["ragged_second_kernel.raw.csv"] = _csv([header, units, row, two[:-5]])

    hostile_row = _with(header, row, Kernel_Name=HOSTILE, Process_Name=HOSTILE, CC='9.0"><b>')
    files["hostile.raw.csv"] = _csv([header, units, hostile_row])
    hsrc = [list(r) for r in src_rows]
    hsrc[0][1] = HOSTILE
    ai, si = hsrc[1].index("Address"), hsrc[1].index("Source")
    for n, r in enumerate(hsrc[2:]):
        if len(r) > si and n % 4 == 1:
            r[si] = f"      {HOSTILE} R{n}, [R2.64]"
    files["hostile.source.csv"] = _csv(hsrc)

    # Source-page problems (given with --source-csv to mini.raw.csv).
    nohdr = [list(r) for r in src_rows]
    nohdr[1] = ["Adress" if h == "Address" else h for h in nohdr[1]]
    files["source_no_address.source.csv"] = _csv(nohdr)
    garbage = [list(r) for r in src_rows]
    for n, r in enumerate(garbage[2:]):
        if n % 3 == 0:
            r[ai] = "not-hex"
        elif n % 3 == 1:
            r[:] = [c if j <= si else "n/a" for j, c in enumerate(r)]
        else:
            del r[si + 3 :]
    files["source_garbage.source.csv"] = _csv(garbage)
    files["source_empty_block.source.csv"] = _csv(src_rows[:2])
    infinite = [list(r) for r in src_rows]
    for n, r in enumerate(infinite[2:]):
        if n < 8:  # +inf and -inf in the same columns: their sums are NaN
            r[si + 1 :] = ["inf" if n % 2 else "-inf"] * (len(r) - si - 1)
    files["source_infinite.source.csv"] = _csv(infinite)

    for name, content in files.items():
        p = HERE / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    print(f"wrote {len(files)} files to {HERE}")


if __name__ == "__main__":
    main()
