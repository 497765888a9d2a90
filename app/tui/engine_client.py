"""The TUI's one path to the engine: `EngineClient` makes every engine call on one long-lived thread.

Every method of `dynadbg.core.protocol.Engine` blocks until the program's worker thread answered, so none may run
on the UI thread. `EngineClient.call` takes a function that calls the engine and a function that handles its
answer: the first runs on the client's own daemon thread (``dynadbg-engine-calls``, fed by a queue), the second
on the UI thread once the answer is back (`EngineClient.Answered`, posted to the app). One thread for the whole
session, not a Textual thread worker per call: a worker costs a thread start and the app's worker bookkeeping
(state messages, a refresh of every widget watching workers) at each step, and a step is the path a user repeats
most (`benchmarks/bench_tui_terminal.py` times it). Calls run one at a time, in the order they were made: a
breakpoint toggled twice, or a query sent behind an edit, reaches the engine in that order. A call that lets the
program go on (a step, continue, a decision) is handed to the paused program's thread itself (`Call.direct`,
`Session.submit`), still in its turn: the answer is posted from there, one thread hop less each way. An exception
raised by the engine is answered as an ``EngineError(kind=ErrorKind.INTERNAL)``: an engine bug never kills the UI.

`EngineClient.quit` and `EngineClient.interrupt` do not wait their turn: both return at once on the engine
(`Session.quit`, `Session.interrupt`), and a user who presses ``q`` or Ctrl+C while a long call runs must be heard.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any

from textual.message import Message

from dynadbg.core.model import EngineError, ErrorKind

if TYPE_CHECKING:
    from textual.app import App

    from dynadbg.core.runner import ExitResult

    from .bridge import EngineSession


@dataclass(frozen=True)
class Call:
    """One engine call.

    Attributes:
        fn: calls the engine (on the client's thread) and returns its answer.
        done: handles the answer on the UI thread.
        what: what it is, for an internal-error line.
        direct: hand `fn` to the paused program's thread itself (`EngineSession.submit`) when it takes it: one
            thread hop less each way, for the calls that let the program go on (a step is the path a user repeats
            most). Falls back to the client's thread when the engine does not take it.
    """

    fn: Callable[[], Any]
    done: Callable[[Any], None]
    what: str
    direct: bool = False


class EngineClient:
    """Engine calls from the UI thread, made on one daemon thread one at a time (see the module docstring).

    Args:
        app: the app which receives `Answered` (and whose thread worker waits for the program's end on `quit`).
        engine: the engine session (`dynadbg.core.protocol.Engine`).
    """

    class Answered(Message):
        """An engine call came back; the app hands it to `EngineClient.answered` on the UI thread."""

        def __init__(self, call: Call, result: Any) -> None:
            self.call = call
            """The call."""
            self.result = result
            """What the engine returned (an `EngineError` when the call raised)."""
            super().__init__()

    def __init__(self, app: App[Any], engine: EngineSession, on_idle: Callable[[], None] | None = None) -> None:
        self.app = app
        self.engine = engine
        """The engine session every call goes to."""
        self.on_idle = on_idle
        """Called on the UI thread when the last call waiting was answered."""
        self._waiting: deque[Call] = deque()
        self._in_flight: Call | None = None
        self._closed = False
        self._queue: SimpleQueue[Call | None] = SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        """A call is running or waiting, or its answer is not handled yet."""
        return self._in_flight is not None or bool(self._waiting)

    def call(self, fn: Callable[[], Any], done: Callable[[Any], None], what: str, *, direct: bool = False) -> None:
        """Make the engine call `fn` after the ones already made; `done(answer)` runs on the UI thread.
        `direct`: see `Call.direct`."""
        if self._closed:
            return
        self._waiting.append(Call(fn, done, what, direct))
        self._next()

    def _next(self) -> None:
        if self._in_flight is not None or not self._waiting or self._closed:
            return
        call = self._in_flight = self._waiting.popleft()
        if call.direct and self.engine.submit(lambda: self._run(call), lambda result: self._post(call, result)):
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="dynadbg-engine-calls", daemon=True)
            self._thread.start()
        self._queue.put(call)

    def _serve(self) -> None:
        """The client's thread: make each call put on the queue, until `close` puts None."""
        while (call := self._queue.get()) is not None:
            self._make(call)

    def _make(self, call: Call) -> None:
        """On the client's thread: the engine call, then its answer posted to the app."""
        self._post(call, self._run(call))

    @staticmethod
    def _run(call: Call) -> Any:
        """The engine call (on the client's thread, or the program's for a direct call); an exception is answered
        as an internal error."""
        try:
            return call.fn()
        except Exception as exc:  # noqa: BLE001 - an engine bug must not kill the UI
            return EngineError(f"internal error in {call.what}: {type(exc).__name__}: {exc}", ErrorKind.INTERNAL)

    def _post(self, call: Call, result: Any) -> None:
        """The answer to the app (thread-safe: `MessagePump.post_message`)."""
        if not self.app.post_message(self.Answered(call, result)):
            self._in_flight = None  # the app is closing: nobody handles it

    def answered(self, event: Answered) -> None:
        """Handle an answer on the UI thread (the app forwards `Answered` here), then make the next call."""
        if event.call is self._in_flight:
            self._in_flight = None
        try:
            if not self._closed:
                event.call.done(event.result)
        finally:
            self._next()
            if not self.busy and self.on_idle is not None and not self._closed:
                self.on_idle()

    def close(self) -> None:
        """Make no further calls (the app is going away); calls waiting are dropped."""
        self._closed = True
        self._waiting.clear()
        self._queue.put(None)  # the thread ends after the call it is making, if any

    # Calls that never wait their turn -------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Ask the engine to stop the running program at its next generated instruction (returns at once)."""
        try:
            self.engine.interrupt()
        except Exception:  # noqa: BLE001 - best effort
            pass

    def quit(self, timeout: float) -> None:
        """End the program (`Session.quit` returns at once) and wait up to `timeout` seconds for its end in a
        thread worker, then post `Ended` to the app. Calls still waiting are dropped."""
        engine = self.engine

        def end() -> None:
            result = None
            try:
                engine.quit()
                result = engine.wait(timeout=timeout)
            except Exception:  # noqa: BLE001 - the app exits regardless
                pass
            self.app.post_message(self.Ended(result))

        self.close()
        self.app.run_worker(end, name="quit", group="quit", thread=True, exit_on_error=False)

    class Ended(Message):
        """`quit` returned: the program ended, or the wait for it gave up."""

        def __init__(self, result: ExitResult | None) -> None:
            self.result = result
            """The program's exit result, if it arrived in time."""
            super().__init__()
