"""Hostile inputs, third pass: each test builds its hostile input at test time.

Random bytes appended to an ``.ncu-rep`` that ncu_report passed over in silence, kernel
names of bytes that are not UTF-8 in every output format, SVG to standard output, the
dry run of ``drgpu profile`` printing the argv a real run passes, and source files named
by a report's line table that drgpu must not read.
"""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest

from conftest import run_cli

# Slow, left out of the fast tier (pytest -m "not slow"): the third pass of hostile inputs, each through every output format.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_reports"
R = SAMPLES / "aos_gather" / "aos_gather_bad.ncu-rep"
MINI = ROOT / "tests" / "data" / "bad" / "mini.raw.csv"


def _drgpu(*argv: str, timeout: float = 120, env: dict | None = None, cwd=None):
    return run_cli(*argv, timeout=timeout, env={**os.environ, "COLUMNS": "200", **(env or {})}, cwd=cwd)


# ---- 1. bytes appended to a report that hold no whole block ----------------------------------

# Random tails that ncu_report read past without a word (exit 0 with only a note): a first
# word that reads as a header size beyond the end of the file, and nothing or a few bytes after.
_SHORT_TAILS = {
    "4-random": random.Random(5).randbytes(4),
    "9-random": bytes.fromhex("9914fe062ca9e8b122"),
    "small-size-word": struct.pack("<I", 20),
    "3-bytes": b"\x01\x02\x03",
}


@pytest.mark.parametrize("tail", list(_SHORT_TAILS.values()), ids=list(_SHORT_TAILS))
@pytest.mark.parametrize("cmd", ["analyze", "list"])
def test_random_bytes_appended_to_a_report_are_refused(tmp_path, tail, cmd):
    good = R.read_bytes()
    p = tmp_path / "appended.ncu-rep"
    p.write_bytes(good + tail)
    r = _drgpu(cmd, str(p), *(["-q"] if cmd == "analyze" else []))
    assert r.returncode == 4, (r.returncode, r.stdout[-500:], r.stderr)
    assert "is truncated or corrupt" in r.stderr and "are no whole block" in r.stderr, r.stderr
    assert f"truncate -s {len(good)}" in r.stderr, r.stderr


def test_every_sample_report_ends_with_a_whole_block():
    """The rule refuses no report ncu wrote: each sample's framing ends at a block's end."""
    from drgpu_py.sass.container import rep_walk

    reports = sorted(SAMPLES.rglob("*.ncu-rep"))
    assert reports
    for p in reports:
        w = rep_walk(p)
        assert w.problem is None and w.refusable_at is None, (p, w)


def test_a_line_report_with_bytes_appended_gives_no_line_numbers(tmp_path):
    bad = tmp_path / "line.ncu-rep"
    bad.write_bytes(R.read_bytes() + _SHORT_TAILS["4-random"])
    out = tmp_path / "out.json"
    r = _drgpu("analyze", str(MINI), "--line-report", str(bad), "-f", "json", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "line table of line.ncu-rep unreadable (the file's last 4 bytes" in out.read_text()


# ---- 2. a kernel name of bytes that are not UTF-8, in every output format ---------------------


def _report_with_undecodable_name(dest: Path) -> Path:
    """The sample report with two bytes of its kernel's demangled and base names made
    ``\\xff\\xfe`` (same length: the framing is intact); ncu_report hands such bytes over as
    lone surrogates (surrogate escapes)."""
    b = bytearray(R.read_bytes())
    for marker, skip in ((b":,scale_keys_aos(const Record", 2), (b"2\x0escale_keys_aos:", 2)):
        i = b.index(marker) + skip
        assert b[i : i + 5] == b"scale"
        b[i + 3 : i + 5] = b"\xff\xfe"
    dest.write_bytes(bytes(b))
    return dest


def test_undecodable_kernel_name_is_read_as_text(tmp_path):
    from drgpu_py.readers import list_launches, open_report

    p = _report_with_undecodable_name(tmp_path / "named.ncu-rep")
    for profile in (open_report(p), list_launches(p)):
        (k,) = profile.kernels
        assert k.name.startswith("sca\ufffd\ufffd_keys_aos("), ascii(k.name)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in k.name + k.mangled), ascii(k.name)


