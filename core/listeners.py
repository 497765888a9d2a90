"""A ready-made `Listener` for scripts, tests and benchmarks that drive a `Session` from their own thread.

    listener = QueueListener()
    session = Session(listener, break_on={"recompile"})
    commands = CommandLine(session)      # dynadbg.core.commands: the command language over the session
    session.start_script("prog.py", [])
    kind, payload = listener.next()      # ("stop", Stop) or ("exit", ExitResult)
    commands.execute("c")                # or a typed call: session.set_continue()

The session calls the listener on the program's worker thread; the queue hands each event to the caller's thread.
"""

from __future__ import annotations

import queue

from .model import Resumed, Stop
from .runner import ExitResult


class QueueListener:
    """A `dynadbg.core.protocol.Listener` that queues every stop and the exit and keeps the message lines.

    Attributes:
        events: ``("stop", Stop)`` and ``("exit", ExitResult)`` in the order they happened.
        messages: every `on_message` line (information and warnings), in order.
    """

    def __init__(self) -> None:
        self.events: queue.Queue[tuple[str, Stop | ExitResult]] = queue.Queue()
        self.messages: list[str] = []

    def on_stop(self, stop: Stop) -> None:
        self.events.put(("stop", stop))

    def on_running(self, message: str) -> None:
        pass

    def on_message(self, text: str) -> None:
        self.messages.append(text)

    def on_exit(self, result: ExitResult) -> None:
        self.events.put(("exit", result))

    def on_resumed(self, result: Resumed) -> None:
        pass  # the caller has the answer already: it sent the command

    def next(self, timeout: float = 120.0) -> tuple[str, Stop | ExitResult]:
        """The next event, waiting up to `timeout` seconds (`queue.Empty` after that)."""
        return self.events.get(timeout=timeout)
