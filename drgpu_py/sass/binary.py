"""SASS from the binary: extract cubins (``cuobjdump -xelf all``), disassemble them
(``nvdisasm -c -hex -g -gi``), and give the analysis what the report lacks.

Contract: ``control_from_binary(profile, cubin=, binary=)`` returns ``(control, note)``:
``control`` maps each matched kernel's mangled and demangled name to ``{function offset ->
control dict}`` (:mod:`drgpu_py.sass.control`), ``note`` is one line saying what was used.
As a side effect it rewrites the matched kernels' per-instruction tables from the cubin's
line table (missing lines filled, inlined code moved to its call site with ``inlined_from``)
and reads the source files it names, only below ``source_roots`` and only regular source
files (``SOURCE_SUFFIXES``) outside hidden folders (``readable_source``).
A kernel whose SASS differs from the report's keeps the report's, with a note. A missing
tool raises :class:`ToolNotFoundError`.

Matching and inlining: docs/slicing.md.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Iterable
from typing import TypedDict

import pandas as pd

from .cubin import EM_CUDA, TEXT_SECTION, TARGET_SM, sm_of
from .cubin import find_tool as locate_tool
from ..errors import DrgpuError, InputError, ReportFormatError, ToolNotFoundError
from ..profile import ControlCode, KernelProfile, Profile, signature
from .control import control_table, supports_control
from .isa import SASS_LABEL

_TOOL_TIMEOUT_S = 600
_MATCH_MIN = 0.95  # share of offsets whose SASS must agree for a cubin function to be used

_INST = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;?\s*/\*\s*(0x[0-9a-fA-F]+)\s*\*/\s*$")
_HIGH = re.compile(r"^\s*/\*\s*(0x[0-9a-fA-F]+)\s*\*/\s*$")
_LINE = re.compile(r'^\s*//##\s*File\s+"([^"]*)",\s*line\s+(\d+)(.*)$')
_INLINED = re.compile(r'inlined at\s+"([^"]*)",\s*line\s+(\d+)')

#: A source location ``(file, line)``: an ``inlined at`` call site.
CallSite = tuple[str, int]
#: One instruction's location: file, line and the ``inlined at`` chain (innermost first).
_Location = tuple[str | None, int | None, list[CallSite]]


class InlinedFrom(TypedDict):
    """An ``inlined_from`` cell of the per-instruction table: the inlined code's own line."""

    file: str
    line: int | None


@dataclass
class SassInstruction:
    offset: int
    text: str
    low: int
    high: int
    file: str | None = None
    line: int | None = None
    #: the ``inlined at`` chain, innermost call site first; empty when not inlined
    inlined_at: list[CallSite] = field(default_factory=list)


@dataclass
class SassFunction:
    name: str  # mangled name (the ELF symbol)
    sm: int | None
    cubin: str
    insts: list[SassInstruction] = field(default_factory=list)

    def by_offset(self) -> dict[int, SassInstruction]:
        return {i.offset: i for i in self.insts}

    def control(self) -> dict[int, ControlCode]:
        return control_table((i.offset, i.low, i.high) for i in self.insts) if supports_control(self.sm) else {}


# ---- tools ---------------------------------------------------------------------------------


def find_tool(name: str) -> str:
    """Path of ``nvdisasm``/``cuobjdump`` (``sass.cubin.find_tool``: NVIDIA's installed PyPI
    wheels, else PATH, else ``$CUDA_HOME/bin``); ToolNotFoundError when there is none."""
    found = locate_tool(name)
    if found:
        return found
    wheel = {"nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump"}.get(name, name)
    raise ToolNotFoundError(
        f"{name} not found",
        hint=f"pip install {wheel} (NVIDIA's wheels are for Linux and Windows), or put the CUDA toolkit's bin on PATH",
    )


