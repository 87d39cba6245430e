"""scripts/check_dist.py, which .ci/run runs on the wheel and sdist it builds: a dist that
holds the package, its data (specs YAML and schemas) and the share folders (metric_sets/,
templates/), with the SASS tools marked for Linux and Windows, passes; one that lacks any
of them, or requires the SASS tools on macOS too, is named. Dists are made here from the
repository's files (building a real one takes half a minute: .ci/run does that)."""

from __future__ import annotations

import importlib.util
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_dist", ROOT / "scripts" / "check_dist.py")
check_dist = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_dist)

MARKED = "; sys_platform == 'linux' or sys_platform == 'win32'"


def _dist(folder: Path, drop: str | None = None, marker: str = MARKED) -> Path:
    wheel_files, sdist_files = check_dist.expected_files(ROOT)
    meta = "Metadata-Version: 2.4\nName: drgpu\n" + "".join(
        f"Requires-Dist: {name}>=12.4{marker}\n" for name in check_dist.PLATFORM_ONLY
    )
    with zipfile.ZipFile(folder / "drgpu-0.1.0-py3-none-any.whl", "w") as zf:
        for name in wheel_files:
            if name != drop:
                zf.writestr(name, b"")
        zf.writestr("drgpu-0.1.0.dist-info/METADATA", meta)
    with tarfile.open(folder / "drgpu-0.1.0.tar.gz", "w:gz") as tf:
        for name in sdist_files:
            if name != drop:
                tf.addfile(tarfile.TarInfo(f"drgpu-0.1.0/{name}"), io.BytesIO(b""))
    return folder


def test_the_expected_files_include_the_data_an_install_reads():
    wheel, sdist = check_dist.expected_files(ROOT)
    assert "drgpu_py/specs/thresholds.yaml" in wheel and "drgpu_py/specs/schema/analysis.schema.json" in wheel
    assert "drgpu_py/_share/metric_sets/gh100.yaml" in wheel and "drgpu_py/_share/templates/report.html.j2" in wheel
    assert "metric_sets/gh100.yaml" in sdist and "README.md" in sdist


def test_a_complete_dist_passes(tmp_path):
    assert check_dist.problems(_dist(tmp_path)) == []
    assert check_dist.main([str(tmp_path)]) == 0


@pytest.mark.parametrize(
    "drop", ["drgpu_py/specs/findings.yaml", "drgpu_py/_share/templates/report.css", "metric_sets/base.yaml"]
)
def test_a_missing_data_file_is_named(tmp_path, drop):
    found = check_dist.problems(_dist(tmp_path, drop=drop))
    assert found and all(drop in line for line in found), found


def test_sass_tools_required_on_macos_are_named(tmp_path):
    found = check_dist.problems(_dist(tmp_path, marker=""))
    assert len(found) == 2 and all("NVIDIA ships no macOS wheel" in line for line in found), found
