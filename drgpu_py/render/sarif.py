"""SARIF 2.1.0 renderer: every finding of every kernel group as a result for code-scanning tools
and editors (``-f sarif`` or ``-o findings.sarif``).

Contract: one run whose tool is drgpu; one rule per finding id (``ruleId`` = the finding's
catalogue id, e.g. ``global-uncoalesced``) with its help (what the pattern is, how to fix it,
how its speedup is estimated, how its level is set) from specs/findings.yaml, written for every
instance (the catalogue's ``help``, ``caller_help``, ``help_title``: no placeholder left unfilled); one result per
finding and group (located.py): its level from severity and the share of the profiled GPU
time its fix would save, a ``partialFingerprints`` entry that stays the same while the rule,
kernel, file name and source line text do, and one location with a physical location. A
finding on source lines is located on its first line (the others are ``relatedLocations``);
one without a line (a library kernel, a launch setting) on the report file, with the kernel
as a logical location. Paths: source files as the report names them (absolute ``file://``
URIs), or under a ``--source-root``/``--path-map`` mapping relative with ``uriBaseId``
``SRCROOT`` (``SRCROOT2``... for further mappings) and the mapping's folder in
``originalUriBaseIds`` (not for a source root given relative: its absolute form is a path of
this machine). The report file is never named by an absolute path of the machine that runs
drgpu (``_Artifacts.report``): under a relative mapping as it names it, else relative to the
working folder (or as given, when given relative), else by its file name. The document
validates against the OASIS SARIF 2.1.0 schema (tests/data)."""

from __future__ import annotations

from ..io import clean_text

import hashlib
import os
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from ..profile import base_name, signature
from ..specs import loader as data
from ..version import __version__
from . import RenderOptions, register
from .located import PathMapping, Problem, map_path, problems, thresholds_of

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: partialFingerprints key: the name and version of drgpu's fingerprint (SARIF 3.27.17).
FINGERPRINT = "drgpuFinding/v1"


def _file_uri(path: str) -> str:
    if PureWindowsPath(path).drive:
        return PureWindowsPath(path).as_uri()
    return PurePosixPath(path).as_uri()


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or bool(PureWindowsPath(path).drive)


def _base_id(index: int) -> str:
    return "SRCROOT" if index == 0 else f"SRCROOT{index + 1}"


class _Artifacts:
    """Artifact locations of one document: paths mapped, and the base ids the relative ones used."""

    def __init__(self, mappings: tuple[PathMapping, ...]):
        self.mappings = mappings
        self.bases: dict[str, dict] = {}

    def location(self, path: str) -> dict:
        mapped, index = map_path(path, self.mappings)
        if index is None or not self.mappings[index].relative:
            # Not mapped, or mapped onto an absolute folder of this machine.
            return {"uri": _file_uri(mapped)} if _is_absolute(mapped) else {"uri": quote(mapped.replace("\\", "/"))}
        return self._relative(mapped, index)

    def _relative(self, mapped: str, index: int) -> dict:
        base = _base_id(index)
        m = self.mappings[index]
        if base not in self.bases:
            # The folder the relative URIs start from, where it is known and is no path of
            # this machine: the mapping's own folder for a source root given absolute; for
            # FROM=TO, FROM less a trailing TO.
            root = None if m.local else m.source if not m.target else _without_suffix(m.source, m.target)
            self.bases[base] = {"uri": _file_uri(root).rstrip("/") + "/"} if root else {}
        return {"uri": quote(mapped, safe="/"), "uriBaseId": base}

    def report(self, report: str) -> dict:
        """The report file's location, never an absolute path of this machine: under a relative
        mapping as it names it; else relative to the working folder (as given, when given
        relative); else its file name."""
        full = os.path.abspath(report)
        mapped, index = map_path(full, self.mappings)
        if index is not None and self.mappings[index].relative:
            return self._relative(mapped, index)
        return {"uri": quote(clean_text(_report_name(report, full)).replace("\\", "/"), safe="/")}


def _report_name(report: str, full: str) -> str:
    """``report`` as a path relative to the working folder, when it is in it or was given
    relative, else its file name."""
    try:
        inside = os.path.relpath(full)
    except ValueError:  # another drive (Windows): no relative path leads there
        inside = os.pardir
    if inside.split(os.sep, 1)[0] != os.pardir:
        return inside
    return os.path.normpath(report) if not _is_absolute(report) else os.path.basename(full)


