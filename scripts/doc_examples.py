#!/usr/bin/env python3
"""The output examples of README.md and docs/*.md, made by running their commands: each is
what drgpu prints today, never typed by hand.

An example is a ```text block right after a marker comment naming the command (invisible on
the rendered page):

    <!-- example: drgpu analyze sample_reports/serial_norm/serial_norm_bad.ncu-rep --fold 0.05
         keep: 1-13 /Roofline/+1 /^│ 1 │/
         files: many_kernels.ncu-rep=benchmarks/data/many_kernels.ncu-rep.xz -->
    ```text
    $ drgpu analyze sample_reports/serial_norm/serial_norm_bad.ncu-rep --fold 0.05
    ...the output...
    ```

The marker's first line is the command, as the reader would type it (a ``drgpu`` command; no
shell). Optional lines, ``key: value``:

- ``keep:`` the output lines shown, in output order: ``N`` (line N, from 1), ``N-M``, ``N-``
  (to the end), ``/REGEX/`` (every line that matches) and ``/REGEX/+K`` (with the K lines
  after it); a run of lines left out is one ``...`` line. Without ``keep`` the whole output.
- ``files:`` ``NAME=PATH`` pairs: the command's NAME is the repository's PATH (an ``.xz`` is
  decompressed once into the cache folder).
- ``columns:`` the terminal width (default 100); ``exit:`` the exit code the command must
  end with (default 0).

Each command runs as ``python -m drgpu_py`` of this checkout, in a temporary folder holding the
repository's top-level entries and the ``files``, with ``COLUMNS`` set, ``NO_COLOR`` and no
terminal; trailing blanks are dropped. The sample reports are unpacked first
(sample_reports/unpack.py). tests/e2e/test_doc_commands.py checks the examples of shipped
samples; the one of the 1,000-launch benchmark report is checked here only.

Usage:
  python scripts/doc_examples.py --check [--only TEXT]   exit 1 and show each difference
  python scripts/doc_examples.py --write [--only TEXT]   rewrite the blocks in place
  python scripts/doc_examples.py --list                  the examples, with where they are
"""

from __future__ import annotations

