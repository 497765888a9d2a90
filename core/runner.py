"""Running a user script as ``__main__``, the way ``python SCRIPT ARGS`` would, and reporting how it ended."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from typing import Callable

from .model import ExitResult as ExitResult  # the result type lives with the other results; its home was here


class ScriptError(Exception):
    """The script cannot be run at all (missing file, a directory, unreadable)."""


def check_script(path: str) -> str:
    """The absolute path of `path`, or `ScriptError` with a one-line reason."""
    if not os.path.exists(path):
        raise ScriptError(f"no such file: {path}")
    if os.path.isdir(path):
        raise ScriptError(f"{path} is a directory, not a Python script")
    if not os.access(path, os.R_OK):
        raise ScriptError(f"cannot read {path}")
    return os.path.abspath(path)


def exit_status_of(code: object) -> int:
    """The process status for ``SystemExit(code)``, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1


class QuitProgram(BaseException):
    """Raised inside the program's thread to end it when the user quits (`q`)."""


def user_traceback(exc: BaseException, path: str | None = None) -> str:
    """`exc` formatted as Python prints it, from the first frame of the user's program on: the frames of the
    debugger's runner (``runpy``, this module, the session's worker) are left out. `path`: the script, whose
    first frame starts the traceback; None: the first frame outside dynadbg and ``runpy``."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the engine's own modules
    tb = exc.__traceback__
    start = tb
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if (name == path) if path is not None else not (name.startswith(here) or "runpy" in name):
            start = tb
            break
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, start))


def run_script(
    path: str, argv: list[str], post_mortem: "Callable[[BaseException], None] | None" = None
) -> ExitResult:
    """Run `path` as ``__main__`` with ``sys.argv = [path, *argv]`` and its directory first on ``sys.path``.

    ``sys.argv`` and ``sys.path`` are restored afterwards. The caller's thread runs the script. When the script
    raises, `post_mortem(exc)` is called while the traceback's frames are still alive (the debugger's
    post-mortem exception stop).

    Raises:
        ScriptError: the file does not exist or is not readable.
    """
    path = check_script(path)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
        return ExitResult(0)
    except SystemExit as exc:
        return ExitResult(exit_status_of(exc.code))
    except QuitProgram:
        return ExitResult(0, quit=True)
    except BaseException as exc:  # noqa: BLE001 - the script's exception is a result, not our failure
        tb = user_traceback(exc, path)
        if post_mortem is not None:
            try:
                post_mortem(exc)
            except QuitProgram:
                return ExitResult(1, traceback=tb, exception=f"{type(exc).__name__}: {exc}", quit=True)
        return ExitResult(1, traceback=tb, exception=f"{type(exc).__name__}: {exc}")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
