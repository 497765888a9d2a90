"""`python -m dynadbg SCRIPT [ARGS...]`: the same as `dynadbg run SCRIPT [ARGS...]`."""

from dynadbg.cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m dynadbg"))
