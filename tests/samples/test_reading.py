"""Reading drgpu's output, on real reports (the 1,000-launch benchmark report and the PyTorch
model step): every note on a finding or a kernel is in the terminal text, next to what it
qualifies."""

from __future__ import annotations

import re

import pytest

from conftest import api_analysis, library_report, many_kernels_report
from drgpu_py.render import RenderOptions, render

# The 1,000-launch report: an in-process read would keep 1.4 GB (conftest.IN_PROCESS_KINDS).
pytestmark = pytest.mark.child_reader

WIDE = RenderOptions(width=10_000)  # no wrapping: a note is whole on one line


@pytest.fixture(scope="module")
def many():
    return api_analysis(many_kernels_report())


@pytest.fixture(scope="module")
def step():
    return api_analysis(library_report("step"))


def _flat(text: str) -> str:
    """Text without table rules and with every run of spaces one space: a wrapped note reads
    whole again."""
    return " ".join(re.sub(r"[│┃║|]", " ", text).split())


def _note_lines(text: str) -> list[str]:
    return [re.sub(r"^[\s│┃]*", "", line).rstrip(" │┃") for line in text.splitlines()]


def test_finding_notes_are_printed_with_their_finding(many):
    text = render(many, "text", WIDE)
    lines = _note_lines(text)
    # The README's first fix points into a header: the note that says why is under it.
    first = next(i for i, line in enumerate(lines) if re.match(r"1\. atomic-contention in histogram", line))
    assert "device_atomic_functions.hpp:112" in lines[first]
    assert lines[first + 1].startswith("note: device_atomic_functions.hpp:112 is header code inlined into the kernel")
    assert "--cubin or --binary" in lines[first + 1]
    # Each note of every finding in a shown findings table is in its row: after the finding's
    # id, before the next finding's.
    shown = 0
    for section in text.split("\n╭")[1:]:
        ka = next(ka for ka in many.kernels if f"(id {ka.kernel.id})" in section.splitlines()[1])
        # The finding column of the table's lines.
        table = section[section.index("Findings (best first)") :].splitlines()
        rows = [line.split("│")[2].strip() for line in table if line.startswith("│ ")]
        listed = [f for f in ka.findings if f.time_share is None or f.time_share >= 0.005][:5]
        starts = [next(i for i, line in enumerate(rows) if line.startswith(f.id)) for f in listed]
        for f, at, end in zip(listed, starts, [*starts[1:], len(rows)]):
            for n in f.notes:
                assert f"note: {n}" in rows[at:end], (f.id, n)
                shown += 1
    assert shown >= 2, "findings with notes in the shown tables"


def test_finding_notes_wrap_in_narrow_blocks(many):
    text = render(many, "text", RenderOptions(width=70, top_kernels=0))
    assert max(map(len, text.splitlines())) <= 70
    flat = _flat(text)
    for ka in many.kernels:
        for f in [f for f in ka.findings if f.time_share is None or f.time_share >= 0.005][:5]:
            for n in f.notes:
                assert f"note: {' '.join(n.split())}" in flat, (f.id, n)


def test_every_kernel_note_is_in_the_text(step):
    """With the default --top 3 the other kernels' trees are not shown; their notes still are,
    each with the id of its kernel."""
    text = _flat(render(step, "text", RenderOptions(width=100)))
    for ka in step.kernels:
        for n in ka.notes:
            assert " ".join(n.split()) in text, (ka.kernel.id, n)
