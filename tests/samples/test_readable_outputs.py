"""What the readable outputs (text, HTML, DOT) leave out or say once, on real reports
(drgpu_py/render/quiet.py): a performance-model what-if whose speedup rounds to 1.00x is not
shown (JSON keeps it); the model's predicted cycles come after the measured cycles, labelled
"model" and with their error; a note that several kernels of one report carry word for word is
printed once, in a report-level block (the 15-kernel PyTorch step of sample_reports/library),
while each kernel's JSON notes stay whole."""

from __future__ import annotations

import json
import re

import pytest

from conftest import analysis_of, api_analysis, library_report
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.dot import build_graph
from drgpu_py.render.html.page import unpack_page
from drgpu_py.render.quiet import merge_notes, split_notes
from test_render_html import parse

WIDE = RenderOptions(width=10_000, fold_share=0.0)  # no wrapping, no folding: every line whole


def _what_ifs(case: str, variant: str) -> list[dict]:
    return analysis_of(case, variant).kernels[0].model_summary()["what_if"]


def test_what_ifs_that_change_nothing_are_hidden_but_kept_in_json():
    # few_blocks' bad variant: one what-if gains 3.66x (more warps), one rounds to 1.00x.
    a = analysis_of("few_blocks", "bad")
    changes = _what_ifs("few_blocks", "bad")
    idle = [w for w in changes if f"{w['speedup']:.2f}" == "1.00"]
    useful = [w for w in changes if f"{w['speedup']:.2f}" != "1.00"]
    assert idle and useful, changes
    doc = json.loads(render(a, "json"))
    assert doc["kernels"][0]["model"]["what_if"] == changes, "JSON keeps every what-if"
    assert sum(n.name.startswith("What if:") for n in a.kernels[0].tree.walk()) == len(changes)
    text = render(a, "text", WIDE)
    dot = build_graph(a, WIDE).source
    html = parse(render(a, "html", WIDE)).plain
    for w in idle:
        assert w["description"] not in text and w["description"] not in html
    for w in useful:
        assert f"What if: {w['description']}: {w['speedup']:.2f}x" in text
        assert f"What if: {w['description']}: {w['speedup']:.2f}x" in html
    assert text.count("What if:") == len(useful) and dot.count("What if:") == len(useful)  # DOT clips labels


def test_model_prediction_follows_the_measurement_with_its_error():
    a = analysis_of("serial_norm", "bad")
    m = a.kernels[0].model_summary()
    predicted, measured = m["predicted_cycles"], m["measured_cycles"]
    err = 100 * (predicted - measured) / measured
    assert abs(err) > 50, "the sample whose model is far off (the README's example)"
    said = f"model {predicted:,.0f} cycles, {abs(err):.0f}% {'above' if err > 0 else 'below'} it"
    text = render(a, "text", WIDE)
    line = next(ln for ln in text.splitlines() if "Performance model" in ln)
    assert f"Performance model (static SASS): measured {measured:,.0f} cycles ({said})" in line
    page = render(a, "html", WIDE)
    assert "Predicted" not in page
    card = page[page.index('<section class="card model">') :]
    card = card[: card.index("</section>")]
    assert re.search(rf"Measured <strong>{measured:,.0f} cycles</strong> <span class=\"muted\">\({said}\)</span>", card)


@pytest.fixture(scope="module")
def step():
    """The real PyTorch model step (18 launches in 15 kernel groups), as drgpu_py.analyze
    makes it (shared with test_render_html and test_groups)."""
    return api_analysis(library_report("step"))


def test_notes_several_kernels_carry_are_printed_once(step):
    notes = [n for ka in step.kernels for n in ka.notes]
    carried = {n: sum(n in ka.notes for ka in step.kernels) for n in notes}
    assert len(step.kernels) == 15 and max(carried.values()) == 15, "a note every kernel carries"
    text = render(step, "text", RenderOptions(width=10_000, top_kernels=0))
    page = parse(unpack_page(render(step, "html", RenderOptions()))).plain
    # A note is said by itself, or by the one it is merged into (the same but for its opening
    # findings or a list's items: render/quiet.py, merge_notes).
    split = split_notes(step.kernels)
    said = [n for n, _ in split.shared] + [n for own in split.own for n in own]
    for n in carried:
        stand = next(s for s in said if merge_notes([s, n]) == [s])
        assert text.count(stand) == 1, (text.count(stand), stand)
        assert page.count(stand) == 1, (page.count(stand), stand)
    # Said once, in the report-level block, with the kernels it is about.
    block = text[text.index("Notes (each on several kernels):") :]
    for n, ids in split.shared:
        if len(ids) == 15:
            assert f"note (all 15 kernels): {n}" in block
        else:
            assert re.search(rf"note \(ids [\d, ]+\): {re.escape(n)}", block)
    # JSON keeps each kernel's notes whole.
    doc = json.loads(render(step, "json"))
    assert [k["notes"] for k in doc["kernels"]] == [list(ka.notes) for ka in step.kernels]