import argparse
import difflib
import lzma
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEFAULT_COLUMNS = 100
ELLIPSIS = "..."
# The marker comment and the ```text block right after it (blank lines between them allowed).
_EXAMPLE = re.compile(r"^<!-- example: (?P<marker>.*?)-->\n(?:[ \t]*\n)*```text\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
_SELECTOR = re.compile(r"(?P<range>\d+(?:-\d*)?)|/(?P<regex>(?:[^/\\]|\\.)+)/(?:\+(?P<after>\d+))?")
# Where a decompressed `files:` input is kept between runs (keyed by name, size and mtime).
CACHE = Path(os.environ.get("DRGPU_DOC_EXAMPLES_CACHE") or Path(tempfile.gettempdir()) / "drgpu-doc-examples")


class ExampleError(Exception):
    """A marker that cannot be read, or a command that did not end as its marker says."""


@dataclass
class Example:
    doc: Path
    line: int  # of the marker, from 1
    command: str
    keep: str = ""
    files: dict[str, str] = field(default_factory=dict)
    columns: int = DEFAULT_COLUMNS
    exit: int = 0
    body: str = ""  # the block as the document has it
    span: tuple[int, int] = (0, 0)  # the body's character span in the document

    @property
    def where(self) -> str:
        name = self.doc.relative_to(ROOT) if self.doc.is_relative_to(ROOT) else self.doc
        return f"{name}:{self.line}"

    @property
    def shipped(self) -> bool:
        """Whether every input is a shipped file read as it is (no decompressed benchmark)."""
        return not self.files


def examples(docs: list[Path] | None = None) -> list[Example]:
    """Every example of the documents, in document order."""
    out = []
    for doc in docs or DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in _EXAMPLE.finditer(text):
            out.append(_parse(doc, text, m))
    return out


def _parse(doc: Path, text: str, m: re.Match) -> Example:
    lines = [ln.strip() for ln in m["marker"].strip().splitlines()]
    ex = Example(doc, text.count("\n", 0, m.start()) + 1, lines[0], body=m["body"], span=m.span("body"))
    for ln in lines[1:]:
        key, sep, value = ln.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            raise ExampleError(f"{ex.where}: marker line {ln!r} is not 'key: value'")
        if key == "keep":
            ex.keep = value
        elif key == "files":
            for pair in value.split():
                name, eq, path = pair.partition("=")
                if not eq:
                    raise ExampleError(f"{ex.where}: files entry {pair!r} is not NAME=PATH")
                ex.files[name] = path
        elif key == "columns":
            ex.columns = int(value)
        elif key == "exit":
            ex.exit = int(value)
        else:
            raise ExampleError(f"{ex.where}: unknown marker key {key!r}")
    if not ex.command.startswith("drgpu "):
        raise ExampleError(f"{ex.where}: an example runs a drgpu command, not {ex.command!r}")
    select(["x"], ex.keep)  # a malformed keep fails here, before any command runs
    return ex


def select(lines: list[str], keep: str) -> list[str]:
    """The lines ``keep`` names, each run of lines left out as one ``...`` line."""
    if not keep.strip():
        return list(lines)
    wanted: set[int] = set()
    pos = 0
    for m in _SELECTOR.finditer(keep):
        if keep[pos : m.start()].strip(" ,"):
            raise ExampleError(f"keep: cannot read {keep[pos : m.start()].strip()!r} in {keep!r}")
        pos = m.end()
        if m["range"]:
            first, _, last = m["range"].partition("-")
            stop = len(lines) if m["range"].endswith("-") else int(last or first)
            wanted.update(range(int(first) - 1, min(stop, len(lines))))
        else:
            pattern, after = re.compile(m["regex"].replace("\\/", "/")), int(m["after"] or 0)
            for i, line in enumerate(lines):
                if pattern.search(line):
                    wanted.update(range(i, min(i + after + 1, len(lines))))
    if keep[pos:].strip(" ,"):
        raise ExampleError(f"keep: cannot read {keep[pos:].strip()!r} in {keep!r}")
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in wanted:
            out.append(line)
        elif i - 1 in wanted or i == 0:  # the first line of a run left out
            out.append(ELLIPSIS)
    return out


def _input(path: str) -> Path:
    """A ``files:`` input: the repository's file, or its decompressed copy for an ``.xz``."""
    src = ROOT / path
    if not src.is_file():
        raise ExampleError(f"files: {path} is not in the repository")
    if src.suffix != ".xz":
        return src
    st = src.stat()
    out = CACHE / f"{st.st_size}-{st.st_mtime_ns}" / src.name.removesuffix(".xz")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        part = out.with_name(out.name + f".{os.getpid()}.part")
        with lzma.open(src) as fin, open(part, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        part.replace(out)
    return out


def unpack_samples() -> None:
    """The sample reports, unpacked beside their .xz (sample_reports/unpack.py; idempotent)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sample_unpack", ROOT / "sample_reports" / "unpack.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.unpack()


def run(ex: Example, python: str = sys.executable) -> str:
    """The block ``ex`` stands for: the prompt line, then the selected output."""
    argv = shlex.split(ex.command)
    with tempfile.TemporaryDirectory(prefix="drgpu-example-") as tmp:
        work = Path(tmp)
        for entry in ROOT.iterdir():
            if not entry.name.startswith("."):
                (work / entry.name).symlink_to(entry)
        for name, path in ex.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).symlink_to(_input(path))
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "COLUMNS": str(ex.columns),
            "NO_COLOR": "1",
            "TERM": "dumb",
        }
        env.pop("FORCE_COLOR", None)
        p = subprocess.run(
            [python, "-m", "drgpu_py", *argv[1:]],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
    if p.returncode != ex.exit:
        raise ExampleError(f"{ex.where}: {ex.command!r} exited {p.returncode}, not {ex.exit}:\n{p.stderr[-2000:]}")
    lines = [ln.rstrip() for ln in p.stdout.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join([f"$ {ex.command}", *select(lines, ex.keep)]) + "\n"


def differences(ex: Example, made: str) -> str:
    """A unified diff of the document's block against the one made ('' when they agree)."""
    return "".join(
        difflib.unified_diff(
            ex.body.splitlines(keepends=True), made.splitlines(keepends=True), f"{ex.where} (document)", "(output)"
        )
    )


def write(made: dict[Path, list[tuple[Example, str]]]) -> list[Path]:
    """Each document with its blocks replaced by the ones made; the documents changed."""
    changed = []
    for doc, pairs in made.items():
        text = doc.read_text(encoding="utf-8")
        for ex, block in sorted(pairs, key=lambda p: -p[0].span[0]):  # from the end: spans stay valid
            text = text[: ex.span[0]] + block + text[ex.span[1] :]
        if text != doc.read_text(encoding="utf-8"):
            doc.write_text(text, encoding="utf-8")
            changed.append(doc)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare; exit 1 on a difference")
    mode.add_argument("--write", action="store_true", help="rewrite the blocks")
    mode.add_argument("--list", action="store_true", help="list the examples")
    ap.add_argument("--only", default="", help="only the examples whose command contains this text")
    args = ap.parse_args(argv)
    try:
        chosen = [ex for ex in examples() if args.only in ex.command]
    except ExampleError as e:
        print(f"doc_examples: {e}", file=sys.stderr)
        return 2
    if args.list:
        for ex in chosen:
            print(f"{ex.where}: {ex.command}")
        return 0
    unpack_samples()
    made: dict[Path, list[tuple[Example, str]]] = {}
    failed = 0
    for ex in chosen:
        start = time.perf_counter()
        try:
            block = run(ex)
        except ExampleError as e:
            print(f"doc_examples: {e}", file=sys.stderr)
            failed += 1
            continue
        seconds = time.perf_counter() - start
        diff = differences(ex, block)
        print(f"{ex.where}: {'differs' if diff else 'same'} ({seconds:.1f} s) {ex.command}")
        if args.check and diff:
            print(diff)
            failed += 1
        made.setdefault(ex.doc, []).append((ex, block))
    if args.write:
        for doc in write(made):
            print(f"rewrote {doc.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
