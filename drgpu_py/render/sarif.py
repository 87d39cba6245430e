"""SARIF 2.1.0 renderer: every finding of every kernel as a result for code-scanning tools
(``-f sarif`` or ``-o findings.sarif``). Contract: one run whose tool is drgpu; one rule per
finding id (``ruleId`` = the finding's catalogue id, e.g. ``global-uncoalesced``); one result
per finding and kernel, located on the source lines the finding names (file and line), or on
the kernel alone (a logical location) when the report has no line for it. Severity maps to
the SARIF level: high -> error, medium -> warning, low -> note."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from ..version import __version__
from . import register

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"high": "error", "medium": "warning", "low": "note"}


def _uri(path: str) -> dict:
    """An artifactLocation: an absolute path as a file URI, a relative one as it is."""
    if PureWindowsPath(path).drive:
        return {"uri": PureWindowsPath(path).as_uri()}
    p = PurePosixPath(path)
    return {"uri": p.as_uri()} if p.is_absolute() else {"uri": str(p)}


def _locations(f, kernel_name: str) -> list[dict]:
    out = []
    for loc in f.locations:
        if not loc.get("file") or not loc.get("line"):
            continue
        out.append(
            {
                "physicalLocation": {
                    "artifactLocation": _uri(str(loc["file"])),
                    "region": {"startLine": int(loc["line"])},
                },
                "logicalLocations": [{"name": kernel_name, "kind": "function"}],
            }
        )
    return out or [{"logicalLocations": [{"name": kernel_name, "kind": "function"}]}]


def sarif_document(analysis) -> dict:
    rules: dict[str, dict] = {}
    results = []
    for ka in analysis.kernels:
        name = ka.kernel.name
        for f in ka.findings:
            rules.setdefault(
                f.id,
                {"id": f.id, "name": f.id, "shortDescription": {"text": f.title}, "properties": {"group": f.group}},
            )
            results.append(
                {
                    "ruleId": f.id,
                    "ruleIndex": list(rules).index(f.id),
                    "level": LEVEL.get(f.severity, "note"),
                    "message": {"text": f"{f.title} in {name} (est. {f.estimated_speedup:.2f}x speedup): {f.advice}"},
                    "locations": _locations(f, name),
                    "properties": {
                        "severity": f.severity,
                        "estimated_speedup": round(f.estimated_speedup, 3),
                        "stall_share": round(f.stall_share, 4),
                        "kernel": name,
                        "kernel_id": ka.kernel.id,
                    },
                }
            )
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "drgpu", "version": __version__, "rules": list(rules.values())}},
                "results": results,
            }
        ],
    }


@register("sarif", (".sarif",))
def render_sarif(analysis, options) -> str:
    from .json_ import dumps

    return dumps(sarif_document(analysis))
