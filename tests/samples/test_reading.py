"""Reading drgpu's output, on real reports (the 1,000-launch benchmark report and the PyTorch
model step): every note on a finding or a kernel is in the terminal text, next to what it
qualifies; the readable outputs speak of the time as a CUDA programmer does (no ledger words),
and the tree's root says what its percentages are of."""

from __future__ import annotations

import json
import re

import pytest

from conftest import api_analysis, library_report, many_kernels_report, report_path, run_cli
from drgpu_py.render import RenderOptions, render
from drgpu_py.render.html.page import unpack_page
from test_render_html import parse

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
    # Each note of every finding in a kernel's shown findings (a block of lines each, in a
    # report of several kernels) is in its block: after the finding's id, before the next
    # finding's.
    shown = 0
    for ka in many.kernels:
        section = _section(text, ka)
        if section is None:
            continue  # --top 3: its tree is not shown
        table = section[section.index("Findings (best first") :].splitlines()
        rows = [re.sub(r"^\d+\.\s+", "", line.strip()) for line in table[1:]]
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
    each with the id of its kernel (or said by the shared note it is merged into)."""
    from drgpu_py.render.quiet import merge_notes, split_notes

    text = _flat(render(step, "text", RenderOptions(width=100)))
    shared = [n for n, _ in split_notes(step.kernels).shared]
    for ka in step.kernels:
        for n in ka.notes:
            stand = next((s for s in shared if merge_notes([s, n]) == [s]), n)
            assert " ".join(stand.split()) in text, (ka.kernel.id, n)


LEDGER_WORDS = (
    "not claimed",
    "Also raised",
    "no time left",
    "claims time ahead",
    "claim time ahead",
    "estimate bounded",
)


@pytest.mark.xfail(
    strict=True,
    reason="the many-kernel benchmark's histogram no longer has a finding the ledger leaves under 1.02x: "
    "its partial report's absent metrics are read as not measured, so atomic-contention claims 1.70x, "
    "not 6.12x, and store-drain keeps its time; these checks need a kernel with such a finding",
)
def test_plain_words_in_text_and_html(many, step):
    for a in (many, step):
        text = render(a, "text", RenderOptions(width=120, top_kernels=0))
        page = parse(unpack_page(render(a, "html", RenderOptions()))).plain
        for word in LEDGER_WORDS:
            assert word not in text, word
            assert word not in page, word
    text = render(many, "text", WIDE)
    assert "other time: waiting for global loads" in text
    assert "store-drain (its time is counted under the findings above)" in text
    hist = next(ka for ka in many.kernels if ka.kernel.name.startswith("histogram"))
    lowered = next(f for f in hist.findings if f.id == "memory-latency")
    assert lowered.notes[0].startswith(
        "estimate lowered: the fix of atomic-contention above removes part of this time first; "
    ), lowered.notes
    assert "of the kernel's time is left for this change to save" in lowered.notes[0]
    # JSON: the same keys as before; only the words changed.
    doc = json.loads(render(many, "json"))
    k = next(k for k in doc["kernels"] if k["name"].startswith("histogram"))
    assert set(k["ledger"]) >= {"losses", "attributed", "unexplained_ns", "useful_ns"}
    assert {"finding", "ns", "share", "wanted_share", "alone_share"} == set(k["ledger"]["losses"][0])
    assert any(b["kind"] == "ledger" for f in k["findings"] for b in f["bounds"])


def test_the_tree_root_says_what_its_percentages_are_of(many):
    text = render(many, "text", WIDE)
    roots = [line for line in text.splitlines() if re.match(r"(★ )?Stall cycles: ", line)]
    assert roots and all(
        re.fullmatch(r"(★ )?Stall cycles: [\d.]+% of issue slots \(causes below: % of the stall cycles\)", r)
        for r in roots
    ), roots
    page = render(many, "html", RenderOptions())
    tree = page[page.index('class="tree" id="k0-tree"') :]
    root = tree[: tree.index("</summary>")]
    assert re.search(r'<span class="n-val">[\d.]+% of issue slots</span>', root), root
    assert "causes below: % of the stall cycles" in root
    assert "n-bar" not in root, "no bar at the root: its base is not its causes'"


def _kernel(a, name: str):
    return next(ka for ka in a.kernels if ka.kernel.name.startswith(name))


def _section(text: str, ka) -> str:
    """The text of one kernel: from its header panel to the next one."""
    return next(
        (s for s in text.split("\n╭")[1:] if re.search(rf"\(id {ka.kernel.id}\)( |$)", s[: s.index("╰")], re.M)), None
    )


@pytest.mark.xfail(
    strict=True,
    reason="the many-kernel benchmark's histogram no longer has a finding the ledger leaves under 1.02x: "
    "its partial report's absent metrics are read as not measured, so atomic-contention claims 1.70x, "
    "not 6.12x, and store-drain keeps its time; these checks need a kernel with such a finding",
)
def test_findings_under_the_worth_estimate_are_hidden_and_counted(many):
    hist, reduce = _kernel(many, "histogram"), _kernel(many, "block_reduce")
    drain = next(f for f in hist.findings if f.id == "store-drain")
    assert drain.estimated_speedup < 1.02 < drain.estimated_speedup_alone, "its time is the atomics' fix's"
    text = render(many, "text", RenderOptions(width=140, top_kernels=0))
    own = _section(text, hist)
    assert "store-drain" not in own.split("Findings (best first")[1].split("1 finding under")[0]
    assert "Stores drain at kernel exit" not in own, "nor its suggestion in the tree"
    assert "(1 finding under 1.02x hidden)" in own
    assert (
        "1 finding under 1.02x hidden: store-drain (its time is counted under the findings above); "
        "--show-all shows them" in own
    )
    # A source line that reads 0% (block_reduce's warp divergence: 0.04% of it) is left out,
    # in the tree and in the findings, and counted.
    div = next(f for f in reduce.findings if f.id == "warp-divergence")
    zero = [loc for loc in div.locations if f"{100 * loc['share']:.0f}" == "0"]
    assert zero, div.locations
    own = _section(text, reduce)
    assert "(1 source line at 0% hidden)" in own
    assert "1 source line at 0% hidden; --show-all shows them" in own
    assert not re.search(r"many_kernels\.cu:\d+ (0\.0%|\(0%\))", own)
    # "Fix first" and the summary name no hidden finding.
    assert not re.search(r"\d\. store-drain in histogram", text)
    # --show-all shows everything; a higher --hide-below hides more.
    every = render(many, "text", RenderOptions(width=140, top_kernels=0, show_all=True))
    assert "hidden" not in every and "Stores drain at kernel exit" in _section(every, hist)
    assert re.search(r"many_kernels\.cu:\d+ \(0%\)", _section(every, reduce))
    strict = render(many, "text", RenderOptions(width=140, top_kernels=0, hide_below=1.05))
    gather = _kernel(many, "strided_gather")
    under = sorted(f.id for f in gather.findings if f.estimated_speedup < 1.05)
    assert under, [(f.id, f.estimated_speedup) for f in gather.findings]
    assert f"{len(under)} finding{'s' if len(under) > 1 else ''} under 1.05x hidden" in _section(strict, gather)


@pytest.mark.xfail(
    strict=True,
    reason="the many-kernel benchmark's histogram no longer has a finding the ledger leaves under 1.02x: "
    "its partial report's absent metrics are read as not measured, so atomic-contention claims 1.70x, "
    "not 6.12x, and store-drain keeps its time; these checks need a kernel with such a finding",
)
def test_html_hides_what_is_not_worth_reading_and_json_keeps_it(many):
    page = unpack_page(render(many, "html", RenderOptions()))
    doc = parse(page)
    hist = _kernel(many, "histogram")
    i = many.kernels.index(hist)
    cards = re.findall(
        rf'<div class="finding [^"]*" id="k{i}-f\d+">.*?<span class="f-title">([^<]*)</span>', page, re.S
    )
    assert [f.title for f in hist.findings if f.estimated_speedup >= 1.02] == cards
    assert "Stores drain at kernel exit" not in cards
    assert (
        "1 finding under 1.02x hidden: store-drain (its time is counted under the findings above); --show-all shows them"
        in doc.plain
    )
    fix = page[page.index('<ol class="fix-first">') : page.index("</ol>", page.index('<ol class="fix-first">'))]
    assert f'store-drain</a> in <a href="#k{i}"' not in fix
    tree = page[page.index(f'id="k{i}-tree"') :]
    tree = tree[: min(j for j in (tree.find("</section>"), tree.find('<details class="graph">')) if j >= 0)]
    assert "Stores drain at kernel exit" not in tree and "1 finding under 1.02x hidden" in tree
    every = render(many, "html", RenderOptions(show_all=True))
    assert "Stores drain at kernel exit" in every and "under 1.02x hidden" not in every
    doc = json.loads(render(many, "json", RenderOptions()))
    k = next(k for k in doc["kernels"] if k["id"] == hist.kernel.id)
    assert [f["id"] for f in k["findings"]] == [f.id for f in hist.findings], "JSON keeps every finding"


def test_hide_below_and_show_all_on_the_command_line_and_in_the_config(tmp_path):
    report = report_path("aos_gather", "bad")  # global-uncoalesced at 4.41x, its only finding
    env = {"COLUMNS": "120", "PATH": "/usr/bin:/bin"}
    hidden = "1 finding under 5.00x hidden: global-uncoalesced; --show-all shows them"
    r = run_cli("analyze", report, "--hide-below", "5", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert hidden in r.stdout and "Findings (best first)" not in r.stdout
    assert "No findings above the thresholds" not in r.stdout
    r = run_cli("analyze", report, "--hide-below", "5", "--show-all", env=env, cwd=tmp_path)
    assert "hidden" not in r.stdout and "Findings (best first)" in r.stdout
    r = run_cli("analyze", report, env={**env, "DRGPU_ANALYZE_HIDE_BELOW": "5"}, cwd=tmp_path)
    assert hidden in r.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.drgpu.analyze]\nhide-below = 5\n")
    r = run_cli("analyze", report, env=env, cwd=tmp_path)
    assert hidden in r.stdout
    r = run_cli("analyze", report, "-f", "json", env=env, cwd=tmp_path)
    assert [f["id"] for f in json.loads(r.stdout)["kernels"][0]["findings"]] == ["global-uncoalesced"]
    r = run_cli("analyze", report, "--hide-below", "0.5", env=env, cwd=tmp_path)
    assert r.returncode == 2, "an estimate below 1x is no speedup"


def test_severity_in_the_whole_run_follows_the_time_saved(step):
    """The PyTorch step: serial-kernel is high in a kernel that holds 0.4% of the GPU time
    (its fix saves about a microsecond), grid-too-small medium in one where it saves 9 µs.
    Weighed by the whole run, neither outranks the other's time: the badges follow it."""
    from drgpu_py.analysis.findings import severity_rank

    rows = step.summary()
    total = sum(r["total_ns"] for r in rows)
    first = step.priorities()
    assert [p["time_saved_ns"] for p in first] == sorted((p["time_saved_ns"] for p in first), reverse=True)
    ranks = [severity_rank(p["application_severity"]) for p in first]
    assert ranks == sorted(ranks), "a milder severity never ranks above a worse one"
    for p in first:
        share = p["time_saved_ns"] / total
        assert p["saved_share"] == pytest.approx(share, abs=1e-5)
        speedup = 1 / (1 - share)
        assert p["application_severity"] == ("high" if speedup >= 1.25 else "medium" if speedup >= 1.07 else "low")
    serial = next(p for p in first if p["id"] == "serial-kernel")
    grid = next(p for p in first if p["id"] == "grid-too-small")
    assert serial["severity"] == "high" and grid["severity"] == "medium", "in their kernels"
    assert serial["time_saved_ns"] < 2e3 < 9e3 < grid["time_saved_ns"]
    assert severity_rank(serial["application_severity"]) >= severity_rank(grid["application_severity"])
    assert serial["application_severity"] == "low"
    # Text: "fix first" and the kernels' findings give the severity in the whole run.
    text = render(step, "text", RenderOptions(width=200, top_kernels=0))
    line = next(ln for ln in text.splitlines() if re.match(r"\s+\d\. serial-kernel in .* \(id 11\)", ln))
    assert re.search(r": 1\.2 µs \(0\.1%, low\), est\. 1\.57x$", line), line
    own = _section(text, next(ka for ka in step.kernels if ka.kernel.id == 11))
    assert "Findings (best first; severity in the whole run)" in own
    assert re.search(r"^1\. +serial-kernel +low +est\.", own, re.M), own
    # HTML: the summary's top finding, "fix first" and the finding's badge; its title keeps the kernel's.
    page = render(step, "html", RenderOptions())
    i = next(i for i, ka in enumerate(step.kernels) if ka.kernel.id == 11)
    fix = page[page.index('<ol class="fix-first">') :]
    fix = fix[: fix.index("</ol>")]
    assert re.search(
        rf'<span class="sev sev-low" title="[^"]*in its kernel: high">low</span> <a class="mono fix-id" href="#k{i}-f1">serial-kernel',
        fix,
    )
    card = page[page.index(f'id="k{i}-f1"') :]
    assert re.search(
        r'<span class="sev sev-low" title="in the whole run: low [^"]*in this kernel: high">low</span>', card[:2000]
    )
    # JSON: the kernel's own severity stays; the summary and priorities add the whole run's.
    doc = json.loads(render(step, "json"))
    k = next(k for k in doc["kernels"] if k["id"] == 11)
    assert k["findings"][0]["severity"] == "high"
    assert {"saved_share", "application_severity"} <= set(doc["priorities"][0])


