"""SASS listings from cubins in the form the ``.ncu-rep`` reader takes from ncu_report, so that
a report can be read without starting ncu_report's disassembler (why: docs/performance.md).

Contract:
- ``cubins_in_report(path)`` / ``cubins_in_binary(path, limit)``: the cubins a report or an
  executable holds, as bytes, each once (none when the binary holds more than ``limit``).
- ``SassSource.start(cubins)`` starts ``nvdisasm -c`` on each (up to ``max_cubins()``);
  ``result()`` returns the listings, or None when nvdisasm is missing or fails (the caller
  then uses ncu_report); ``function()`` is ``Listings.function`` of the result, waiting for
  it on first use. Nothing is cached on disk; temporary cubin files are removed (those written
  into a caller's ``folder`` are the caller's to remove).
- ``Listings.function(mangled, sm)``: one function's listing, or None when absent or ambiguous.
- ``FunctionSass.walk(base, end)`` returns what the reader's ``sass_by_pc`` walk returns, in
  ncu_report's text form (tests/samples/test_perf_equivalence.py compares the two).
"""

from __future__ import annotations

import glob
import importlib.util
import mmap
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .isa import clean_sass

EM_CUDA = 190
TOOL_TIMEOUT_S = 120
#: nvdisasm's arguments before the cubin: the listing with control codes (``-c``) and without
#: its dataflow pass (``-ndf``: branch-stack targets of pre-Volta code, which ncu does not
#: profile, and spill annotations, which ``FunctionSass._text`` drops), a quarter of its CPU
#: time. The listings of all 322 distinct cubins of the sample reports are the same text
#: with and without it after that normalisation.
NVDISASM_ARGS = ("-c", "-ndf")

TEXT_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
TARGET_SM = re.compile(r"^\s*\.target\s+sm_(\d+)")
_LABEL_DEF = re.compile(r"^(\S+):\s*$")
_INST = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;?\s*$")
_LABEL_REF = re.compile(r"`\(([^)\s]+)\)")
_COMMENT = re.compile(r"\s*\(\*.*?\*\)")
_LABEL_SPLIT = re.compile(r"\s*`\(([^)\s]+)\)")


@dataclass
class FunctionSass:
    """One function's instructions by offset from its entry, labels by offset."""

    name: str
    sm: int | None
    insts: dict[int, str] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)
    _resolved: bool | None = field(default=None, repr=False, compare=False)

    def resolved(self) -> bool:
        """Whether every label an instruction names is a place in this function (else its
        text could not be made to match ncu_report's, and the function is not used)."""
        if self._resolved is None:
            self._resolved = all(m.group(1) in self.labels for t in self.insts.values() for m in _LABEL_REF.finditer(t))
        return self._resolved

    def _text(self, text: str, base: int) -> str:

        def target(m: re.Match[str]) -> str:
            name = m.group(1)
            addr = f"{base + self.labels[name]:#x}"
            head = text[: m.start()].rstrip()
            # ncu separates the target from a preceding operand by a comma (RET.REL.NODEC
            # R14, 0x...), where nvdisasm writes a space; after the opcode alone, nothing.
            words = head.split()
            if words and words[0].startswith("@"):
                words = words[1:]
            sep = ", " if len(words) > 1 and not head.endswith(",") else " "
            # ncu keeps local labels (``(.L_x_3) 0x...``; clean_sass drops them), and
            # prints only the address for a function's name.
            return f"{sep}`({name}) {addr}" if name.startswith(".L_x_") else f"{sep}{addr}"

        if "`(" in text:
            text = _LABEL_SPLIT.sub(target, text)
        # nvdisasm marks operand reuse (``R2.reuse``) and annotates spills (``(*"SpillRefill"*)``);
        # ncu_report's text has neither.
        return clean_sass(_COMMENT.sub("", text.replace(".reuse", "")))

    def walk(self, base: int, end: int, max_bytes: int) -> tuple[list[tuple[int, str | None]], bool]:
        walk: list[tuple[int, str | None]] = []
        off = 0
        while off < max_bytes:
            text = self.insts.get(off)
            pc = base + off
            if text is None:
                walk.append((pc, None))
                if pc > end:
                    return walk, False
            else:
                walk.append((pc, self._text(text, base)))
            off += 16
        return walk, True


