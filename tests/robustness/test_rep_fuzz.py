"""Damaged ``.ncu-rep`` sweep: a real two-launch report truncated at and around every block
boundary, with seeded random byte flips and seeded block overwrites, trailing garbage and a
second report appended. Every damaged file must end in one of the documented outcomes:

* a clean error: one of drgpu's typed errors (exit 3, 4 or 5), its message naming the file;
* an analysis (exit 0) of launches that each kept a name and metrics; when the file's block
  framing is damaged the profile carries a note saying so (a partial analysis);
* a native crash of NVIDIA's ``ncu_report``, which drgpu's child-process reader turns into
  exit 4 (tests/robustness/test_bad_inputs.py checks that path through the CLI).

Never a traceback, a hang or an analysis without a note of a file whose framing is broken.
The format has no checksums: a flipped byte inside a metric's value changes that value and
nothing can tell; that is why a framing-intact outcome without a note is accepted.

How: one worker process (this file run as a script) loads ``ncu_report`` once and reads the
mutations in turn, in-process (the reader's fork per read would cost two seconds of
``ncu_report`` start-up each); it prints one JSON line per mutation. A worker that dies of a
signal is recorded as a crash for the mutation it was reading and a new worker goes on from
the next one; a mutation that takes over ``PER_CASE_S`` fails the test as a hang.

CI runs the bounded sweep (every truncation and the named cases, plus the first
``BOUNDED_RANDOM`` flips and overwrites); ``DRGPU_SWEEP=full`` runs all of them
(docs/errors.md records the counts of both).
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import rep_blocks

# Slow, left out of the fast tier (pytest -m "not slow"): the damaged-report sweep.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "sample_reports" / "launch" / "serial_steps_floor.ncu-rep"  # 179 KB, 2 launches, 12 blocks
OTHER = ROOT / "sample_reports" / "aos_gather" / "aos_gather_bad.ncu-rep"
FLIPS, OVERWRITES = 200, 120  # the full sweep's random mutations
BOUNDED_RANDOM = 30  # of each kind, in the bounded sweep
PER_CASE_S = 60.0  # a read of this 179 KB report takes 0.1 s once ncu_report is loaded


def mutations(full: bool) -> list[tuple[str, bytes]]:
    """(name, content) of every mutation, deterministic (seeded)."""
    src = SOURCE.read_bytes()
    out: list[tuple[str, bytes]] = []
    cuts = {1, 3, 4, 7, 8, len(src) - 1, len(src) - 100}
    for s, e in rep_blocks(src):
        cuts.update(
            (s, s + 1, s + 3, s + 4, s + 5, (s + e) // 2, e - 1)
        )  # before, in the size, in the header, mid, last byte
    for k in sorted(c for c in cuts if 0 < c < len(src)):
        out.append((f"truncate-{k}", src[:k]))
    rnd = random.Random(19)
    out += [
        ("trailing-1-zero", src + b"\0"),
        ("trailing-100-random", src + rnd.randbytes(100)),
        ("trailing-text", src + b"some text appended\n" * 500),
        ("trailing-magic", src + src[:8]),
        ("two-reports-same", src + src),
        ("two-reports-other", src + OTHER.read_bytes()),
        ("zero-filled", b"\0" * len(src)),
        ("magic-then-zeros", src[:4] + b"\0" * (len(src) - 4)),
    ]
    flips = []
    for i in range(FLIPS):
        b = bytearray(src)
        for _ in range(rnd.choice((1, 4, 32))):
            j = rnd.randrange(8, len(b))
            b[j] ^= rnd.randrange(1, 256)
        flips.append((f"flip-{i}", bytes(b)))
    overwrites = []
    for i in range(OVERWRITES):
        b = bytearray(src)
        n = rnd.choice((16, 256, 4096))
        j = rnd.randrange(8, len(b) - n)
        b[j : j + n] = (b"\0" * n, b"\xff" * n, rnd.randbytes(n))[i % 3]
        overwrites.append((f"overwrite-{i}", bytes(b)))
    if not full:
        flips, overwrites = flips[:BOUNDED_RANDOM], overwrites[:BOUNDED_RANDOM]
    return out + flips + overwrites


# ---- the worker ---------------------------------------------------------------------------------


def _outcome(path: Path) -> dict:
    from drgpu_py.specs import output_schema as schema
    from drgpu_py.analysis import analyze
    from drgpu_py.errors import DrgpuError
    from drgpu_py.readers import open_report
    from drgpu_py.sass.container import rep_framing_problem
    from drgpu_py.render import RenderOptions, render

    try:
        profile = open_report(path)
        analysis = analyze(profile)
        schema.validate(json.loads(render(analysis, "json", RenderOptions())), "analysis")
        render(analysis, "text", RenderOptions())
    except DrgpuError as e:
        return {"outcome": "error", "code": e.exit_code, "message": str(e)}
    except Exception as e:  # noqa: BLE001 - what the test must catch
        import traceback

        return {"outcome": "bug", "message": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-3000:]}
    bad = [k.id for k in profile.kernels if not k.name or not k.metrics]
    return {
        "outcome": "partial" if profile.notes else "ok",
        "kernels": len(profile.kernels),
        "empty": bad,
        "framing": rep_framing_problem(path),
        "notes": profile.notes,
    }


def _worker(folder: str, start: int, full: bool) -> None:
    import ncu_report  # noqa: F401 - loaded once: reads then run in this process

    muts = mutations(full)
    for i in range(start, len(muts)):
        name, content = muts[i]
        path = Path(folder) / "damaged.ncu-rep"
        path.write_bytes(content)
        print(json.dumps({"i": i, "name": name, **_outcome(path)}), flush=True)


def sweep(folder: Path, full: bool) -> list[dict]:
    """Run the workers; one result per mutation."""
    n, results = len(mutations(full)), []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "DRGPU_READ_IN_PROCESS": "1"}
    while len(results) < n:
        start = len(results)
        p = subprocess.Popen(
            [sys.executable, __file__, str(folder), str(start), "full" if full else "bounded"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        buf = b""
        deadline = time.monotonic() + PER_CASE_S * 3  # the first read also loads ncu_report
        while True:
            ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                p.kill()
                p.wait()
                name = mutations(full)[len(results)][0]
                pytest.fail(f"reading mutation {name} took over {PER_CASE_S} s (a hang)")
            chunk = os.read(p.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for ln in lines:
                results.append(json.loads(ln))
                deadline = time.monotonic() + PER_CASE_S
        rc = p.wait()
        err = p.stderr.read().decode(errors="replace")
        if len(results) < n:
            assert rc < 0, f"worker exited {rc} without a result for mutation {len(results)}: {err[-2000:]}"
            results.append(
                {"i": len(results), "name": mutations(full)[len(results)][0], "outcome": "crash", "signal": -rc}
            )
    return results


def tally(results: list[dict]) -> dict[str, int]:
    t = {"cases": len(results), "error": 0, "partial": 0, "ok": 0, "crash": 0}
    for r in results:
        t[r["outcome"]] = t.get(r["outcome"], 0) + 1
    return t


def _check(results: list[dict]) -> None:
    problems = []
    for r in results:
        what = f"{r['name']}: {r['outcome']}"
        if r["outcome"] == "bug":
            problems.append(f"{what} {r['message']}\n{r['trace']}")
        elif r["outcome"] == "error":
            if r["code"] not in (3, 4, 5) or "damaged.ncu-rep" not in r["message"]:
                problems.append(f"{what} exit {r['code']}: {r['message']}")
        elif r["outcome"] in ("ok", "partial"):
            if r["empty"]:
                problems.append(f"{what} launches {r['empty']} without a name or metrics")
            if r["framing"] and not r["notes"]:
                problems.append(f"{what} framing damaged ({r['framing']}) but no note")
    assert not problems, "\n".join(problems[:20])


def _doc_row(label: str) -> dict[str, int]:
    from test_hostile_corpus import doc_counts

    return doc_counts()[label]


@pytest.mark.parametrize(
    "full",
    [
        pytest.param(False, id="bounded"),
        pytest.param(
            True,
            id="full",
            marks=pytest.mark.skipif(
                os.environ.get("DRGPU_SWEEP") != "full", reason="the full sweep runs with DRGPU_SWEEP=full"
            ),
        ),
    ],
)
def test_damaged_reports_end_cleanly(tmp_path, full):
    t0 = time.monotonic()
    results = sweep(tmp_path, full)
    _check(results)
    t = tally(results)
    # Named cases with one documented outcome each (docs/errors.md, "Damaged and odd inputs").
    by_name = {r["name"]: r for r in results}
    for name in ("trailing-1-zero", "trailing-text", "two-reports-same", "two-reports-other", "magic-then-zeros"):
        assert by_name[name]["outcome"] == "error" and "is truncated or corrupt" in by_name[name]["message"], by_name[
            name
        ]
    for name in ("two-reports-same", "two-reports-other"):
        assert "a second report starts at byte 179259" in by_name[name]["message"], by_name[name]
    assert (
        by_name["zero-filled"]["outcome"] == "error"
        and "neither an Nsight Compute report" in by_name["zero-filled"]["message"]
    )
    # A native crash in the worker is what drgpu's child-process reader turns into exit 4.
    muts = dict(mutations(full))
    for r in [r for r in results if r["outcome"] == "crash"][:3]:
        path = tmp_path / f"{r['name']}.ncu-rep"
        path.write_bytes(muts[r["name"]])
        # A child process: whether a mutation crashes ncu_report depends on the reading process's memory.
        p = subprocess.run(
            [sys.executable, "-m", "drgpu_py", "analyze", str(path), "-q"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert p.returncode == 4 and "ncu_report crashed reading it" in p.stderr, (r, p.returncode, p.stderr[-2000:])
        assert "Traceback" not in p.stderr
    row = _doc_row("`.ncu-rep` sweep, " + ("full" if full else "bounded (CI)"))
    assert row["cases"] == t["cases"], (row, t)
    assert row["clean errors"] == t["error"] + t["crash"], (row, t)
    assert row["partial analyses"] == t["partial"], (row, t)
    assert row["full analyses"] == t["ok"], (row, t)
    print(f"sweep {'full' if full else 'bounded'}: {t} in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    _worker(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "full")