def _run(argv: list[str], cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=_TOOL_TIMEOUT_S)
    except FileNotFoundError as e:
        raise ToolNotFoundError(f"{argv[0]} cannot be run: {e.strerror}") from e
    except subprocess.TimeoutExpired as e:
        raise ReportFormatError(f"{Path(argv[0]).name} took longer than {_TOOL_TIMEOUT_S} s on {argv[-1]}") from e


def is_cubin(path: Path) -> bool:
    """An ELF file for the CUDA machine (EM_CUDA); executables and fatbins are not."""
    from ..io import require_input_file

    require_input_file(path, "a cubin or executable")
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    return len(head) == 20 and head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == EM_CUDA


def extract_cubins(binary: Path, workdir: Path) -> list[Path]:
    """Cubins embedded in an executable, library or fatbin, written under ``workdir``."""
    r = _run([find_tool("cuobjdump"), "-xelf", "all", str(Path(binary).resolve())], cwd=str(workdir))
    cubins = sorted(p for p in Path(workdir).iterdir() if p.is_file() and is_cubin(p))
    if not cubins:
        msg = (r.stderr or r.stdout).strip().splitlines()
        raise InputError(
            f"{binary}: no cubin found" + (f" ({msg[-1]})" if msg else ""),
            hint="give the executable or library that holds the profiled kernels, or the cubin with --cubin",
        )
    return cubins


def disassemble(cubin: Path) -> str:
    """nvdisasm text: code only, 128-bit encodings, line and inline info."""
    r = _run([find_tool("nvdisasm"), "-c", "-hex", "-g", "-gi", str(cubin)])
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip().splitlines()
        raise ReportFormatError(
            f"nvdisasm could not disassemble {cubin}" + (f": {msg[-1]}" if msg else ""),
            hint="give a cubin for a Turing (sm_75) or later GPU",
        )
    return r.stdout


# ---- parsing -----------------------------------------------------------------------------


def parse_disassembly(text: str, cubin: str = "") -> dict[str, SassFunction]:
    """Functions of one nvdisasm listing (``-c -hex`` with optional ``-g``/``-gi``) by
    mangled name. Line annotations hold until the next one within a function."""
    funcs: dict[str, SassFunction] = {}
    sm = None
    cur: SassFunction | None = None
    loc: _Location = (None, None, [])
    pending: tuple[SassFunction, int, str, int] | None = None  # an instruction's first line, in its function
    group: list[tuple[str, int, list[CallSite]]] = []  # consecutive //## lines: innermost first
    in_group = False
    for raw in text.splitlines():
        if in_group and not _LINE.match(raw):
            in_group = False
            loc = _location(group)
        if pending is not None:
            m = _HIGH.match(raw)
            if m:
                fn, off, txt, low = pending
                fn.insts.append(
                    SassInstruction(
                        offset=off,
                        text=txt,
                        low=low,
                        high=int(m.group(1), 16),
                        file=loc[0],
                        line=loc[1],
                        inlined_at=list(loc[2]),
                    )
                )
                pending = None
                continue
            pending = None
        m = TARGET_SM.match(raw)
        if m:
            sm = int(m.group(1))
            continue
        m = TEXT_SECTION.match(raw)
        if m:
            cur = funcs.setdefault(m.group(1), SassFunction(name=m.group(1), sm=sm, cubin=cubin))
            loc = (None, None, [])
            continue
        if cur is None:
            continue
        m = _LINE.match(raw)
        if m:
            if not in_group:
                group, in_group = [], True
            group.append((m.group(1), int(m.group(2)), [(f, int(n)) for f, n in _INLINED.findall(m.group(3))]))
            continue
        m = _INST.match(raw)
        if m:
            pending = (cur, int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16))
    return funcs


