"""Worker processes for ``drgpu analyze -j N``: kernel groups analyzed, and several reports
read, in a ``concurrent.futures.ProcessPoolExecutor``.

Contract: the result is the one the serial path gives, object for object in the same order
(the JSON is byte-identical to ``-j 1``; tests/samples/test_parallel.py). ``jobs <= 1``, a single
kernel group or a single report never starts a worker: one-kernel runs pay nothing; nor do
kernel groups of fewer instruction rows than a worker costs (``analysis_workers``).

Analysis workers are forked (where fork exists): they inherit the profile, options and the
interpreter's hash seed, so only chunk indices go out and only results come back; they never
call ncu_report. Report readers are spawned, fresh processes: ncu_report's native state
(its threads and locks) does not survive a fork of a process that already used it.
Kernel groups of one function go to the same worker, where the per-function analysis cache
(``AnalysisCache``) serves them as it would in one process. A worker's results carry no copy
of a kernel or its per-instruction table: ``ship`` pickles each ``KernelProfile`` of the
profile as its position (a ``dispatch_table`` entry, so no other object pays for the check)
and ``receive`` unpickles that position as the parent's own kernel; no field is emptied or
set to None on the way, and the context's cached lookups (``KernelContext.drop_caches``),
rebuilt on use, stay behind.
"""

from __future__ import annotations

import copyreg
import io
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from ..profile import KernelProfile

__all__ = ["ROWS_PER_WORKER", "analysis_workers", "analyze_kernels", "default_jobs", "read_reports", "receive", "ship"]

# What a forked worker reads: set in the parent just before the pool starts, never sent.
_WORK: tuple | None = None


#: Instruction rows of kernel groups an analysis worker should have at least. A worker costs
#: its fork and the shipping of its results (0.18 s of CPU more for two workers than for none,
#: measured on the 2-core machine), about what one process takes to analyze 2,000 rows: the
#: five kernel groups of 250 launches of the many-kernel report (392 rows) analyze in 0.06 s.
ROWS_PER_WORKER = 2000


def analysis_workers(kernels, jobs: int) -> int:
    """Worker processes worth starting to analyze ``kernels`` with ``jobs`` allowed: none
    (1: this process) for one group or too few rows to pay for a worker (``ROWS_PER_WORKER``).
    The result is the same for any number (the module docstring)."""
    if jobs <= 1 or len(kernels) <= 1:
        return 1
    rows = sum(len(k.instructions) for k in kernels)
    return max(1, min(jobs, len(kernels), rows // ROWS_PER_WORKER))


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork") if "fork" in methods else None


def _chunks(kernels, n_chunks: int) -> list[list[int]]:
    """Kernel positions in ``n_chunks`` lists: one function's groups together, the largest
    functions (by instruction rows) first onto the least loaded list; deterministic."""
    by_fn: dict[object, list[int]] = {}
    for i, k in enumerate(kernels):
        by_fn.setdefault(k.function_key, []).append(i)
    weight = {fn: sum(max(1, len(kernels[i].instructions)) for i in idx) for fn, idx in by_fn.items()}
    order = sorted(by_fn, key=lambda fn: (-weight[fn], by_fn[fn][0]))
    out: list[list[int]] = [[] for _ in range(n_chunks)]
    load = [0] * n_chunks
    for fn in order:
        j = min(range(n_chunks), key=lambda c: (load[c], c))
        out[j].extend(by_fn[fn])
        load[j] += weight[fn]
    return [sorted(c) for c in out if c]


def kernel_at(position: int) -> KernelProfile:
    """The name a shipped kernel is pickled under: ``receive`` resolves it to the receiver's
    own kernel at ``position``; unpickled any other way it is refused."""
    raise RuntimeError(f"kernel {position} of a shipped analysis is resolved by pipeline.parallel.receive only")


def ship(value: Any, kernels: list) -> bytes:
    """``value`` pickled with each of ``kernels`` (found by identity) as its position; any
    other KernelProfile is pickled whole."""
    where = {id(k): i for i, k in enumerate(kernels)}

    def by_position(k: KernelProfile):
        i = where.get(id(k))
        return (kernel_at, (i,)) if i is not None else k.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, KernelProfile: by_position}
    pickler.dump(value)
    return buf.getvalue()


class _Receiver(pickle.Unpickler):
    def __init__(self, data: bytes, kernels: list) -> None:
        super().__init__(io.BytesIO(data))
        self.kernels = kernels

    def find_class(self, module: str, name: str) -> Any:
        if module == __name__ and name == kernel_at.__name__:
            return self.kernels.__getitem__
        return super().find_class(module, name)


def receive(data: bytes, kernels: list) -> Any:
    """What ``ship(value, their_kernels)`` pickled, each shipped kernel resolved to the one at
    its position in ``kernels`` (the same kernels in the same order)."""
    return _Receiver(data, kernels).load()


def _analyze_chunk(indices: list[int]):
    from ..analysis import AnalysisCache, analyze_kernel

    assert _WORK is not None, "analyze_kernels sets the work before it starts the workers"
    profile, options, cache = _WORK
    shared = AnalysisCache() if cache else None
    out = []
    for i in indices:
        ka = analyze_kernel(profile.kernels[i], options, cache=shared)
        if ka.context is not None:
            ka.context.drop_caches()  # lookup maps over the kernel's table: rebuilt on use
        out.append((i, ka))
    return ship(out, profile.kernels)


def analyze_kernels(profile, options, jobs: int, cache: bool = True, progress=None) -> list:
    """KernelAnalysis of each of ``profile.kernels`` in order, over ``jobs`` workers."""
    global _WORK
    kernels = profile.kernels
    # A few chunks per worker: the pool balances what the size estimate gets wrong.
    chunks = _chunks(kernels, min(len(kernels), jobs * 4))
    out: list = [None] * len(kernels)
    _WORK = (profile, options, cache)
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=_context()) as pool:
            done = 0
            for fut in as_completed([pool.submit(_analyze_chunk, c) for c in chunks]):
                for i, ka in receive(fut.result(), kernels):
                    out[i] = ka
                    done += 1
                    if progress:
                        progress(done, len(kernels))
    finally:
        _WORK = None
    return out


def _read_one(path):
    from ..readers import open_report

    return open_report(path)


def read_reports(paths: list, jobs: int) -> list:
    """``open_report`` of each path in order, over ``jobs`` spawned workers (each pays the
    imports and ncu's report library start-up once, then reads its share)."""
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(paths)), mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        return list(pool.map(_read_one, list(paths), chunksize=max(1, len(paths) // (jobs * 4))))
