"""`python -m drgpu_py.cli ...`: the same as the `drgpu` command."""

from drgpu_py.cli import main

# Guarded: worker processes started by spawn (drgpu_py.pipeline.parallel) import this module again.
if __name__ == "__main__":
    main()