def _location(group: list[tuple[str, int, list[CallSite]]]) -> _Location:
    """One instruction's location from a run of ``//##`` lines. With ``-gi`` nvdisasm prints
    the innermost location first (``File "h.hpp", line 112 inlined at "k.cu", line 15``),
    then each enclosing one, the function's own line last."""
    if not group:
        return (None, None, [])
    file, line, chain = group[0]
    calls = list(chain)
    for f, n, more in group[1:]:
        if (f, n) not in calls:
            calls.append((f, n))
        calls.extend(c for c in more if c not in calls)
    return (file, line, calls)


_BRANCHY = {"BRA", "BRX", "JMP", "JMX", "CALL", "BSSY", "BREAK", "SSY", "PBK", "PCNT", "CAL", "WARPSYNC", "BPT", "RET"}


def normalize_sass(text: str) -> str:
    """Comparable form of one instruction as ncu or nvdisasm prints it: no reuse flags,
    labels, branch targets (absolute in ncu, labels in nvdisasm) or spacing."""
    s = SASS_LABEL.sub("", text or "").replace(".reuse", "").strip().rstrip(";").strip()
    g = re.match(r"^(@!?U?P[T\d]\s+)?(\S+)(.*)$", s)
    if not g:
        return re.sub(r"\s+", "", s)
    guard, op, rest = g.group(1) or "", g.group(2), g.group(3)
    if op.split(".")[0] in _BRANCHY:
        rest = re.sub(r"0x[0-9a-fA-F]+", "", rest)
    return re.sub(r"\s+", "", guard + op + rest)


def mangled_base(name: str) -> str:
    """Unqualified function name from an Itanium mangled name (``_Z6hornerILi1EEvPKfPf`` ->
    ``horner``, ``_ZN2ns1kEv`` -> ``k``); non-mangled names come back unchanged."""
    if not name.startswith("_Z"):
        return demangled_base(name)
    s, i = name[2:], 0
    if s.startswith("N"):
        i = 1
        while i < len(s) and s[i] in "rVKL":
            i += 1
    last = ""
    while i < len(s) and s[i].isdigit():
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        n = int(s[i:j])
        last, i = s[j : j + n], j + n
    return last or name


def demangled_base(name: str) -> str:
    """Unqualified function name from a demangled signature
    (``void bin_count<(bool)0>(const unsigned *, unsigned *)`` -> ``bin_count``)."""
    depth, out = 0, []
    for ch in name or "":
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    head = "".join(out).strip().split()
    return head[-1].split("::")[-1] if head else ""


def _agreement(k: KernelProfile, fn: SassFunction) -> tuple[int, int]:
    """(offsets whose SASS agrees, offsets compared) between the report and a function."""
    df = k.instructions
    if df.empty or "sass" not in df:
        return 0, 0
    by = fn.by_offset()
    same = total = 0
    for off, txt in zip(df["offset"], df["sass"]):
        ins = by.get(int(off))
        total += 1
        if ins is not None and normalize_sass(ins.text) == normalize_sass(str(txt)):
            same += 1
    return same, total


def match_function(k: KernelProfile, funcs: list[SassFunction]) -> tuple[SassFunction | None, str, tuple[int, int]]:
    """Best cubin function for a kernel: ``(function or None, how, (same, compared))``.
    ``how`` is 'mangled name' or 'demangled name'; the SASS comparison decides among
    candidates of the same name (bad/fixed template instantiations, several cubins)."""
    sm = sm_of(k.compute_capability)
    same_arch = [f for f in funcs if sm is None or f.sm is None or f.sm == sm] or funcs
    if k.mangled:
        cands, how = [f for f in same_arch if f.name == k.mangled], "mangled name"
    else:
        cands, how = [], ""
    if not cands:
        base = demangled_base(k.name) if k.name else mangled_base(k.mangled)
        cands, how = [f for f in same_arch if mangled_base(f.name) == base], "demangled name"
    if not cands:
        return None, "", (0, 0)
    scored = [(f, _agreement(k, f)) for f in cands]
    best, agree = max(scored, key=lambda t: (t[1][0] / t[1][1] if t[1][1] else 0.0, t[1][0]))
    return best, how, agree


