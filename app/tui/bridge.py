"""The engine → UI bridge: the one place where listener calls become Textual messages.

The engine calls a `Listener` on the program's worker thread. `Bridge` implements it by posting a message to the
app (`MessagePump.post_message` is thread-safe), so every widget sees engine events on the UI thread, in order.
Calls made before the app is attached (the program may stop before the first frame is painted) are buffered and
delivered by `Bridge.attach`.

`EngineSession` is what the TUI calls: the engine's typed methods (`dynadbg.core.protocol.Engine`, implemented by
`dynadbg.core.session.Session`); tests pass a fake with canned data behind the same protocol
(``tests/app/fake_engine.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.message import Message

from dynadbg.core.model import Resumed, Stop
from dynadbg.core.protocol import Engine

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from dynadbg.core.runner import ExitResult


class EngineSession(Engine, Protocol):
    """What the TUI calls on the engine: the typed `dynadbg.core.protocol.Engine`, plus waiting for the end.

    Every `Engine` method blocks until the program's worker thread handled it: call them from another thread (the TUI's
    `EngineClient` thread), never on the UI thread.
    """

    def wait(self, timeout: float | None = None) -> ExitResult | None: ...

    def submit(self, fn: Callable[[], Any], answer: Callable[[Any], None]) -> bool:
        """Queue `fn` on the paused program's thread without waiting; `answer(result)` is called there. False
        when nothing was queued (`dynadbg.core.session.Session.submit`)."""


class Bridge:
    """A `Listener` that forwards engine events to a Textual app as messages.

    Thread-safe: every method may be called from any thread.
    """

    wants_teaching = True
    """Every `Stop` carries its roles and stack provenance (`Stop.teaching`): a step is one engine round trip."""

    class Stopped(Message):
        """The program paused; it stays paused until a resuming command."""

        def __init__(self, stop: Stop) -> None:
            self.stop = stop
            """The snapshot of the stop."""
            super().__init__()

    class Running(Message):
        """The program resumed, or Dynamo is compiling (``"running"``, ``"compiling f"``)."""

        def __init__(self, text: str) -> None:
            self.text = text
            """What the program is doing, for the status line."""
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            """A newer running-state line makes an older, undelivered one pointless."""
            return isinstance(message, Bridge.Running)

    class Resuming(Message):
        """A control call, a decision or a console command let the program go on (sent before it runs on, so its
        answer is logged before the program's next output)."""

        def __init__(self, result: Resumed) -> None:
            self.result = result
            """The engine's `dynadbg.core.model.Resumed`."""
            super().__init__()

    class Info(Message):
        """An info or warning line for the console log."""

        def __init__(self, text: str) -> None:
            self.text = text
            """The line, plain text."""
            super().__init__()

    class Exited(Message):
        """The program ended (normally, by an exception, or because the user quit)."""

        def __init__(self, result: ExitResult) -> None:
            self.result = result
            """`dynadbg.core.runner.ExitResult`: status, traceback, exception, quit."""
            super().__init__()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._target: MessagePump | None = None
        self._pending: list[Message] = []

    def attach(self, target: MessagePump) -> None:
        """Deliver messages to `target` from now on, starting with those buffered so far."""
        with self._lock:
            self._target = target
            pending, self._pending = self._pending, []
        for message in pending:
            target.post_message(message)

    def detach(self) -> None:
        """Stop delivering; later calls are dropped (the app is gone)."""
        with self._lock:
            self._target = None
            self._pending = []

    def _post(self, message: Message) -> None:
        with self._lock:
            target = self._target
            if target is None:
                self._pending.append(message)
                return
        target.post_message(message)

    # Listener -------------------------------------------------------------------------------------------------

    def on_stop(self, stop: Stop) -> None:
        """The program paused at `stop`."""
        self._post(Bridge.Stopped(stop))

    def on_resumed(self, result: Resumed) -> None:
        """The program goes on after `result` (called before it runs on)."""
        self._post(Bridge.Resuming(result))

    def on_running(self, message: str) -> None:
        """The program resumed or is compiling."""
        self._post(Bridge.Running(message))

    def on_message(self, text: str) -> None:
        """An info or warning line."""
        self._post(Bridge.Info(text))

    def on_exit(self, result: ExitResult) -> None:
        """The program ended."""
        self._post(Bridge.Exited(result))