def parse_listing(text: str) -> dict[str, FunctionSass]:
    """Functions of one ``nvdisasm -c`` listing, by mangled name."""
    funcs: dict[str, FunctionSass] = {}
    sm = None
    cur: FunctionSass | None = None
    pending: list[str] = []
    for raw in text.splitlines():
        m = TEXT_SECTION.match(raw)
        if m:
            cur = funcs.setdefault(m.group(1), FunctionSass(name=m.group(1), sm=sm))
            pending = []
            continue
        m = TARGET_SM.match(raw)
        if m:
            sm = int(m.group(1))
            continue
        if cur is None:
            continue
        m = _INST.match(raw)
        if m:
            off = int(m.group(1), 16)
            cur.insts[off] = m.group(2)
            for name in pending:
                cur.labels[name] = off
            pending = []
            continue
        m = _LABEL_DEF.match(raw)
        if m:
            pending.append(m.group(1))
    return funcs


class Listings:
    """Functions of several cubins; a name held with two different listings is ambiguous."""

    def __init__(self, funcs: list[FunctionSass]) -> None:
        self._by: dict[tuple[str, int | None], FunctionSass | None] = {}
        for fn in funcs:
            key = (fn.name, fn.sm)
            if key in self._by:
                old = self._by[key]
                if old is None or old.insts != fn.insts or old.labels != fn.labels:
                    self._by[key] = None
            else:
                self._by[key] = fn

    def function(self, mangled: str, sm: int | None) -> FunctionSass | None:
        if not mangled:
            return None
        fn = self._by.get((mangled, sm))
        return fn if fn is not None and fn.resolved() else None

    def __len__(self) -> int:
        return sum(fn is not None for fn in self._by.values())