# ---- line table ------------------------------------------------------------------------------


#: Extensions (compared without case) of the files a line table may show from disk: CUDA,
#: C and C++ sources and headers (with the template and inline-code conventions), HIP,
#: OpenCL, PTX, Python (Triton, Numba, CuPy kernels) and Fortran (CUDA Fortran). A report
#: or cubin is untrusted: its line table could name a key, a token or a shell history under
#: the working folder. docs/slicing.md lists the same.
SOURCE_SUFFIXES = frozenset(
    {
        *(".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++"),
        *(".inl", ".inc", ".ipp", ".tpp", ".tcc", ".hip", ".cl", ".ptx", ".py"),
        *(".f", ".for", ".f90", ".f95", ".f03", ".f08", ".cuf"),
    }
)
#: Why a file that exists outside every root was not read (the kernel note's words).
_OUTSIDE = "it is outside the report's folder and the working folder; give --source-root DIR to show its lines"


def _hidden(parts: Iterable[str]) -> bool:
    """Whether a path component is hidden (a dotfile or dot-folder: ``.git``, ``.ssh``,
    ``.env``); ``.`` and ``..`` only move."""
    return any(part.startswith(".") and part not in (".", "..") for part in parts)


def _below(path: Path, roots: list[Path]) -> tuple[str, ...]:
    """The components of ``path`` below the deepest of ``roots`` that holds it; all of them
    when none does (a root's own name is the user's choice, not the line table's)."""
    holding = [r for r in roots if path.is_relative_to(r)]
    return path.relative_to(max(holding, key=lambda r: len(r.parts))).parts if holding else path.parts


def _source_suffix(path: Path) -> bool:
    return path.suffix.lower() in SOURCE_SUFFIXES


def source_verdict(name: str, roots: Iterable[str | Path]) -> Path | str | None:
    """The file a line table names when it may be read, else why not, else None (no such
    file here: nothing to say). It may be read when it is a regular file (after resolving
    links and ``..``) below one of ``roots``, no component of its path below that root is
    hidden (as named, or as its links resolve), and it has a source file's extension
    (``SOURCE_SUFFIXES``) as named and as resolved."""
    try:
        given = Path(os.path.abspath(name))  # ``..`` folded, links kept: the name as written
        p = given.resolve()
        resolved_roots = [Path(r).resolve() for r in roots]
        if not any(p.is_relative_to(r) for r in resolved_roots):
            return _OUTSIDE if p.is_file() else None
        mode = p.stat().st_mode
    except (OSError, ValueError, RuntimeError):
        return None
    if not stat.S_ISREG(mode):
        return "it is not a regular file"
    named_roots = [Path(os.path.abspath(r)) for r in roots]
    if _hidden(_below(p, resolved_roots)) or _hidden(_below(given, named_roots + resolved_roots)):
        return "it is a hidden file or inside a hidden folder (drgpu reads neither)"
    if not (_source_suffix(given) and _source_suffix(p)):
        suffix = given.suffix if not _source_suffix(given) else p.suffix
        return f"it has no source file's extension ({suffix or 'none'}; docs/slicing.md lists those drgpu reads)"
    return p


def readable_source(name: str, roots: Iterable[str | Path]) -> Path | None:
    """The file a line table names, when it may be read (``source_verdict``); None otherwise.
    A report or cubin is untrusted: the files it names are read only from folders the user
    allowed, and only source files there."""
    verdict = source_verdict(name, roots)
    return verdict if isinstance(verdict, Path) else None


