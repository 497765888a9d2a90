"""The Python API: debug a region (`debug`) or stop where you are (`set_trace`), in line mode on the terminal.

    import dynadbg
    with dynadbg.debug():                  # stops (entry, recompile, exception by default) inside this block
        model(x)

    @torch.compile
    def f(x):
        y = x.sin()
        dynadbg.set_trace()                # stops at f's generated code, right after this call
        return y * 2

Inside a function being compiled, ``dynadbg.set_trace()`` costs no graph break: Dynamo compiles it into a
breakpoint marker (as torch's own ``torch._dynamo.bytecode_debugger.breakpoint()``, which dynadbg honours too),
and the stop comes at that marker, before the function's graph runs. Called from eager code (or bound before
tracing: ``from dynadbg import set_trace``) it is a graph break and stops in the resume function that follows.
While a session runs, the builtin ``breakpoint()`` in a function compiled then is a marker too; outside one it is
a graph break, and ``PYTHONBREAKPOINT=dynadbg.set_trace`` makes it stop in the resume function.
Both answer stops on the program's own
thread with the line-mode command language (the TUI needs the main thread for itself: use ``dynadbg run`` for
it). `q` ends the debugged region (`debug`) or the program (`set_trace`).
"""

from __future__ import annotations

import atexit
import dis
import sys
import threading
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Iterable, Iterator, TextIO

from dynadbg.core import facts
from dynadbg.core import format as fmt
from dynadbg.core.commands import CommandLine
from dynadbg.core.model import DEFAULT_BREAK_ON, CommandResult, Resumed, Stop
from dynadbg.core.runner import ExitResult, QuitProgram
from dynadbg.core.session import Session, session_on_thread

PROMPT = "(dynadbg) "


class LineDriver:
    """Listener and inline driver: prints stops, reads commands from a list, then from `stdin`, and runs them with
    its command line over the session it serves (`serve`)."""

    def __init__(self, commands: Iterable[str] | None = None, stdin: TextIO | None = None,
                 out: TextIO | None = None) -> None:
        self.pending = list(commands) if commands is not None else None
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout
        self.command_line: CommandLine | None = None

    def serve(self, session: Session) -> None:
        """Answer `session`'s stops on this thread from now on (`Session.attach`), with a command line over it."""
        self.command_line = CommandLine(session)
        session.attach(self)

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

    def on_resumed(self, result: Resumed) -> None:
        pass  # `show_result` prints the resuming command's answer (it runs on this thread, before the program)

    # InlineDriver
    def answer(self, stop: Stop) -> CommandResult:
        """Read one command (None: the commands ran out, or EOF: ``detach``), run it, print what it produced."""
        assert self.command_line is not None, "serve(session) first"
        line = self.read_command(stop)
        try:
            result = self.command_line.execute("detach" if line is None else line)
        except QuitProgram:
            result = CommandResult(output="quit", quit=True)
        except Exception as exc:  # noqa: BLE001 - a debugger bug is shown, the program goes on
            result = CommandResult(error=f"internal error: {type(exc).__name__}: {exc}")
        self.show_result(result)
        return result

    def read_command(self, stop: Stop) -> str | None:
        """The next command line at `stop`, an empty one resolved as pdb does (None: none left, or EOF)."""
        assert self.command_line is not None, "serve(session) first"
        if self.pending is not None:
            if not self.pending:
                return None
            line = self.pending.pop(0)
            self.out.write(f"{PROMPT}{line}\n")
            return self.command_line.resolve(line)  # an empty entry repeats, as typed
        self.out.write(PROMPT)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            self.out.write("\n")
            return None
        return self.command_line.resolve(line.rstrip("\n"))  # as in pdb: an empty line repeats

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


class DebugContext:
    """What ``with dynadbg.debug() as ctx:`` gives: the region's `Session` (``ctx.session``; its methods and
    attributes are reachable on `ctx` too, e.g. ``ctx.compiled_frames()``), and the two queries of torch's own
    ``torch._dynamo.bytecode_debugger.debug()`` context, with the same shapes.

    Both read what the session saw on this thread; call them between stops or after the block (they stay
    readable after it). Neither touches torch.
    """

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_tracked_codes(self) -> list[CodeType]:
        """Every Dynamo-generated code object (compiled frames and resume functions) that ran while the session
        was attached, in the order each first ran (torch's: the codes its debugger callback saw)."""
        return list(self.session.seen_codes)

    def get_instructions(self, code: CodeType | None = None) -> list[dis.Instruction]:
        """The instructions of a tracked code object, one per instruction (no CACHE entries), each with
        ``opname``, ``opcode``, ``arg``, ``argval``, ``argrepr``, ``offset`` (bytes) and ``starts_line``, in
        order: ``dis.get_instructions(code)`` (torch returns its own ``Instruction`` converted from the same
        list, one for one). `code` None: the most recently tracked code object. An empty list when nothing was
        tracked yet or `code` is not a tracked one."""
        codes = self.session.seen_codes
        if code is None:
            if not codes:
                return []
            code = codes[-1]
        elif not any(c is code for c in codes):
            return []
        return list(dis.get_instructions(code))

    def __getattr__(self, name: str):  # noqa: ANN204 - the session's own API, as debug() yielded it before
        return getattr(self.session, name)


