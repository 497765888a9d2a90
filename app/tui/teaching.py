"""The teaching views' engine side in the TUI: roles in the bytecode pane, stack-slot provenance, the Explain pane.

`Teaching` is a controller the app composes (it holds the screen and the engine client, and no Textual base
class). At a live stop the roles and the provenance came with the `Stop` (`Stop.teaching`, built on the program's
thread), so it asks the engine nothing; a stop without them (a recorded one shown by ``[``/``]``) gets them from
`Engine.roles()` and `Engine.stack_provenance()` in one call. The Explain pane asks `Engine.explain(index)` for
the bytecode cursor's instruction while it is open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynadbg.core.model import CodeRoles, EngineError, Stop

if TYPE_CHECKING:
    from .engine_client import EngineClient
    from .screen import MainScreen


class Teaching:
    """Fills the teaching views (see the module docstring).

    Args:
        screen: the main screen (its bytecode, stack and Explain panes).
        client: the engine client every call goes through.
        current: the stop the app shows now (None before the first), and whether it is stopped (no resuming
            call in flight).
    """

    def __init__(self, screen: MainScreen, client: EngineClient,
                 current: Callable[[], tuple[Stop | None, bool]]) -> None:
        self._screen = screen
        self._client = client
        self._current = current
        self._explained: tuple[Any, ...] | None = None

    def at_stop(self, stop: Stop) -> None:
        """A stop is shown (or the shown stop changed): fetch what it did not bring, and the Explain pane's
        instruction when the pane is open."""
        screen = self._screen
        frame = stop.selected_frame
        self._explained = None
        if frame is None or not frame.code.generated:
            screen.show_roles(None)
            screen.show_provenance(None)
            screen.explain.show_explanation("no generated code here")
            return
        if stop.teaching is None:
            self._fetch(stop)
        self.explain_cursor()

    def _fetch(self, stop: Stop) -> None:
        frame = stop.selected_frame
        assert frame is not None
        screen, engine = self._screen, self._client.engine
        want_roles = screen.bytecode.roles_for(frame.code) is None
        want_provenance = frame.index >= 0 and bool(frame.stack)

        def call() -> Any:
            return (engine.roles() if want_roles else None,
                    engine.stack_provenance() if want_provenance else None)

        def done(result: Any) -> None:
            roles, provenance = result if isinstance(result, tuple) else (result, result)
            if self._current()[0] is not stop:
                # a later stop in the same code keeps the roles; its own provenance is on its way
                if want_roles and isinstance(roles, CodeRoles) and screen.bytecode.code is not None \
                        and roles.key == screen.bytecode.code.key:
                    screen.show_roles(roles)
                return
            if want_roles:
                screen.show_roles(roles)
            screen.show_provenance(provenance if want_provenance else None)

        self._client.call(call, done, "teaching views")

    def explain_cursor(self) -> None:
        """Fill the Explain pane for the bytecode cursor's instruction (only while the pane is open)."""
        screen = self._screen
        stop, stopped = self._current()
        if not screen.explain_shown or stop is None or not stopped:
            return
        frame = stop.selected_frame
        instr = screen.bytecode.cursor_instruction
        if frame is None or instr is None or not frame.code.generated:
            return
        key = (stop.seq, stop.selected, frame.code.key, instr.index)
        if key == self._explained:
            return
        self._explained = key
        engine, index, live = self._client.engine, instr.index, instr.index == frame.index
        recorded = stop.history is not None

        def done(result: Any) -> None:
            if self._explained == key:
                shown = result.message if isinstance(result, EngineError) else result
                screen.explain.show_explanation(shown, live=live, recorded=recorded)

        self._client.call(lambda: engine.explain(index), done, "explain")
