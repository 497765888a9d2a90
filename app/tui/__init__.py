"""The Textual front end.

Entry point: ``dynadbg.tui.app.run_tui(start, break_on=..., keymap=None) -> int`` (what ``dynadbg run`` calls when
stdout is a terminal). The app itself is ``dynadbg.tui.app.DebuggerApp(session_factory, start)``; the action
registry (keys, footer, help, command palette) is ``dynadbg.tui.actions``; every engine call goes through
``dynadbg.tui.engine_client.EngineClient`` (one daemon thread, one call at a time).
"""

from __future__ import annotations
