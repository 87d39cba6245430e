"""Worker processes for ``drgpu analyze -j N``: kernel groups analyzed, and several reports
read, in a ``concurrent.futures.ProcessPoolExecutor``.

Contract: the result is the one the serial path gives, object for object in the same order
(the JSON is byte-identical to ``-j 1``; tests/samples/test_parallel.py). ``jobs <= 1``, a single
kernel group or a single report never starts a worker: one-kernel runs pay nothing.

Analysis workers are forked (where fork exists): they inherit the profile, options and the
interpreter's hash seed, so only chunk indices go out and only results come back; they never
call ncu_report. Report readers are spawned, fresh processes: ncu_report's native state
(its threads and locks) does not survive a fork of a process that already used it.
Kernel groups of one function go to the same worker, where the per-function analysis cache
(``AnalysisCache``) serves them as it would in one process. A worker's results carry no copy
of the kernel or its per-instruction table: the parent re-attaches its own.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed

# What a forked worker reads: set in the parent just before the pool starts, never sent.
_WORK: tuple | None = None


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
        by_fn.setdefault(k.mangled or k.name, []).append(i)
    weight = {fn: sum(max(1, len(kernels[i].instructions)) for i in idx) for fn, idx in by_fn.items()}
    order = sorted(by_fn, key=lambda fn: (-weight[fn], by_fn[fn][0]))
    out: list[list[int]] = [[] for _ in range(n_chunks)]
    load = [0] * n_chunks
    for fn in order:
        j = min(range(n_chunks), key=lambda c: (load[c], c))
        out[j].extend(by_fn[fn])
        load[j] += weight[fn]
    return [sorted(c) for c in out if c]


def _detach(ka):
    """The analysis without the kernel and the context's lookup maps (each refers to the
    kernel's table); the parent re-attaches its kernel and the maps are rebuilt on use."""
    ka.kernel = None
    ctx = ka.context
    if ctx is not None:
        ctx.kernel = None
        ctx.drop_caches()
    return ka


def _attach(ka, k):
    ka.kernel = k
    if ka.context is not None:
        ka.context.kernel = k
    return ka


def _analyze_chunk(indices: list[int]):
    from ..analysis import AnalysisCache, analyze_kernel

    assert _WORK is not None, "analyze_kernels sets the work before it starts the workers"
    profile, options, cache = _WORK
    shared = AnalysisCache() if cache else None
    return [(i, _detach(analyze_kernel(profile.kernels[i], options, cache=shared))) for i in indices]


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
                for i, ka in fut.result():
                    out[i] = _attach(ka, kernels[i])
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
