"""drgpu: a top-down GPU performance advisor built on NVIDIA Nsight Compute.

Public entry points: :func:`drgpu_py.readers.open_report` (report -> :class:`Profile`),
:func:`drgpu_py.analysis.analyze` (profile -> :class:`Analysis`), and the renderers in
:mod:`drgpu_py.render`. The CLI (:mod:`drgpu_py.cli`) is a thin layer over these.
"""
__version__ = "0.1.0"
