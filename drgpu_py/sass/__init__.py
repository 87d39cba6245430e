"""SASS analysis: parse instructions into defs/uses, build control-flow graphs with loops,
decode Volta+ control codes, and blame stalls on the instructions that cause them (GPA)."""
from .isa import Instruction, parse_instruction, parse_listing
from .cfg import CFG, build_cfg
from .slicing import Blame, blame_stalls

__all__ = ["Instruction", "parse_instruction", "parse_listing", "CFG", "build_cfg", "Blame", "blame_stalls"]