def test_tree_suggestions_give_the_severity_in_the_whole_run(many):
    gather = _kernel(many, "strided_gather")  # 3.1% of the GPU time
    top = gather.findings[0]
    assert top.id == "global-uncoalesced" and top.severity == "high"
    own = _section(render(many, "text", WIDE), gather)
    assert f"(est. {top.estimated_speedup:.2f}x speedup, low)" in own
    assert f"(est. {top.estimated_speedup:.2f}x speedup, high)" not in own


def test_severity_of_one_kernel_is_its_own():
    from conftest import analysis_of

    a = analysis_of("aos_gather", "bad")
    (row,) = a.summary()
    for f, ka_f in zip(
        sorted(row["findings"], key=lambda f: f["id"]), sorted(a.kernels[0].findings, key=lambda f: f.id)
    ):
        assert f["application_severity"] == ka_f.severity
    text = render(a, "text", WIDE)
    assert "Findings (best first)" in text and "severity in the whole run" not in text


def test_near_identical_notes_are_merged():
    from drgpu_py.render.quiet import merge_notes

    sections = (
        "(collected by drgpu profile's default set, or ncu --section MemoryWorkloadAnalysis --section SpeedOfLight)"
    )
    lacks = f"not evaluated fully: the report lacks l1tex__throughput.avg.pct_of_peak_sustained_elapsed {sections}"
    signs = "NANOSLEEP, SYNCS, USETMAXREG, UTMALDG, UTMASTG, WARPGROUP"
    hand_off = "barrier-imbalance not reported: barrier waits are the hand-off of a warp-specialized pipeline"
    notes = [
        f"grid-too-small {lacks}",
        f"{hand_off} ({signs}), not unbalanced work",
        f"global-uncoalesced, grid-too-small {lacks}",
        f"{hand_off} ({signs}, BAR (named barriers)), not unbalanced work",
        "aggregated over 2 launches of this kernel: the mean launch (counts, rates and duration averaged)",
        "aggregated over 3 launches of this kernel: the mean launch (counts, rates and duration averaged)",
        f"grid-too-small not evaluated fully: the report lacks sm__cycles_active.avg {sections}",
    ]
    assert merge_notes(notes) == [
        f"grid-too-small, global-uncoalesced {lacks}",
        f"{hand_off} ({signs}, BAR (named barriers)), not unbalanced work",
        notes[4],
        notes[5],  # a number differs: another note
        notes[6],  # another metric: another note
    ]
    assert merge_notes(["a (x, y) b", "a (x, y) b"]) == ["a (x, y) b"]