def _without_suffix(folder: str, target: str) -> str | None:
    """``folder`` less ``target`` at its end (/opt/app/src less src: /opt/app), else None."""
    folder, target = folder.replace("\\", "/").rstrip("/"), target.replace("\\", "/").strip("/")
    if not folder.endswith("/" + target):
        return None
    return folder[: -len(target)].rstrip("/") or "/"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _rule(f, th) -> dict:
    """The rule of finding ``f``'s id, its help from the catalogue's texts for every instance
    (``help_title``, ``help``, ``caller_help``: a finding's own title and advice hold its
    numbers). A finding the catalogue does not hold, such as one of a saved analysis of another
    version, gets its own title."""
    fid = f.id
    spec = next((s for s in data.findings_catalogue()["findings"] if s["id"] == fid), None)
    if spec is None:
        return {"id": fid, "name": fid, "shortDescription": {"text": f.title}, "properties": {"group": f.group}}
    model = data.findings_catalogue()["speedup_models"].get(spec["speedup_model"], "")
    title, advice = _one_line(spec.get("help_title") or spec["title"]), _one_line(spec["help"])
    caller = _one_line(spec["caller_help"]) if spec.get("caller_help") else ""
    levels = (
        f"Level: error for a high finding whose fix would save at least {100 * th['error_saved_share']:g}% of the "
        f"profiled GPU time; warning for a high or medium one saving at least {100 * th['warning_saved_share']:g}%; "
        "note otherwise (thresholds error_saved_share, warning_saved_share)."
    )
    text = [title + ".", advice]
    markdown = [f"**{title}**", advice]
    if caller:
        text.append("In a library kernel (change the call): " + caller)
        markdown.append("*In a library kernel (change the call):* " + caller)
    text += [f"Estimate ({spec['speedup_model']}): {model}", levels]
    markdown += [f"*Estimate* ({spec['speedup_model']}): {model}", levels]
    return {
        "id": fid,
        "name": fid,
        "shortDescription": {"text": title},
        "fullDescription": {"text": advice},
        "help": {"text": "\n\n".join(text), "markdown": "\n\n".join(markdown)},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["performance", "gpu", spec["group"]], "group": spec["group"]},
    }


def _logical(kernel) -> dict:
    out = {"name": base_name(kernel.name or ""), "fullyQualifiedName": kernel.name or "", "kind": "function"}
    if kernel.mangled and kernel.mangled != kernel.name:
        out["decoratedName"] = kernel.mangled
    return out


def _locations(p: Problem, artifacts: _Artifacts) -> tuple[list[dict], list[dict]]:
    """(the result's location, its related locations)."""
    logical = [_logical(p.kernel)]
    if not p.lines:
        loc: dict = {"physicalLocation": {"artifactLocation": artifacts.report(p.report)}}
        loc["logicalLocations"] = logical
        sass = next((x for x in p.finding.locations if x.get("pc_offset") is not None), None)
        what = f"SASS +0x{int(sass['pc_offset']):x} {sass.get('sass') or ''}".strip() if sass else "the whole kernel"
        loc["message"] = {"text": f"no source line: {what} of {p.short_kernel}, in this report"}
        return [loc], []
    located = []
    for i, line in enumerate(p.lines):
        entry: dict = {
            "physicalLocation": {
                "artifactLocation": artifacts.location(str(line["file"])),
                "region": {"startLine": int(line["line"])},
            },
            "logicalLocations": logical,
        }
        if i:
            entry = {"id": i, **entry}
            entry["message"] = {
                "text": f"{100 * float(line.get('share', 0.0)):.0f}% of the finding's blamed stall samples"
            }
        located.append(entry)
    return located[:1], located[1:]


def _fingerprint(p: Problem) -> str:
    """Stable across runs and machines while the rule, the kernel (its name with template
    arguments), the file's name and the line's text (its number where the report lacks the
    text) stay the same; without a line, the launch shape tells groups of one kernel apart."""
    line = p.lines[0] if p.lines else {}
    where = str(line.get("file") or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = " ".join(str(line.get("code") or "").split()) or str(line.get("line") or "")
    if not p.lines:
        text = f"{tuple(p.kernel.grid)}x{tuple(p.kernel.block)}"
    key = "\0".join([p.finding.id, signature(p.kernel.name or ""), where, text])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def sarif_document(analysis, options: RenderOptions | None = None) -> dict:
    options = options or RenderOptions()
    th = thresholds_of(analysis)
    artifacts = _Artifacts(tuple(options.path_map))
    rules: dict[str, dict] = {}
    results = []
    for p in problems(analysis):
        f = p.finding
        if f.id not in rules:
            rules[f.id] = _rule(f, th)
        located, related = _locations(p, artifacts)
        result = {
            "ruleId": f.id,
            "ruleIndex": list(rules).index(f.id),
            "level": p.level,
            "message": {"text": p.message()},
            "locations": located,
            "partialFingerprints": {FINGERPRINT: _fingerprint(p)},
            "properties": {
                "severity": f.severity,
                "estimated_speedup": round(f.estimated_speedup, 3),
                "stall_share": round(f.stall_share, 4),
                "time_saved_ns": None if p.time_saved_ns is None else round(p.time_saved_ns, 1),
                "saved_share": None if p.saved_share is None else round(p.saved_share, 5),
                "kernel": p.kernel.name,
                "kernel_id": p.kernel.id,
            },
        }
        if related:
            result["relatedLocations"] = related
        results.append(result)
    run: dict = {
        "tool": {
            "driver": {
                "name": "drgpu",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": list(rules.values()),
            }
        },
    }
    bases = {k: v for k, v in sorted(artifacts.bases.items()) if v}
    if bases:
        run["originalUriBaseIds"] = bases
    run["results"] = results
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


@register("sarif", (".sarif",))
def render_sarif(analysis, options) -> str:
    from .json_ import dumps

    return dumps(sarif_document(analysis, options))
