"""The switchable views of the left pane (keys ``1``-``8``), named by one enum instead of string ids."""

from __future__ import annotations

from enum import Enum


class View(Enum):
    """One view of the left pane. The value is the part its tab pane id (``tab-orig``) and its registry action
    (``view_orig``) share."""

    BYTECODE = "bytecode"
    """The generated code of the selected frame (the stop itself)."""
    ORIGINAL = "orig"
    """The function's own bytecode (`Engine.original_code`)."""
    GRAPH = "graph"
    """The FX graphs of the entry (`Engine.graphs`)."""
    ENTRIES = "entries"
    """The code object's cache entries (`Engine.entries`, with `Engine.compiles` for resume-function names)."""
    STOP = "stop"
    """Why the program stopped (the stop itself; `Engine.compiles` in a resume function)."""
    DIFF = "diff"
    """The instruction edits (`Engine.patch_diff`)."""
    RECOMPILE = "recompile"
    """Why the code recompiled (`Engine.recompile_records`, `Engine.guard_diffs`)."""
    STDERR = "stderr"
    """What the program wrote to stderr (captured by the app)."""
    TRACE = "trace"
    """A trace stop inside Dynamo's tracing (the stop itself: `Stop.trace`)."""

    @property
    def pane_id(self) -> str:
        """The id of its `TabPane` (``"tab-orig"``)."""
        return f"tab-{self.value}"

    @property
    def action(self) -> str:
        """The registry action that opens it (``"view_orig"``)."""
        return f"view_{self.value}"

    @classmethod
    def of_pane(cls, pane_id: str | None) -> View | None:
        """The view whose tab pane is `pane_id`, or None."""
        if pane_id and pane_id.startswith("tab-"):
            try:
                return cls(pane_id.removeprefix("tab-"))
            except ValueError:
                return None
        return None

    @classmethod
    def of_action(cls, action_id: str) -> View | None:
        """The view the registry action `action_id` opens (``"view_graph"``), or None."""
        if action_id.startswith("view_"):
            try:
                return cls(action_id.removeprefix("view_"))
            except ValueError:
                return None
        return None