@contextmanager
def debug(
    *,
    break_on: Iterable[str] = DEFAULT_BREAK_ON,
    commands: Iterable[str] | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> Iterator[DebugContext]:
    """Debug the compiled code that runs inside the ``with`` block, on this thread, in line mode.

    Args:
        break_on: active stop kinds (`dynadbg.core.model.BREAK_ON_KINDS`).
        commands: scripted commands (an empty one repeats the command before it, as an empty line does); when
            they run out the block runs on undisturbed. None reads `stdin`.
        stdin, out: where commands are read and stops written (default: the process's own).

    Yields:
        A `DebugContext`: the `Session` (``ctx.session``; ``ctx.compiled_frames()`` stays readable after the
        block) with ``get_instructions(code=None)`` and ``get_tracked_codes()`` as torch's context has them.

    A ``debug()`` inside another runs a session of its own, with its own commands and output: the outer one
    stops nowhere meanwhile and serves the rest of its block again afterwards. Inside ``dynadbg run`` the run's
    session (and its front end) serves the block. `q` at a stop ends the block: the rest of its body is skipped
    and the program goes on after it.
    """
    key = threading.get_ident()
    previous = _active.get(key)
    running = session_on_thread()
    if running is not None and running is not previous:
        # `dynadbg run` (or another front end) debugs this thread and owns the terminal: it serves the block
        yield DebugContext(running)
        return
    outer = previous if previous is not None and previous not in _from_set_trace else None
    driver = LineDriver(commands, stdin, out)
    session = Session(driver, break_on=break_on)
    if previous is not None and outer is None:
        previous.release()  # a session a bare set_trace() started: this region takes over
        _active.pop(key, None)
    if outer is not None:
        outer.suspend()  # a region inside a region: this one gets its own session
    try:
        driver.serve(session)
        _active[key] = session
        try:
            yield DebugContext(session)
        except QuitProgram:
            driver.out.write("dynadbg: debugging ended by quit\n")
        finally:
            session.release()
    finally:
        if outer is not None:
            _active[key] = outer
            outer.resume()
        else:
            _active.pop(key, None)


def _generated_caller(frame: FrameType | None) -> FrameType | None:
    """The innermost caller frame that runs Dynamo-generated code (its code loads __compiled_fn_* globals)."""
    while frame is not None:
        if any(facts.is_generated_code_global(n) for n in frame.f_code.co_names):
            return frame
        frame = frame.f_back
    return None


#: stops a session that set_trace() starts: like pdb's continue, `c` then runs to the next breakpoint or marker
#: (no stop at the entry of every new generated code object)
SET_TRACE_BREAK_ON = tuple(k for k in DEFAULT_BREAK_ON if k != "entry")


def _thread_session() -> Session:
    """The session debugging this thread: `dynadbg run`'s, a debug() region's, or a new one for set_trace()."""
    key = threading.get_ident()
    session = session_on_thread() or _active.get(key)
    if session is None:
        driver = make_driver()
        session = Session(driver, break_on=SET_TRACE_BREAK_ON)
        driver.serve(session)
        _active[key] = session
        _from_set_trace.add(session)
        atexit.register(session.release)
    return session


def _set_trace() -> None:
    frame = _generated_caller(sys._getframe(1))  # noqa: SLF001 - the caller's frame, as pdb.set_trace takes it
    if frame is None:
        sys.stderr.write("dynadbg.set_trace(): not called from code torch.compile generated; nothing to stop at\n")
        return
    _thread_session().stop_in(frame)


def _dynamo_tracing() -> bool:
    """Whether Dynamo is tracing a frame on this thread right now (torch._guards.TracingContext, torch 2.13)."""
    try:
        from torch._guards import TracingContext
    except ImportError:
        return False
    return TracingContext.try_get() is not None


def __getattr__(name: str):  # noqa: ANN202
    if name == "set_trace":
        if _dynamo_tracing():
            # Dynamo is reading ``dynadbg.set_trace`` in a function it compiles: hand it torch's own marker
            # function, which it compiles into a breakpoint marker with no graph break; the session on this
            # thread stops there (started now, so torch's own debugger does not take the marker)
            import torch._dynamo.bytecode_debugger as torch_debugger

            _thread_session()
            return torch_debugger.breakpoint
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