def test_the_multi_kernel_page_opens_with_its_summary_and_says_each_note_once(step):
    from drgpu_py.render.quiet import _note_shape, merge_notes
    from drgpu_py.specs.loader import library_helpers as helpers

    page = render(step, "html", RenderOptions())
    summary, notes = page.index('id="summary"'), page.index('id="notes"')
    first_kernel = page.index('<article class="kernel"')
    assert summary < notes < first_kernel, "the summary first, then the notes, then the kernels"
    block = page[notes : page.index("</section>", notes)]
    bullets = [parse(li).plain.strip() for li in re.findall(r"<li>(.*?)</li>", block, re.S)]
    texts = [re.sub(r" \((every group|groups [\d, ]+)\)$", "", b) for b in bullets]
    shapes = [_note_shape(t)[0] for t in texts]
    assert len(set(shapes)) == len(shapes), "no two notes the same but for a list"
    # each library's advice about its use (findings.yaml library_helpers) is one note, apart
    libraries = [t for t in texts if t.split(" kernel, the library's own code: ")[0] in {lib for lib, *_ in helpers()}]
    assert libraries and len(libraries) == len({t.split(" kernel")[0] for t in libraries})
    assert len(bullets) - len(libraries) <= 8, bullets  # 10 before: two pairs of near-duplicates merged
    hand_off = [t for t in texts if t.startswith("barrier-imbalance not reported")]
    assert len(hand_off) == 1 and "BAR (named barriers)" in hand_off[0] and "WARPGROUP" in hand_off[0]
    lacks = [t for t in texts if "grid-too-small" in t and "not evaluated fully" in t]
    assert len(lacks) == 1 and lacks[0].startswith("grid-too-small, global-uncoalesced not evaluated fully")
    # Every note of every group is said: in its group's section, or by a note of this block.
    plain = parse(unpack_page(page)).plain
    for ka in step.kernels:
        for n in ka.notes:
            assert any(merge_notes([t, n]) == [t] for t in texts) or n in plain, (ka.kernel.id, n)
