"""The line-mode front end (`dynadbg run --plain`): the command language over stdin/stdout, or a scripted list.

For pipes, CI logs and screen readers. The program's own output goes to the same stdout, interleaved as it
happens. With `commands` given (``-c``/``--commands``), each stop takes the next command from the list, echoed
after a ``(dynadbg)`` prompt; when the list is exhausted the debugger detaches and the program runs to its end.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from typing import Callable, Iterable, Iterator, TextIO

from dynadbg.core import format as fmt
from dynadbg.core.commands import CommandLine
from dynadbg.core.format.glossary import Glossary, stop_terms
from dynadbg.core.model import CodeRoles, Resumed, Stop
from dynadbg.core.runner import ExitResult
from dynadbg.core.session import Session

PROMPT = "(dynadbg) "


class PlainListener:
    """Bridges the engine's worker-thread hooks to the main thread through a queue."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.events: "queue.Queue[tuple[str, object]]" = queue.Queue()

    def on_stop(self, stop: Stop) -> None:
        self.events.put(("stop", stop))

    def on_running(self, message: str) -> None:
        pass

    def on_resumed(self, result: Resumed) -> None:
        """A command let the program go on: print what it did now, before the program's next output."""
        text = fmt.resumed_text(result)
        if text:
            self.out.write(text + "\n")
            self.out.flush()

    def on_message(self, text: str) -> None:
        self.out.write(f"dynadbg: {text}\n")
        self.out.flush()

    def on_exit(self, result: ExitResult) -> None:
        self.events.put(("exit", result))


def _roles(session: Session, stop: Stop) -> CodeRoles | None:
    """The roles of the stop's generated code for the stop listing's role column (None: no column)."""
    frame = stop.selected_frame
    if frame is None or frame.index < 0 or not frame.code.generated:
        return None
    roles = session.roles()
    return roles if isinstance(roles, CodeRoles) else None


def _next_event(listener: PlainListener, session: Session, out: TextIO) -> tuple[str, object]:
    """Wait for the next stop or the end; Ctrl+C interrupts the program at its next generated instruction, a
    second Ctrl+C while it has not stopped yet ends it."""
    interrupted = False
    while True:
        try:
            return listener.events.get(timeout=0.25)
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            if interrupted:
                out.write("\ndynadbg: ending the program\n")
                session.quit()
            else:
                interrupted = True
                out.write("\ndynadbg: interrupt: stopping at the next generated instruction "
                          "(Ctrl+C again ends the program)\n")
                session.interrupt()
            out.flush()


def run_plain(
    start: Callable[[Session], None],
    *,
    break_on: Iterable[str],
    commands: list[str] | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> ExitResult:
    """Drive one session in line mode until the program ends; returns how it ended.

    Args:
        start: starts the program on the session (``lambda s: s.start_script(path, argv)``).
        break_on: active stop kinds.
        commands: a scripted command list; None reads commands from `stdin` interactively.
    """
    stdin = stdin or sys.stdin
    if out is None:
        with locked_stdout() as out:
            return _drive(start, break_on, commands, stdin, out)
    return _drive(start, break_on, commands, stdin, out)


class LockedStream:
    """A text stream whose writes and flushes hold one lock (shared by the program and the front end)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.RLock()

    def write(self, text: str) -> int:
        with self._lock:
            return self._stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        with self._lock:
            self._stream.writelines(lines)

    def flush(self) -> None:
        with self._lock:
            self._stream.flush()

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else (isatty, fileno, encoding, ...)
        return getattr(self._stream, name)


@contextlib.contextmanager
def locked_stdout() -> Iterator[LockedStream]:
    """`sys.stdout` wrapped in a `LockedStream` for the block. The program (worker thread) and the front end (main
    thread) both print to stdout, at times at once (a resuming command's output is written while the program
    already runs): TextIOWrapper is not thread-safe, so every write goes through one lock for the run."""
    out = LockedStream(sys.stdout)
    saved, sys.stdout = sys.stdout, out
    try:
        yield out
    finally:
        sys.stdout = saved


#: how long the front end waits for the program's thread to finish after the program ended
_JOIN_TIMEOUT_S = 60.0


def stop_output(session: Session, stop: Stop, glossary: Glossary) -> str:
    """What line mode prints at a stop: `format.stop_text` with the code's roles (the role column and headers of
    ``ll``), then, the first time a Dynamo term shows up in this session, one ``(?)`` line saying what it means.
    Runs on the front end's thread; `Session.roles` queues its work on the program's thread."""
    roles = _roles(session, stop)
    text = fmt.stop_text(stop, roles=roles)
    return "".join(line + "\n" for line in [text, *glossary.new_terms(stop_terms(stop, roles), stop.compile_id)])


def _drive(
    start: Callable[[Session], None],
    break_on: Iterable[str],
    commands: list[str] | None,
    stdin: TextIO,
    out: TextIO,
) -> ExitResult:
    listener = PlainListener(out)
    session = Session(listener, break_on=break_on)
    start(session)
    pending = list(commands) if commands is not None else None
    command_line = CommandLine(session)  # the command language over the session; it keeps what an empty line repeats
    glossary = Glossary()
    while True:
        kind, payload = _next_event(listener, session, out)
        if kind == "exit":
            result = payload
            assert isinstance(result, ExitResult)
            if result.traceback and not result.quit:
                out.write(result.traceback)
            if result.quit:
                out.write("dynadbg: program ended by quit\n")
            out.flush()
            session.wait(timeout=_JOIN_TIMEOUT_S)   # the worker thread must be gone before the process exits
            return result
        assert isinstance(payload, Stop)
        out.write(stop_output(session, payload, glossary))
        out.flush()
        while True:
            if pending is not None:
                if not pending:
                    session.detach()
                    break
                line = pending.pop(0)
                out.write(f"{PROMPT}{line}\n")  # an empty entry echoes as the empty line it stands for
                line = command_line.resolve(line)
            else:
                out.write(PROMPT)
                out.flush()
                try:
                    line = stdin.readline()
                except KeyboardInterrupt:
                    out.write("\n(the program is paused; q ends it)\n")
                    continue
                if not line:  # EOF: let the program finish undisturbed
                    out.write("\n")
                    session.detach()
                    break
                line = command_line.resolve(line.rstrip("\n"))  # as in pdb: an empty line repeats
            result = command_line.execute(line)
            if result.output and not (result.resumed and not result.quit):
                # a resuming command's answer was printed by `on_resumed`, before the program went on
                out.write(result.output + "\n")
            if result.error:
                out.write(f"*** {result.error}\n")
            out.flush()
            if result.resumed or result.quit:
                break
