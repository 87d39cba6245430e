"""Start-up work done while ncu runs, so that ``drgpu profile``'s analysis afterwards need not
first import its modules and compile the HTML template (docs/performance.md).

Contract: ``Warmup(binary).start()`` extracts the binary's cubins and starts nvdisasm on them
(``sass.cubin``), imports the reading, analysis and rendering modules and compiles the HTML
template, in a daemon thread; ``Warmup.join()`` waits and returns the error it met, if any
(a failed warm-up changes nothing: the imports run again in the main thread). Nothing
depends on the report, and nothing is written but temporary cubin files, removed once
listed. ``ncu_report`` is never imported here: report reading forks a child
(``readers.isolate``), and a process that holds ``ncu_report``'s own thread must not fork.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by _run, in the warm-up thread
    from ..sass.cubin import SassSource

#: Modules the analysis after profiling imports, heaviest (pandas) first.
MODULES = (
    "pandas",
    "drgpu_py.pipeline",
    "drgpu_py.analysis.groups",
    "drgpu_py.render.bundle",
    "drgpu_py.render.json_",
    "drgpu_py.render.text",
    "drgpu_py.render.dot",
    "drgpu_py.render.html",
)


class Warmup:
    def __init__(self, binary: str | None = None) -> None:
        self._thread: threading.Thread | None = None
        self._binary = binary
        self.error: BaseException | None = None
        #: nvdisasm at work on the binary's cubins, once started
        self.sass: SassSource | None = None

    def start(self) -> "Warmup":
        # Modules that cli.options.lazy_module defers are loaded here, in the calling thread:
        # importlib's LazyLoader must not run its first load from two threads at once.
        from ..specs import loader as data

        data.share_dir  # noqa: B018 - the attribute access is what loads the module
        self._thread = threading.Thread(target=self._run, name="drgpu-warmup", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            if self._binary:
                from ..sass.cubin import SassSource, cubins_in_binary, max_cubins

                self.sass = SassSource.start(cubins_in_binary(self._binary, limit=max_cubins()))
            for name in MODULES:
                importlib.import_module(name)
            from ..render.html.page import template_environment

            env = template_environment()
            for name in ("report.html.j2", "_macros.html.j2", "report.css", "report.js"):
                env.get_template(name)  # compiled once; the environment keeps them
        except BaseException as e:  # noqa: BLE001 - reported by join(), redone by the caller
            self.error = e

    def join(self) -> BaseException | None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.error