@pytest.mark.parametrize("fmt", ["text", "json", "csv", "html", "sarif", "dot", "svg"])
def test_undecodable_kernel_name_renders_in_every_format(tmp_path, fmt):
    """A page of more than GRAPH_KERNELS_MAX kernel groups packs its bodies as UTF-8: a name
    holding surrogate escapes was an internal error (exit 70) there."""
    import dataclasses

    from drgpu_py.analysis import analyze
    from drgpu_py.readers import open_report
    from drgpu_py.render import RenderOptions, render
    from drgpu_py.render.dot import dot_available
    from drgpu_py.render.html.page import GRAPH_KERNELS_MAX

    if fmt == "svg" and not dot_available():
        pytest.skip("Graphviz dot is not installed")
    p = _report_with_undecodable_name(tmp_path / "named.ncu-rep")
    r = _drgpu("analyze", str(p), "-f", fmt, "-o", str(tmp_path / f"out.{fmt}"), "-q")
    assert r.returncode == 0, r.stderr
    assert "sca\ufffd\ufffd_keys" in (tmp_path / f"out.{fmt}").read_bytes().decode("utf-8")
    profile = open_report(p)
    k = profile.kernels[0]
    profile.kernels = [
        dataclasses.replace(k, id=i, name=f"{k.name}#{i}", mangled=f"{k.mangled}{i}")
        for i in range(GRAPH_KERNELS_MAX + 2)
    ]
    out = render(analyze(profile), fmt, RenderOptions())
    text = out.decode("utf-8") if isinstance(out, bytes) else out
    text.encode("utf-8")  # valid text: no lone surrogate


# ---- 3. SVG is text: it may go to standard output ---------------------------------------------


@pytest.mark.parametrize("argv", [["-f", "svg"], ["-f", "svg", "-o", "-"]], ids=["no-o", "o-dash"])
def test_svg_goes_to_standard_output(tmp_path, argv):
    from drgpu_py.render.dot import dot_available

    r = _drgpu("analyze", str(R), *argv, "-q", cwd=tmp_path)
    if not dot_available():  # the tool is missing (exit 7), not the format refused (exit 2)
        assert r.returncode == 7 and "Graphviz 'dot' is needed" in r.stderr, (r.returncode, r.stderr)
        return
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip().startswith("<?xml") and r.stdout.rstrip().endswith("</svg>"), r.stdout[:200]
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", str(R), "-f", "json"],
        ["merge", str(R), str(R)],
        ["list", str(R), "-f", "json"],
        ["diff", str(R), str(R), "-f", "json"],
    ],
    ids=["analyze", "merge", "list", "diff"],
)
def test_output_dash_is_standard_output(tmp_path, argv):
    import json

    r = _drgpu(*argv, "-o", "-", *(["-q"] if argv[0] in ("analyze", "merge") else []), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)
    assert not (tmp_path / "-").exists() and "wrote" not in r.stderr


def test_png_to_standard_output_is_still_refused(tmp_path):
    for argv in (["-f", "png"], ["-f", "png", "-o", "-"]):
        r = _drgpu("analyze", str(R), *argv, "-q", cwd=tmp_path)
        assert r.returncode == 2 and "format png is binary" in r.stderr, (argv, r.stderr)


# ---- 4. the dry run of drgpu profile prints the argv a run passes ---------------------------------