def _read_source(p: Path) -> list[str] | None:
    """The lines of a source file of under 8 MiB, opened without blocking and checked on the
    descriptor (a file swapped for a FIFO after ``source_verdict`` looked is not waited on);
    None when it cannot be read or is larger."""
    from ..io import open_input

    try:
        with open_input(p, "a source file") as fh:
            if os.fstat(fh.fileno()).st_size >= 8 << 20:
                return None
            data: bytes = fh.read()
    except (DrgpuError, OSError):
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def apply_line_table(
    k: KernelProfile, fn: SassFunction, source_roots: Iterable[str | Path] | None = None
) -> dict[str, int]:
    """Rewrite ``k.instructions`` file/line from the cubin (see the module docstring).
    Returns counts: ``filled`` (lines the report lacked) and ``inlined`` (moved to call sites).
    The text of a named source file the report does not embed is read from disk only below
    ``source_roots`` (the report's folder, the working folder, ``--source-root``); a file
    that exists elsewhere is not read, and a kernel note says so."""
    df = k.instructions
    if df.empty:
        return {"filled": 0, "inlined": 0}
    by = fn.by_offset()
    files = list(df["file"]) if "file" in df else [None] * len(df)
    lines = list(df["line"]) if "line" in df else [None] * len(df)
    inlined_from: list[InlinedFrom | None] = list(df["inlined_from"]) if "inlined_from" in df else [None] * len(df)
    filled = moved = 0
    for n, off in enumerate(df["offset"]):
        ins = by.get(int(off))
        if ins is None or ins.file is None:
            continue
        missing = files[n] is None or (isinstance(files[n], float) and pd.isna(files[n])) or pd.isna(lines[n])
        if ins.inlined_at:
            call_file, call_line = ins.inlined_at[-1]
            files[n], lines[n] = call_file, call_line
            inlined_from[n] = {"file": ins.file, "line": ins.line}
            moved += 1
        elif missing:
            files[n], lines[n] = ins.file, ins.line
            filled += 1
    # object dtype keeps None as None (pandas 3 would otherwise turn it into NaN).
    df["file"] = pd.Series([f if isinstance(f, str) else None for f in files], index=df.index, dtype=object)
    df["line"] = pd.array([None if ln is None or pd.isna(ln) else int(ln) for ln in lines], dtype="Int64")
    df["inlined_from"] = pd.Series(inlined_from, index=df.index, dtype=object)
    if filled:  # the reader's complaint about missing lines no longer holds
        k.notes[:] = [n for n in k.notes if "no file/line information" not in n]
    roots = [Path.cwd()] if source_roots is None else list(source_roots)
    for f in sorted({f for f in files if isinstance(f, str)} - set(k.source_text)):
        verdict = source_verdict(f, roots)
        if isinstance(verdict, str):
            k.notes.append(f"source file {f} (named by the line table) was not read: {verdict}")
        elif verdict is not None:
            text = _read_source(verdict)
            if text is not None:
                k.source_text[f] = text
    return {"filled": filled, "inlined": moved}


# ---- entry point -----------------------------------------------------------------------------


def load_functions(
    cubin: str | Path | None = None, binary: str | Path | None = None, sms: set[int] | None = None
) -> tuple[list[SassFunction], list[str]]:
    """Disassemble the given cubin (or the cubins in ``binary``: those for the ``sms``
    architectures when it has any, else all); returns the functions and the cubins read."""
    from ..io import require_input_file

    given = cubin or binary
    if not given:
        raise InputError("no cubin or binary given")
    src = require_input_file(given, "a cubin or executable")
    funcs: list[SassFunction] = []
    names: list[str] = []
    if is_cubin(src):
        funcs.extend(parse_disassembly(disassemble(src), src.name).values())
        names.append(src.name)
    else:
        with tempfile.TemporaryDirectory(prefix="drgpu-cubins-") as tmp:
            cubins = extract_cubins(src, Path(tmp))
            # cuobjdump names them APP.N.sm_XY.cubin: skip other architectures' copies.
            wanted = [c for c in cubins if sms and any(f".sm_{sm}" in c.name for sm in sms)] or cubins
            with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
                texts = list(pool.map(disassemble, wanted))
            for c, text in zip(wanted, texts):
                funcs.extend(parse_disassembly(text, f"{src.name}:{c.name}").values())
                names.append(c.name)
    return funcs, names


