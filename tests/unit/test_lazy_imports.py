"""Start-up: what loads with which module. pandas and numpy (0.3-1 s of a one-kernel run) load
where a table is made, not with the profile model, the readers, the pipeline or the command
line, so that a report's reader can start before them; numpy loads with one BLAS thread
(docs/performance.md, "Start-up and one-kernel runs"). Each check runs in a fresh interpreter."""

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


def _blas_threads(env: dict[str, str]) -> tuple[int, str]:
    """(threads of a process that ran load_numpy_one_blas_thread, its OPENBLAS_NUM_THREADS after)."""
    import os

    code = (
        "import os; from drgpu_py.cli.options import load_numpy_one_blas_thread; load_numpy_one_blas_thread(); "
        "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS', '-'))"
    )
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=full)
    n, var = r.stdout.split()
    return int(n), var


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_numpy_loads_with_one_blas_thread_and_the_environment_is_restored():
    """numpy's OpenBLAS starts no thread of its own (drgpu calls no BLAS routine), and no
    program drgpu starts later sees the setting."""
    assert _blas_threads({}) == (1, "-")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_a_blas_thread_count_the_user_sets_is_kept():
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenBLAS starts no thread either way")
    assert _blas_threads({"OPENBLAS_NUM_THREADS": "2"}) == (2, "2")
