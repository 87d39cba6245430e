"""`python -m drgpu_py ...`: the same as the `drgpu` command."""
from drgpu_py.cli import main

main()
