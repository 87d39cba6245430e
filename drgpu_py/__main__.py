"""`python -m drgpu_py ...`: the same as the `drgpu` command."""

import sys


def _run() -> None:
    # nvdisasm starts on the report `drgpu analyze R` names before the CLI's modules load.
    from drgpu_py.sass.early import start

    start(sys.argv[1:])
    from drgpu_py.cli import main

    main()


# Guarded: worker processes started by spawn (drgpu_py.pipeline.parallel) import this module again.
if __name__ == "__main__":
    _run()
