"""Driving Nsight Compute (ncu): the ``drgpu profile`` session and its parts.

- :mod:`.session`: what to profile (``ProfileRequest``, the ncu argument list, the GPU and the
  metric set chosen) and the whole session: run ncu, analyze each report it wrote, keep a
  record of the run. The CLI only shows progress and the closing summary.
- :mod:`.run`: finding and running ncu (``run_ncu``) in a process group of its own, stopping
  it on a signal or a timeout (``stop``).
- :mod:`.console`: ncu's console output as events (``OutputParser``, ``Event``).
- :mod:`.outcome`: what a finished run means: its reports (``found_reports``), its typed error
  (``classify``), the requested metrics a report lacks (``unavailable_metrics``).
- :mod:`.warmup`: the analysis' imports done while ncu runs.
"""