def test_profile_dry_run_prints_the_argv_a_run_passes(tmp_path, monkeypatch):
    """The dry run printed ncu's command without the ``--log-file`` that run_ncu added to it
    later; the list is now built once. Its private log folder is named at random per run, so
    the two runs here are given the same name to compare the lists whole."""
    import json
    import shlex

    from conftest import STANDIN, standin_profile
    from drgpu_py.ncu import session

    dry = _drgpu(*standin_profile(tmp_path / "out", "--dry-run", "--", "/bin/echo", "a b", "c;d"), cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    printed = shlex.split(dry.stdout.strip())
    assert printed[:2] == [str(STANDIN), "--log-file"], printed
    assert not Path(printed[2]).parent.exists()  # named, not made: a dry run makes nothing
    assert printed[-3:] == ["/bin/echo", "a b", "c;d"]

    fixed = tmp_path / "private" / "ncu.log"
    monkeypatch.setattr(session, "private_log", lambda: fixed)
    argv = standin_profile(tmp_path / "out", "--", "/bin/echo", "a b", "c;d")
    dry = _drgpu(*argv[:1], "--dry-run", *argv[1:], cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    received = tmp_path / "ncu_argv.json"
    run = _drgpu(*argv, env={"STANDIN_NCU_ARGV_OUT": str(received)}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    ran = [str(STANDIN), *json.loads(received.read_text())]
    assert shlex.split(dry.stdout.strip()) == ran
    record = json.loads((tmp_path / "out" / "echo.profile.json").read_text())
    assert record["ncu_argv"] == ran
    assert not fixed.parent.exists()  # made for the run, removed after


# ---- 5. a line table may show source files only, outside hidden folders ---------------------------

AOS = SAMPLES / "aos_gather"


def _named_source(tmp_path: Path, folder: str, name: str) -> tuple[Path, Path, Path]:
    """aos_gather's CSV export and a copy of its cubin whose line table names ``folder/name``
    (relative: below the working folder), each the length of what it replaces (``/opt/samples``,
    ``aos_gather.cu``). Returns (export, cubin, the working folder)."""
    import shutil

    assert len(folder) == len("/opt/samples") and len(name) == len("aos_gather.cu")
    data = (AOS / "aos_gather.sm_90.cubin").read_bytes()
    data = data.replace(b"/opt/samples\0", folder.encode() + b"\0").replace(b"aos_gather.cu\0", name.encode() + b"\0")
    reports = tmp_path / "reports"
    reports.mkdir()
    for page in ("raw", "source"):
        shutil.copy(AOS / f"aos_gather_bad.{page}.csv", reports / f"aos_gather_bad.{page}.csv")
    cubin = reports / "aos_gather.sm_90.cubin"
    cubin.write_bytes(data)
    work = tmp_path / "work"
    work.mkdir()
    return reports / "aos_gather_bad.raw.csv", cubin, work


def _secret(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"SECRET-LINE-{i}\n" for i in range(1, 200)))


def _analyze_notes(rep: Path, cubin: Path, work: Path) -> tuple[str, list[str]]:
    import json

    r = _drgpu("analyze", str(rep), "--cubin", str(cubin), "-f", "json", "-q", cwd=work, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    return r.stdout, [n for k in doc["kernels"] for n in k["notes"] if "named by the line table" in n]


@pytest.mark.parametrize(
    "folder, name, why",
    [
        ("./.secrets00", "aos_gather.cu", "hidden"),  # a dot-folder below the working folder
        ("./srcfolder0", ".aos_gather.c", "hidden"),  # a dotfile
        ("./srcfolder0", "aos_gather.md", "no source file's extension (.md"),
        ("./srcfolder0", "aos_gather_cu", "no source file's extension (none"),
    ],
    ids=["dot-folder", "dotfile", "markdown", "no-extension"],
)
def test_line_table_files_that_are_not_visible_sources_are_not_read(tmp_path, folder, name, why):
    rep, cubin, work = _named_source(tmp_path, folder, name)
    _secret(work / folder / name)
    out, notes = _analyze_notes(rep, cubin, work)
    assert "SECRET-LINE" not in out
    assert any(f"{folder}/{name}" in n and why in n for n in notes), notes


@pytest.mark.parametrize("target", ["../.git/aos_gather.cu", "notes.txt"], ids=["into-dot-folder", "to-non-source"])
def test_a_source_name_linked_to_a_file_drgpu_would_not_read_is_not_read(tmp_path, target):
    rep, cubin, work = _named_source(tmp_path, "./srcfolder0", "aos_gather.cu")
    link = work / "srcfolder0" / "aos_gather.cu"
    _secret(link.parent / target)
    link.symlink_to(target)
    out, notes = _analyze_notes(rep, cubin, work)
    assert "SECRET-LINE" not in out and notes, notes


def test_line_table_sources_that_are_links_out_or_fifos_are_not_read(tmp_path):
    rep, cubin, work = _named_source(tmp_path, "./srcfolder0", "aos_gather.cu")
    outside = tmp_path / "outside" / "aos_gather.cu"
    _secret(outside)
    (work / "srcfolder0").mkdir()
    (work / "srcfolder0" / "aos_gather.cu").symlink_to(outside)
    out, notes = _analyze_notes(rep, cubin, work)
    assert "SECRET-LINE" not in out and any("--source-root" in n for n in notes), notes
    (work / "srcfolder0" / "aos_gather.cu").unlink()
    os.mkfifo(work / "srcfolder0" / "aos_gather.cu")  # never opened: it would block
    out, notes = _analyze_notes(rep, cubin, work)
    assert any("not a regular file" in n for n in notes), notes


def test_a_visible_source_below_the_working_folder_is_still_read(tmp_path):
    rep, cubin, work = _named_source(tmp_path, "./srcfolder0", "aos_gather.cu")
    _secret(work / "srcfolder0" / "aos_gather.cu")
    out, notes = _analyze_notes(rep, cubin, work)
    assert "SECRET-LINE" in out and not notes, notes
