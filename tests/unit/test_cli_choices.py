"""Options are checked before any report is read (issue 34, item 4): every option with a fixed
set of values, and every numeric option with a range, refuses a bad value while the command
line is parsed (exit 2, ``drgpu: usage:``, the message naming the choices or the bound),
with the readers and the analysis made to fail if called. The sets of values are the
library's own (renderers, sort keys, ncu's values), and ``-f`` help lists them.

No sample report: the report given is a path that does not exist, so an option checked after
the input would end with exit 3 instead."""

from __future__ import annotations

from typing import get_args

import pytest
import typer
from typer.testing import CliRunner

from drgpu_py.cli import app
from drgpu_py.cli import options

runner = CliRunner()

#: Positional arguments each command needs besides its options (a report that does not exist).
POSITIONAL = {
    "analyze": ["{r}"],
    "list": ["{r}"],
    "diff": ["{r}", "{r}"],
    "merge": ["{r}", "{r}"],
    "profile": ["--", "true"],
}


def _commands() -> dict:
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    return {name: group.get_command(ctx, name) for name in POSITIONAL}


@pytest.fixture
def nothing_is_read(monkeypatch):
    """Every way into a report fails the test (the argument also names no file)."""
    import drgpu_py.pipeline as pipeline
    import drgpu_py.pipeline.compare as compare
    import drgpu_py.readers as readers
    import drgpu_py.readers.registry as registry
    import drgpu_py.ncu.session as session

    def must_not_run(*a, **k):
        raise AssertionError("a report was read (or ncu run) before the options were checked")

    for module, name in (
        (readers, "open_report"),
        (readers, "sniff"),
        (registry, "sniff"),
        (pipeline, "analyze_reports"),
        (compare, "load"),
        (readers, "prefetch"),
        (session, "Session"),
    ):
        monkeypatch.setattr(module, name, must_not_run)


def _bad_values():
    """(command, option, bad value, what the message must name) for every choice and range."""
    out = []
    for name, cmd in _commands().items():
        for p in cmd.params:
            desc = getattr(p, "type_descriptor", None)
            if p.param_type_name != "option" or desc is None:
                continue
            opt = max(p.opts, key=len)
            if desc.is_choice:
                out.append((name, opt, "bogus", [f"'{c}'" for c in desc.choices]))
            elif desc.is_ranged:
                info = desc.parameter_info
                if info.min is not None:
                    out.append((name, opt, str(info.min - 1), ["greater than or equal to"]))
                if info.max is not None:
                    out.append((name, opt, str(info.max + 0.5), ["less than or equal to"]))
    return out


BAD = _bad_values()


def test_every_fixed_set_and_range_is_covered():
    """The options this module checks: a new choice or range option is checked too."""
    names = {(c, o) for c, o, _v, _n in BAD}
    for must in (
        ("analyze", "--format"),
        ("analyze", "--fail-on"),
        ("analyze", "--fold"),
        ("analyze", "--hide-below"),
        ("analyze", "--top"),
        ("analyze", "--jobs"),
        ("list", "--sort"),
        ("list", "--format"),
        ("list", "--top"),
        ("diff", "--format"),
        ("merge", "--format"),
        ("merge", "--jobs"),
        ("profile", "--replay-mode"),
        ("profile", "--clock-control"),
        ("profile", "--target-processes"),
        ("profile", "--kernel-name-base"),
        ("profile", "--launch-count"),
    ):
        assert must in names, must


@pytest.mark.parametrize("command, option, value, named", BAD, ids=[f"{c} {o} {v}" for c, o, v, _n in BAD])
def test_a_bad_value_is_refused_before_any_report_is_read(tmp_path, nothing_is_read, command, option, value, named):
    report = str(tmp_path / "slow.ncu-rep")  # not there: reading it would be exit 3
    args = [a.replace("{r}", report) for a in POSITIONAL[command]]
    argv = [command, option, value, *args] if command == "profile" else [command, *args, option, value]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    first = r.stderr.splitlines()[0]
    assert first.startswith("drgpu: usage: ") and option in first, r.stderr
    for word in named:
        assert word in first, (word, first)
    assert r.stderr.splitlines()[1].startswith("  hint: ") and " -h lists its options" in r.stderr


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["analyze", "{r}", "-o", "{d}/out.xml"], "cannot tell the output format from 'out.xml'"),
        (["analyze", "{r}", "-f", "png"], "format png is binary"),
        (["merge", "{r}", "{r}", "-o", "{d}/m.xlsx"], "cannot tell the output format from 'm.xlsx'"),
        (["diff", "{r}", "{r}", "-o", "{d}/d.pdf"], "cannot tell the diff format from 'd.pdf'"),
        (["analyze", "{r}", "-k", "(unclosed"], "is not a valid regular expression"),
        (["list", "{r}", "-k", "a{4294967296}"], "is not a valid regular expression"),
    ],
)
def test_outputs_and_patterns_are_checked_before_any_report_is_read(tmp_path, nothing_is_read, argv, needle):
    """An output extension no renderer writes, a binary format for the terminal, a pattern
    that does not compile: refused before the (slow) read, as the README says."""
    argv = [a.replace("{r}", str(tmp_path / "slow.ncu-rep")).replace("{d}", str(tmp_path)) for a in argv]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2 and needle in r.stderr, r.output


def test_choice_sets_are_the_librarys():
    from drgpu_py.ncu import session
    from drgpu_py.pipeline.compare import SORT_KEYS
    from drgpu_py.render import _MODULES, REGISTRIES, formats
    from drgpu_py.render.diff import render_diff  # noqa: F401 - registers the diff formats
    from drgpu_py.render.list_ import render_list_text  # noqa: F401 - registers the list formats

    assert set(get_args(options.AnalysisFormat)) == set(_MODULES) == set(formats())
    assert set(get_args(options.ListFormat)) == set(REGISTRIES["list"])
    assert set(get_args(options.DiffFormat)) == set(REGISTRIES["diff"])
    assert get_args(options.SortKey) == SORT_KEYS
    profile = {p.name: p for p in _commands()["profile"].params}
    for param, values in (
        ("replay_mode", session.REPLAY_MODES),
        ("clock_control", session.CLOCK_CONTROLS),
        ("target_processes", session.TARGET_PROCESSES),
        ("kernel_name_base", session.KERNEL_NAME_BASES),
    ):
        assert tuple(profile[param].type_descriptor.choices) == values, param


def test_format_help_lists_its_choices():
    for command, alias in (("analyze", "AnalysisFormat"), ("list", "ListFormat"), ("diff", "DiffFormat")):
        text = " ".join(runner.invoke(app, [command, "-h"]).stdout.split())
        listed = text[text.index("--format") :]
        for choice in get_args(getattr(options, alias)):
            assert choice in listed[:400], (command, choice, listed[:400])
    assert "--fail-on high|medium" in runner.invoke(app, ["analyze", "-h"]).stdout


@pytest.mark.parametrize(
    "size, text",
    [(0, "0 bytes"), (1, "1 byte"), (999, "999 bytes"), (1500, "1.5 kB"), (999_960, "1.0 MB"), (1_536_000, "1.5 MB")],
)
def test_human_size(size, text):
    assert options.human_size(size) == text