def with_control(profile: Profile, control: dict[str, dict[int, ControlCode]]) -> Profile:
    """A copy of ``profile`` whose kernels carry their control codes by PC
    (``KernelProfile.control``): ``control`` is control_from_binary's, by mangled or demangled
    name and keyed by function offset. ``profile`` and its kernels are not changed."""
    kernels = []
    for k in profile.kernels:
        cw = control.get(k.mangled) or control.get(k.name)
        if cw and k.function_base is not None:
            cw = {k.function_base + off: v for off, v in cw.items()}
        kernels.append(replace(k, control=cw) if cw else k)
    return replace(profile, kernels=kernels, notes=list(profile.notes))


def control_from_binary(  # noqa: PLR0912 - one branch per input form (cubin, binary) and match outcome
    profile: Profile,
    cubin: str | Path | None = None,
    binary: str | Path | None = None,
    source_roots: Iterable[str | Path] | None = None,
) -> tuple[dict[str, dict[int, ControlCode]], str]:
    """Control codes per matched kernel (by mangled and demangled name, keyed by function
    offset) and one note; rewrites matched kernels' file/line (module docstring).
    ``source_roots``: the folders whose source files the line table may show (default: the
    working folder; ``apply_line_table``)."""
    given = cubin or binary
    if not given:
        raise InputError("no cubin or binary given")
    sms = {sm for sm in (sm_of(k.compute_capability) for k in profile.kernels) if sm is not None}
    funcs, names = load_functions(cubin, binary, sms=sms)
    src = Path(given).name
    control: dict[str, dict[int, ControlCode]] = {}
    used, problems = [], []
    filled = inlined = 0
    for k in profile.kernels:
        label = signature(k.name) or k.mangled
        fn, how, (same, total) = match_function(k, funcs)
        if fn is None:
            k.notes.append(f"{src}: no function named like this kernel; slicing used the report's SASS")
            problems.append(f"{label}: not found")
            continue
        if k.instructions.empty or not total:
            k.notes.append(f"{src}: the report has no SASS for this kernel to check the cubin against; cubin not used")
            problems.append(f"{label}: no SASS in the report")
            continue
        if same / total < _MATCH_MIN:
            k.notes.append(
                f"{src}: SASS of {fn.name} differs from the report's at {total - same} of {total} offsets "
                f"(another build?); cubin not used, slicing used the report's SASS"
            )
            problems.append(f"{label}: SASS differs at {total - same}/{total} offsets")
            continue
        counts = apply_line_table(k, fn, source_roots)
        filled += counts["filled"]
        inlined += counts["inlined"]
        cw = fn.control()
        if not cw:
            k.notes.append(f"{src}: sm_{fn.sm} has no per-instruction control codes; line table used only")
        else:
            for key in (k.mangled, k.name):
                if key:
                    control[key] = cw
        if same < total:
            k.notes.append(f"{src}: SASS of {fn.name} differs from the report's at {total - same} of {total} offsets")
        used.append(f"{label} (by {how})")
    arch = sorted({f"sm_{f.sm}" for f in funcs if f.sm})
    note = (
        f"SASS from {src} ({', '.join(arch) or 'unknown arch'}, {len(names)} cubin{'s' if len(names) != 1 else ''}): "
    )
    note += f"{len(used)} of {len(profile.kernels)} kernels matched and checked against the report's SASS"
    if used:
        note += "; control codes and line table used"
        extra = [
            f"{filled} lines filled in" if filled else "",
            f"{inlined} inlined instructions moved to their call sites" if inlined else "",
        ]
        extra = [e for e in extra if e]
        if extra:
            note += " (" + ", ".join(extra) + ")"
    if problems:
        note += "; not used for " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else "")
    return control, note
