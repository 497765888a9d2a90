"""Commands for live editing (issue 5): instruction edits, patch files, guard add/drop/export.

A mixin of `commands.CommandSet`: each ``do_*`` method is a command; its docstring is its help line. The work is
done by `patches.PatchManager` and `guard_edits.GuardEditor` (one per session), which front ends can also call
directly; the `CommandResult.data` of each command is the frozen result (`patches.EditOutcome`,
`patches.PatchDiff`, `guard_edits.GuardEditOutcome`, ...).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from .model import CommandResult, StopKind

if TYPE_CHECKING:
    from .session import PauseContext, Session


class EditCommands:
    """Mixed into `CommandSet` (``self.s`` is the Session, ``self.ctx`` the current PauseContext)."""

    s: "Session"
    ctx: "PauseContext"

    # -- instructions ------------------------------------------------------------------------------------------
    def do_edit(self, arg: str) -> CommandResult:
        """edit IDX OPNAME [ARG]: replace instruction IDX of this generated code (compile stop: this call; else from the next call)."""
        return self._edit("edit", arg)

    def do_insert(self, arg: str) -> CommandResult:
        """insert IDX OPNAME [ARG][; OPNAME [ARG]...]: insert instructions before IDX (jumps to IDX reach the first)."""
        return self._edit("insert", arg)

    def do_delete(self, arg: str) -> CommandResult:
        """delete IDX: remove instruction IDX of this generated code."""
        return self._edit("delete", arg)

    def _edit(self, kind: str, arg: str) -> CommandResult:
        from .patches import EditError, PatchManager, format_diff, parse_edit

        op = parse_edit(kind, arg)
        if isinstance(op, EditError):
            return CommandResult(error=str(op))
        outcome = PatchManager.of(self.s).edit(self.ctx, op)
        if outcome.error is not None:
            hint = ""
            if kind == "insert" and outcome.error.kind.startswith("stack") and len(op.instrs) == 1:
                hint = f"  (to insert several instructions at once: insert {op.index} {op.instrs[0].text}; ...)"
            return CommandResult(error=str(outcome.error) + hint, data=outcome)
        self._after_code_change()
        text = outcome.message
        if outcome.diff is not None:
            text += "\n" + format_diff(outcome.diff, context=2)
        return CommandResult(output=text, data=outcome)

    def _after_code_change(self) -> None:
        # a compile stop shows the event's code: rebuild the frozen snapshot so front ends see the edit
        if self.ctx.kind is StopKind.COMPILE:
            rebuild = getattr(self, "_rebuild_stop", None)
            if rebuild is not None:
                rebuild()

    # -- patches -----------------------------------------------------------------------------------------------
    def do_patch(self, arg: str) -> CommandResult:
        """patch show|list|save FILE|load FILE|undo [all]: the instruction edits of this code: diff, files, undo."""
        from .patches import EditError, PatchManager, format_diff

        try:
            words = shlex.split(arg)
        except ValueError as exc:
            return CommandResult(error=f"usage: patch show|list|save FILE|load FILE|undo [all] ({exc})")
        sub, rest = (words[0], words[1:]) if words else ("show", [])
        manager = PatchManager.of(self.s)
        if sub == "show" and not rest:
            diff = manager.show(self.ctx)
            if isinstance(diff, EditError):
                return CommandResult(error=str(diff))
            return CommandResult(output=format_diff(diff), data=diff)
        if sub == "list" and not rest:
            views = manager.patches()
            if not views:
                return CommandResult(output="no patches", data=views)
            lines = []
            for v in views:
                state = "pending (no compile matched yet)" if v.pending else f"applied to {', '.join(v.compile_ids) or '-'}"
                lines.append(f"{v.key.describe()}: {len(v.ops)} edit(s), {state}")
                lines.extend(f"    {op.text}" for op in v.ops)
            return CommandResult(output="\n".join(lines), data=views)
        if sub == "save" and len(rest) == 1:
            count = manager.save(rest[0])
            if isinstance(count, EditError):
                return CommandResult(error=str(count))
            return CommandResult(output=f"saved {count} patch(es) to {rest[0]}", data=count)
        if sub == "load" and len(rest) == 1:
            outcome = manager.load(self.ctx, rest[0])
            if outcome.error is not None:
                return CommandResult(error=str(outcome.error), data=outcome)
            self._after_code_change()
            text = outcome.message
            if outcome.diff is not None:
                text += "\n" + format_diff(outcome.diff, context=2)
            return CommandResult(output=text, data=outcome)
        if sub == "undo" and rest in ([], ["all"]):
            outcome = manager.undo(self.ctx, everything=bool(rest))
            if outcome.error is not None:
                return CommandResult(error=str(outcome.error), data=outcome)
            self._after_code_change()
            return CommandResult(output=outcome.message, data=outcome)
        return CommandResult(error="usage: patch show|list|save FILE|load FILE|undo [all]")

    # -- guards ------------------------------------------------------------------------------------------------
    def do_guard(self, arg: str) -> CommandResult:
        """guard add EXPR|drop ID|export|undo [N|all]: edit this entry's guards (EXPR over L and G; ID from `guards`); no argument lists the edits."""
        from .guard_edits import GuardEditor

        sub, _, rest = arg.strip().partition(" ")
        editor = GuardEditor.of(self.s)
        if not sub:
            views = editor.edits()
            return CommandResult(output="\n".join(v.line for v in views) or "no guard edits", data=views)
        if sub == "export" and not rest.strip():
            return CommandResult(output=editor.export(), data=editor.export())
        if sub in ("add", "drop", "undo"):
            outcome: Any
            if sub == "add":
                outcome = editor.add(self.ctx, rest)
            elif sub == "drop":
                outcome = editor.drop(self.ctx, rest)
            else:
                outcome = editor.undo(self.ctx, rest)
            if outcome.error is not None:
                return CommandResult(error=outcome.error, data=outcome)
            text = outcome.message + (f"\n{outcome.warning}" if outcome.warning else "")
            return CommandResult(output=text, data=outcome)
        return CommandResult(error="usage: guard add EXPR | guard drop ID | guard export | guard undo [N|all]")
