"""SASS analysis: parse instructions into defs/uses, build control-flow graphs with loops,
decode Volta+ control codes, blame stalls on the instructions that cause them (GPA), and
list the SASS of cubins with nvdisasm (``sass.cubin``) or of a binary (``sass.binary``).

The names below are loaded on first use (PEP 562): ``sass.cubin`` starts nvdisasm before
the analysis modules load, so importing it must not import numpy and pandas with the slicer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_HOMES = {
    "Instruction": "isa",
    "parse_instruction": "isa",
    "parse_listing": "isa",
    "CFG": "cfg",
    "build_cfg": "cfg",
    "Blame": "slicing",
    "blame_stalls": "slicing",
}

__all__ = ["Instruction", "parse_instruction", "parse_listing", "CFG", "build_cfg", "Blame", "blame_stalls"]

if TYPE_CHECKING:
    from .cfg import CFG, build_cfg
    from .isa import Instruction, parse_instruction, parse_listing
    from .slicing import Blame, blame_stalls


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
