"""What loads with which module: pandas and numpy (0.3-1 s of a one-kernel run) load where a
table is made, not with the profile model, the readers, the pipeline or the command line, so
that a report's reader can start before them (docs/performance.md, "Start-up and one-kernel
runs"). Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pandas", "numpy")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(r.stdout.split())


@pytest.mark.parametrize(
    "module",
    [
        "drgpu_py.profile",
        "drgpu_py.readers",
        "drgpu_py.readers.ncu_rep",
        "drgpu_py.sass.cubin",
        "drgpu_py.pipeline",
        "drgpu_py.render",
        "drgpu_py.render.json_",
        "drgpu_py.render.located",
        "drgpu_py.render.sarif",
        "drgpu_py.cli",
    ],
)
def test_module_loads_without_pandas(module):
    assert _loaded_after(f"import {module}") == set()


def test_a_table_loads_pandas():
    code = "from drgpu_py.profile import KernelProfile\nKernelProfile(id=0, name='k')"
    assert _loaded_after(code) == set(HEAVY)
