"""The Python API: debug a region (`debug`) or stop where you are (`set_trace`), in line mode on the terminal.

    import dynadbg
    with dynadbg.debug():                  # stops (entry, recompile, exception by default) inside this block
        model(x)

    @torch.compile
    def f(x):
        y = x.sin()
        dynadbg.set_trace()                # stops at f's generated code, right after this call
        return y * 2

``PYTHONBREAKPOINT=dynadbg.set_trace`` makes ``breakpoint()`` do the same. Both answer stops on the program's own
thread with the line-mode command language (the TUI needs the main thread for itself: use ``dynadbg run`` for
it). `q` ends the debugged region (`debug`) or the program (`set_trace`).
"""

from __future__ import annotations

import atexit
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterable, Iterator, TextIO

from dynadbg.core import format as fmt
from dynadbg.core.model import DEFAULT_BREAK_ON, CommandResult, Stop
from dynadbg.core.runner import ExitResult, QuitProgram
from dynadbg.core.session import Session

PROMPT = "(dynadbg) "


class LineDriver:
    """Listener and inline driver: prints stops, reads commands from a list, then from `stdin`."""

    def __init__(self, commands: Iterable[str] | None = None, stdin: TextIO | None = None,
                 out: TextIO | None = None) -> None:
        self.pending = list(commands) if commands is not None else None
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout

    # Listener
    def on_stop(self, stop: Stop) -> None:
        self.out.write(fmt.stop_text(stop) + "\n")
        self.out.flush()

    def on_running(self, message: str) -> None:
        pass

    def on_message(self, text: str) -> None:
        self.out.write(f"dynadbg: {text}\n")

    def on_exit(self, result: ExitResult) -> None:
        pass

    # InlineDriver
    def read_command(self, stop: Stop) -> str | None:
        if self.pending is not None:
            if not self.pending:
                return None
            line = self.pending.pop(0)
            self.out.write(f"{PROMPT}{line}\n")
            return line
        while True:
            self.out.write(PROMPT)
            self.out.flush()
            line = self.stdin.readline()
            if not line:
                self.out.write("\n")
                return None
            if line.strip():
                return line.rstrip("\n")

    def show_result(self, result: CommandResult) -> None:
        if result.output:
            self.out.write(result.output + "\n")
        if result.error:
            self.out.write(f"*** {result.error}\n")
        self.out.flush()


#: builds the driver a bare `set_trace()` uses (the terminal); tests replace it
make_driver = LineDriver
_active: dict[int, Session] = {}
_from_set_trace: "set[Session]" = set()


@contextmanager
def debug(
    *,
    break_on: Iterable[str] = DEFAULT_BREAK_ON,
    commands: Iterable[str] | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> Iterator[Session]:
    """Debug the compiled code that runs inside the ``with`` block, on this thread, in line mode.

    Args:
        break_on: active stop kinds (`dynadbg.core.model.BREAK_ON_KINDS`).
        commands: scripted commands; when they run out the block runs on undisturbed. None reads `stdin`.

    Yields:
        The `Session` (its `compiled_frames()` stays readable after the block).

    `q` at a stop ends the block: the rest of its body is skipped and the program goes on after it.
    """
    driver = LineDriver(commands, stdin, out)
    session = Session(driver, break_on=break_on)
    key = threading.get_ident()
    previous = _active.get(key)
    if previous is not None:
        if previous not in _from_set_trace:
            raise RuntimeError("dynadbg.debug() is already active on this thread")
        previous.release()  # a session a bare set_trace() started: this region takes over
        _active.pop(key, None)
    session.attach(driver)
    _active[key] = session
    try:
        yield session
    except QuitProgram:
        driver.out.write("dynadbg: debugging ended by quit\n")
    finally:
        _active.pop(key, None)
        session.release()


def _generated_caller(frame: FrameType | None) -> FrameType | None:
    """The innermost caller frame that runs Dynamo-generated code (its code loads __compiled_fn_* globals)."""
    while frame is not None:
        names = frame.f_code.co_names
        if any(n.startswith(("__compiled_fn", "__resume_at", "__import_torch_dot__dynamo")) for n in names):
            return frame
        frame = frame.f_back
    return None


def _set_trace() -> None:
    frame = _generated_caller(sys._getframe(1))  # noqa: SLF001 - the caller's frame, as pdb.set_trace takes it
    if frame is None:
        sys.stderr.write("dynadbg.set_trace(): not called from code torch.compile generated; nothing to stop at\n")
        return
    key = threading.get_ident()
    session = _active.get(key)
    if session is None:
        session = Session(make_driver(), break_on=DEFAULT_BREAK_ON)
        session.attach(session.listener)  # type: ignore[arg-type]
        _active[key] = session
        _from_set_trace.add(session)
        atexit.register(session.release)
    session.stop_in(frame)


def __getattr__(name: str):  # noqa: ANN202
    if name == "set_trace":
        return _disabled_set_trace()
    raise AttributeError(name)


_wrapped = None


def _disabled_set_trace():  # noqa: ANN202
    """`_set_trace` wrapped with ``torch._dynamo.disable``: inside a compiled function the call is a graph break, so
    it runs eagerly from the function's generated code."""
    global _wrapped
    if _wrapped is None:
        import torch

        _wrapped = torch._dynamo.disable(_set_trace)  # noqa: SLF001 - torch.compiler.disable's own implementation
        _wrapped.__doc__ = "Stop at the generated code of the compiled function that calls this (line mode)."
    return _wrapped


def set_trace() -> None:  # pragma: no cover - replaced below
    """Stop at the generated code of the compiled function that calls this (line mode)."""


del set_trace  # resolved through the module __getattr__ above, so torch is imported only when it is used