def _elf_end(buf: bytes | memoryview | mmap.mmap, at: int) -> int | None:
    """Size of the 64-bit little-endian CUDA ELF image starting at ``at``, or None."""
    if len(buf) - at < 64 or buf[at + 4] != 2 or buf[at + 5] != 1:
        return None
    (machine,) = struct.unpack_from("<H", buf, at + 18)
    if machine != EM_CUDA:
        return None
    phoff, shoff = struct.unpack_from("<QQ", buf, at + 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", buf, at + 0x36)
    if shentsize != 64 or (phnum and phentsize != 56):
        return None
    end: int = shoff + shentsize * shnum  # struct's values are Any to mypy
    if at + end > len(buf):
        return None
    for i in range(shnum):
        (typ,) = struct.unpack_from("<I", buf, at + shoff + i * 64 + 4)
        off, size = struct.unpack_from("<QQ", buf, at + shoff + i * 64 + 0x18)
        if typ != 8:  # SHT_NOBITS occupies no bytes
            end = max(end, off + size)
    for i in range(phnum):
        (off,) = struct.unpack_from("<Q", buf, at + phoff + i * 56 + 8)
        (size,) = struct.unpack_from("<Q", buf, at + phoff + i * 56 + 0x20)
        end = max(end, off + size)
    return end if at + end <= len(buf) else None


def cubins_in_report(path: str | Path, limit: int | None = None) -> list[bytes]:
    """Every distinct cubin stored whole in the report file (see the module docstring); with
    ``limit``, the scan stops at ``limit + 1`` of them (enough to know there are too many)."""
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _scan(buf, limit)
    except (OSError, ValueError):  # no such file, or an empty one (mmap refuses it)
        return []


def _scan(buf: mmap.mmap, limit: int | None) -> list[bytes]:
    out: list[bytes] = []
    seen: set[bytes] = set()
    at = buf.find(b"\x7fELF")
    while at >= 0 and (limit is None or len(out) <= limit):
        end = _elf_end(buf, at)
        if end:
            img = buf[at : at + end]
            if img not in seen:
                seen.add(img)
                out.append(img)
            at = buf.find(b"\x7fELF", at + end)
        else:
            at = buf.find(b"\x7fELF", at + 4)
    return out


class SassSource:
    """nvdisasm runs on cubins, started now, collected with ``result()``."""

    def __init__(self, procs: list[subprocess.Popen[bytes]], tmpdir: tempfile.TemporaryDirectory[str] | None) -> None:
        self._procs = procs
        self._tmp = tmpdir
        self._result: Listings | None = None
        self._done = False

    @classmethod
    def start(cls, cubins: Sequence[bytes | str | Path], folder: str | Path | None = None) -> "SassSource":
        """nvdisasm started on each cubin (bytes are written to files first: into ``folder``
        when given, else into a temporary folder removed by ``result``)."""
        if not cubins:
            return cls([], None)
        tool = find_tool("nvdisasm")
        if tool is None or len(cubins) > max_cubins():  # the reader asks ncu_report
            return cls([], None)
        tmp = tempfile.TemporaryDirectory(prefix="drgpu-sass-") if folder is None else None
        where = Path(tmp.name if tmp is not None else str(folder))
        procs = []
        try:
            for n, c in enumerate(cubins):
                if isinstance(c, (bytes, bytearray)):
                    p = where / f"{n}.cubin"
                    p.write_bytes(c)
                else:
                    p = Path(c)
                procs.append(
                    subprocess.Popen(
                        [tool, *NVDISASM_ARGS, str(p)],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        stdin=subprocess.DEVNULL,
                    )
                )
        except OSError:
            for proc in procs:
                proc.kill()
                proc.wait()
            if tmp is not None:
                tmp.cleanup()
            return cls([], None)
        return cls(procs, tmp)

    def function(self, mangled: str, sm: int | None) -> FunctionSass | None:
        """``Listings.function`` of ``result()`` (None without listings): a reader may take
        this source in place of its listings before nvdisasm has finished."""
        listings = self.result()
        return listings.function(mangled, sm) if listings is not None else None

    def close(self) -> None:
        """Stop what ``result()`` has not collected, and remove the temporary files."""
        if not self._done:
            self._done = True
            for proc in self._procs:
                proc.kill()
                proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
            if self._tmp is not None:
                self._tmp.cleanup()

    def result(self) -> Listings | None:
        if self._done:
            return self._result
        self._done = True
        funcs: list[FunctionSass] = []
        ok = bool(self._procs)
        for proc in self._procs:
            try:
                out, _ = proc.communicate(timeout=TOOL_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                ok = False
                continue
            if proc.returncode != 0:
                ok = False
                continue
            funcs.extend(parse_listing(out.decode("utf-8", errors="replace")).values())
        if self._tmp is not None:
            self._tmp.cleanup()
        self._result = Listings(funcs) if ok and funcs else None
        return self._result


def max_cubins() -> int:
    """How many cubins are worth an nvdisasm each: every nvdisasm start costs about what
    ncu_report's disassembler costs once (0.6 s of CPU), so more cubins than half the cores
    would take longer than ncu_report, which starts once and then lists every function fast."""
    return max(1, (os.cpu_count() or 1) // 2)


def find_tool(name: str) -> str | None:
    """``nvdisasm``/``cuobjdump`` where ``sass.binary.find_tool`` looks (NVIDIA's wheels, PATH,
    $CUDA_HOME), without importing that module's dependencies; None when there is none."""
    exe = name + (".exe" if os.name == "nt" else "")
    spec = importlib.util.find_spec("nvidia")
    for root in list(spec.submodule_search_locations or []) if spec else []:
        for cand in sorted(glob.glob(os.path.join(root, "*", "bin", exe)), reverse=True):
            if os.access(cand, os.X_OK):
                return cand
    found = shutil.which(name)
    if found:
        return found
    for env in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(env)
        if home and os.access(os.path.join(home, "bin", exe), os.X_OK):
            return os.path.join(home, "bin", exe)
    return None


def cubins_in_binary(binary: str | Path, limit: int | None = None) -> list[bytes]:
    """The cubins ``cuobjdump -xelf all`` extracts from an executable or library; none when
    it holds none (or, with ``limit``, more than ``limit``: they are listed first, not
    extracted), is no such file, or cuobjdump is missing."""
    tool = find_tool("cuobjdump")
    if tool is None or not Path(binary).is_file():
        return []
    if limit is not None:
        try:
            listed = subprocess.run(
                [tool, "-lelf", str(Path(binary).resolve())],
                capture_output=True,
                text=True,
                errors="replace",
                stdin=subprocess.DEVNULL,
                timeout=TOOL_TIMEOUT_S,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        # cuobjdump -lelf prints "ELF file    N: NAME.sm_XY.cubin" per cubin.
        if sum(line.startswith("ELF file") for line in listed.splitlines()) > limit:
            return []
    with tempfile.TemporaryDirectory(prefix="drgpu-cubins-") as tmp:
        try:
            subprocess.run(
                [tool, "-xelf", "all", str(Path(binary).resolve())],
                cwd=tmp,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                timeout=TOOL_TIMEOUT_S,
            )
        except (OSError, subprocess.SubprocessError):
            return []
        out = []
        for p in sorted(Path(tmp).iterdir()):
            img = p.read_bytes()
            if _elf_end(img, 0) and img not in out:
                out.append(img)
        return out


def sm_of(compute_capability: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", compute_capability or "")
    return int(m.group(1)) * 10 + int(m.group(2)) if m else None
