"""Option defaults from outside the command line (drgpu_py/cli/config.py, docs/config.md): the
command line wins over ``DRGPU_<COMMAND>_<OPTION>``, which wins over ``[tool.drgpu.<command>]``
of the nearest pyproject.toml, which wins over the built-in default; a mistake in the file
is refused naming the file and the key; ``-v`` says where each value came from.

No sample report: the analysis is replaced by a stub that records what the command passed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from drgpu_py.cli import app
from drgpu_py.errors import NoKernelsError

runner = CliRunner()


@pytest.fixture
def seen(monkeypatch, tmp_path):
    """The keyword arguments ``analyze`` passed to the analysis (which then stops), from a
    working folder of its own under a folder with a pyproject.toml of no [tool.drgpu]."""
    import drgpu_py.pipeline as pipeline

    calls: list[dict] = []

    def record(reports, **kw):
        calls.append(kw)
        raise NoKernelsError("stub: stopped after the options")

    monkeypatch.setattr(pipeline, "analyze_reports", record)
    for name in ("DRGPU_ANALYZE_JOBS", "DRGPU_ANALYZE_PER_LAUNCH", "DRGPU_ANALYZE_FORMAT"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return calls


def _jobs(calls, *argv: str, env: dict | None = None) -> int:
    r = runner.invoke(app, ["analyze", "r.ncu-rep", *argv], env=env)
    assert r.exit_code == 5 and "stub" in r.stderr, r.output
    return calls[-1]["jobs"]


def test_precedence_command_line_then_environment_then_pyproject_then_default(seen, tmp_path):
    from drgpu_py.pipeline.parallel import default_jobs

    assert _jobs(seen) == default_jobs()  # built in: 0, one per core
    (tmp_path / "project" / "pyproject.toml").write_text("[tool.drgpu.analyze]\njobs = 2\nper-launch = true\n")
    assert _jobs(seen) == 2  # the nearest pyproject.toml, found from a folder below it
    assert seen[-1]["per_launch"] is True
    assert _jobs(seen, env={"DRGPU_ANALYZE_JOBS": "3"}) == 3
    assert _jobs(seen, "-j", "4", env={"DRGPU_ANALYZE_JOBS": "3"}) == 4
    assert _jobs(seen, env={"DRGPU_ANALYZE_PER_LAUNCH": "0"}) == 2 and seen[-1]["per_launch"] is False


def test_a_nearer_pyproject_without_the_table_stops_the_search(seen, tmp_path):
    (tmp_path / "project" / "pyproject.toml").write_text("[tool.drgpu.analyze]\njobs = 2\n")
    (tmp_path / "project" / "sub" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    from drgpu_py.pipeline.parallel import default_jobs

    assert _jobs(seen) == default_jobs()


def test_relative_paths_are_the_files_folders(seen, tmp_path):
    project = tmp_path / "project"
    (project / "t.yaml").write_text("thresholds:\n  grid_fill: 0.5\n")
    (project / "pyproject.toml").write_text(
        '[tool.drgpu.analyze]\nthresholds = "t.yaml"\nsource-root = ["src", "/abs"]\n'
    )
    r = runner.invoke(app, ["analyze", "r.ncu-rep"])
    assert r.exit_code == 5, r.output
    assert seen[-1]["thresholds"]["grid_fill"] == 0.5
    assert seen[-1]["source_roots"] == [project / "src", Path("/abs")]


@pytest.mark.parametrize(
    "toml, needle",
    [
        ('[tool.drgpu.analyze]\nformt = "json"\n', "[tool.drgpu.analyze]: no option --formt"),
        ('[tool.drgpu.analyze]\nformat = "xml"\n', "[tool.drgpu.analyze] format: 'xml' is not one of"),
        ("[tool.drgpu.analyze]\ntop = -1\n", "[tool.drgpu.analyze] top: Input should be greater than or equal to 0"),
        ('[tool.drgpu.analyse]\nformat = "json"\n', "has a table 'analyse', which is no drgpu command"),
        ('[tool.drgpu.analyze]\nthreshold = "sol_pct=5"\n', "expected a list"),
        ("[tool.drgpu.analyze\n", "not valid TOML"),
    ],
)
def test_a_mistake_in_the_file_names_the_file_and_the_key(seen, tmp_path, toml, needle):
    (tmp_path / "project" / "pyproject.toml").write_text(toml)
    r = runner.invoke(app, ["analyze", "r.ncu-rep"])
    assert r.exit_code == 8, r.output
    assert r.stderr.startswith("drgpu: data: ") and "pyproject.toml" in r.stderr and needle in r.stderr, r.stderr
    assert not seen


def test_environment_values_get_the_options_checks(seen):
    r = runner.invoke(app, ["analyze", "r.ncu-rep"], env={"DRGPU_ANALYZE_FORMAT": "xml"})
    assert r.exit_code == 2 and "DRGPU_ANALYZE_FORMAT" in r.stderr and "'xml' is not one of" in r.stderr, r.output
    assert not seen


def test_verbose_says_where_values_came_from(seen, tmp_path):
    (tmp_path / "project" / "pyproject.toml").write_text("[tool.drgpu.analyze]\njobs = 2\n")
    r = runner.invoke(app, ["analyze", "r.ncu-rep", "-v"], env={"DRGPU_ANALYZE_FOLD": "0.1", "COLUMNS": "300"})
    assert r.exit_code == 5, r.output
    err = " ".join(r.stderr.split())
    assert "--fold = 0.1 from the environment (DRGPU_ANALYZE_FOLD)" in err, err
    assert "--jobs = 2 from pyproject.toml [tool.drgpu.analyze]" in err, err
    quiet = runner.invoke(app, ["analyze", "r.ncu-rep"], env={"DRGPU_ANALYZE_FOLD": "0.1"})
    assert "from the environment" not in quiet.stderr
