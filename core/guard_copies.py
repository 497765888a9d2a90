"""The session's toolkit copies of cache entries that guard edits are made on (`guard_edits.GuardEditor` keeps
the edits and their commands; this module makes and swaps the copies that carry them).

A guard edit in a frame of generated code is made on a toolkit copy of the entry serving it (`toolkit.Entry.copy`,
installed with ``replace``), or, where an instruction edit's copy runs the frame (`patches._Precompiled`), on a
copy of that copy swapped into its place in front of the cache entries (`PatchManager.swap_front`). At a compile
stop the entry being built gets the copy's guard manager instead. Each later edit or undo swaps in a new copy with
the edits still active (`toolkit.Handle.swap`); with none left the copy goes and the entry it replaced serves again.
"""

from __future__ import annotations

import builtins
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from .guard_filter import FilterRule
from .model import DropWarning, EditError, EditOutcome, GuardEditKind, GuardEditView

if TYPE_CHECKING:
    from .patches import PatchManager
    from .state import PauseContext

__all__ = ["AddedGuard", "EntryCopies", "EntryCopy", "GuardEdit", "apply_edits", "copy_text", "refused"]


def apply_edits(draft: Any, edits_: "list[GuardEdit]") -> None:
    """Make the guard operations of `edits_` on the toolkit `Draft` `draft` (raises `toolkit.ToolkitError`)."""
    for e in edits_:
        if e.op[0] == "add":
            draft.add_guard(e.op[1], e.op[2], like=e.op[3])
        elif e.op[0] == "lambda":
            draft.add_lambda_guard(e.op[2], f"DEBUGGER: {e.op[1]}")
        else:
            draft.drop_guard(e.op[1], e.op[2])


def copy_text(copy: "EntryCopy") -> str:
    """Where a guard edit in a frame went, and what a call the copy rejects does then."""
    if copy.front is not None:
        return (f"on copy {copy.handle.compile_id} of the instruction edit's copy, in its place in front of the "
                f"cache entries from the next call (a call the copy rejects runs Dynamo's entry without the edit "
                f"when that accepts it, else recompiles)")
    return (f"on copy {copy.handle.compile_id} of the entry, which replaces it from the next call (a call the copy "
            f"rejects recompiles)")


def refused(kind: str, message: str) -> EditOutcome:
    """A guard command that changed nothing: `message` says why (`EditError.kind` what sort of refusal)."""
    return EditOutcome(EditError(kind, message))


class AddedGuard:
    """The callable torch runs as an added lambda guard: ``EXPR`` over ``L`` and ``G``; False once switched
    off is never returned (it passes); an exception counts as False (a miss), as torch itself treats it."""

    __slots__ = ("code", "g", "active")

    def __init__(self, code: CodeType, g: dict[str, Any]) -> None:
        self.code = code
        self.g = g
        self.active = True

    def __call__(self, f_locals: dict[str, Any]) -> bool:
        if not self.active:
            return True
        try:
            return bool(eval(self.code, {"__builtins__": builtins, "L": f_locals, "G": self.g}))  # noqa: S307
        except Exception:  # noqa: BLE001 - a guard that cannot be evaluated rejects the entry
            return False


class EntryCopy:
    """A toolkit copy the session installed in place of one Dynamo entry: that entry (`toolkit.Entry`), the
    copy's handle (a new one after each edit or undo: `toolkit.Handle.swap`) and the edits it carries. Or, with
    `front`, the copy an instruction edit installed in front of the cache entries (`patches._Precompiled`, which
    holds the current handle) that the guard edits were made on."""

    __slots__ = ("base", "handle", "edits", "exprs", "front")

    def __init__(self, base: Any, handle: Any, front: Any = None) -> None:
        self.base = base
        self.handle = handle
        self.edits: list[GuardEdit] = []
        self.exprs: list[GuardEdit] = []     # expression guards added on the copy's live tree (kept by a swap)
        self.front = front


class GuardEdit:
    __slots__ = ("number", "kind", "code_name", "compile_id", "text", "rule", "source", "guard_type", "warning",
                 "guard", "event", "old_manager", "active", "original", "dynamo", "copy", "wrapper",
                 "known", "op")

    def __init__(self, number: int, kind: GuardEditKind, code_name: str, compile_id: str | None, text: str) -> None:
        self.number = number
        self.kind = kind
        self.code_name = code_name
        self.compile_id = compile_id
        self.text = text
        self.rule: FilterRule | None = None
        self.source: str | None = None           # a drop's guarded source (``"L['n']"``, ``"L"`` at the root)
        self.guard_type = "LAMBDA_GUARD"
        self.warning: DropWarning | None = None
        self.guard: AddedGuard | None = None
        self.event: Any = None          # the CompileEvent a drop replaced the guard manager of
        self.old_manager: Any = None    # ... and the manager it had
        self.active = True
        self.original: CodeType | None = None   # the code object it was made for (patch files key on it)
        self.dynamo: CodeType | None = None     # ... and Dynamo's code of the entry it was made on
        self.copy: EntryCopy | None = None  # the session's copy of the entry that carries it, in a frame
        #: how to redo it: ("add", source, type, like), ("lambda", expression, guard callable), ("drop", source, type)
        self.op: tuple[Any, ...] = ()
        self.wrapper: Any = None        # the guard manager a compile stop's entry was built with instead
        self.known: set[int] = set()    # a drop's copy: ids of the guard managers of the entries there were

    def view(self) -> GuardEditView:
        return GuardEditView(
            self.number, self.kind, self.code_name, self.compile_id, self.text,
            source=self.source, guard_type=self.guard_type, warning=self.warning, active=self.active,
            copy_id=self.copy.handle.compile_id if self.copy is not None else None,
        )



class EntryCopies:
    """The toolkit copies one `GuardEditor` made (worker thread only), and how they are drafted, put in, swapped
    and taken out. `PatchManager` calls `apply_front`, `front_moved` and `front_gone` when an instruction edit's
    copy that guard edits were made on is replaced or removed.

    Args:
        patches: the session's `patches.PatchManager` (its copies in front of the cache entries).
    """

    def __init__(self, patches: "Callable[[], PatchManager]") -> None:
        self._patches = patches
        self.items: list[EntryCopy] = []

    def copyable(self, ctx: "PauseContext", where: tuple[Any, ...]) -> bool:
        """Whether this stop's entry can be copied by the toolkit: a compile stop, or a frame that a cache entry
        (or the session's copy of one) runs; not a frame run by an instruction edit's precompile entry."""
        from . import toolkit

        if ctx.compile_event is not None:
            return True
        assert ctx.frame is not None  # `where` without a compile event comes from a frame stop (`_where`)
        if self._patches().front_copy(ctx.frame.frame.f_code) is not None:
            return True      # the instruction edit's copy that runs the frame: edited in place (`Handle.swap`)
        if len(where[4]) > 1:
            return False     # an instruction edit's precompile entry shadows the entry: a copy would not decide
        assert ctx.frame is not None  # `where` without a compile event comes from a frame stop (`_where`)
        code = ctx.frame.frame.f_code
        return self.copy_of(code) is not None or toolkit.entry_serving(where[0], code, where[3]) is not None

    def copy_of(self, code: CodeType) -> "EntryCopy | None":
        """The session's copy (in place of an entry, or an instruction edit's copy that guard edits were made on)
        that runs `code`, if there is one."""
        front = self._patches().front_copy(code)
        if front is not None:
            return next((c for c in self.items if c.front is front), None)
        return next((c for c in self.items if not c.handle.record.removed and c.handle.record.built.code is code),
                    None)

    def draft(self, ctx: "PauseContext", where: tuple[Any, ...], edits_: list[GuardEdit]) -> Any:
        """A toolkit `Draft` of the entry serving this frame (the Dynamo entry a session copy stands in for) or
        of the compile being built, with this call's inputs as the live objects guards are built from and the
        operations of `edits_` applied; an `EditOutcome` refusal when it cannot be made."""
        from . import toolkit

        original, compile_id, f_locals, f_globals, _managers, event = where
        copy = None
        entry: toolkit.Entry | None
        front = (self._patches().front_copy(ctx.frame.frame.f_code)
                 if event is None and ctx.frame is not None and ctx.frame.frame is not None else None)
        if front is not None:
            return self.front_draft(front, f_locals, edits_)
        if event is not None:
            entry = toolkit.compile_entry(original, event.dynamo_code, event.guard_manager, event.compile_id,
                                          f_globals)
        else:
            assert ctx.frame is not None  # `where` without a compile event comes from a frame stop (`_where`)
            code = ctx.frame.frame.f_code
            copy = self.copy_of(code)
            entry = copy.base if copy is not None else toolkit.entry_serving(original, code, f_globals)
            if entry is None and len(where[4]) <= 1:
                return refused("not here", f"no live cache entry of {original.co_name} runs {code.co_name} (it was "
                                            f"invalidated): nothing to copy")
            if entry is None or len(where[4]) > 1:
                return refused("not here", f"an instruction edit's precompile entry runs {code.co_name} in front of "
                                            f"the cache entries of {original.co_name} {compile_id}: a leaf guard "
                                            f"goes on a copy of a cache entry (`undo` the edit first, or add an "
                                            f"expression guard over L and G)")
        try:
            draft = entry.copy()
            draft.call_inputs = dict(f_locals)
            for e in copy.exprs if copy is not None else ():
                if e.guard is not None and e.guard.active:
                    draft.add_lambda_guard(e.guard, f"DEBUGGER: {e.text}")
            apply_edits(draft, edits_)
        except toolkit.ToolkitError as exc:
            return refused("rejected", f"{exc} (nothing changed)")
        return draft

    def front_draft(self, front: Any, f_locals: dict[str, Any] | None, edits_: list[GuardEdit]) -> Any:
        """A draft of the cache entry the instruction edit's copy `front` (`patches._Precompiled`) was made from,
        with the patch's instruction edits and the operations of `edits_`; an `EditOutcome` refusal."""
        from . import toolkit

        try:
            draft = front.handle.record.draft.entry.copy()
            draft.call_inputs = dict(f_locals) if f_locals else front.handle.record.draft.call_inputs
            draft.edit_ops = list(front.patch.ops)
            apply_edits(draft, edits_)
        except toolkit.ToolkitError as exc:
            return refused("rejected", f"{exc} (nothing changed)")
        return draft

    # -- the instruction edits' copies (`patches.PatchManager` calls these) ----------------------------------

    def apply_front(self, old: Any, draft: Any) -> None:
        """Make the active guard edits made on the instruction edit's copy `old` on `draft` (the copy a later
        instruction edit installs in its place).

        Raises:
            toolkit.ToolkitError: an edit cannot be made on the new copy."""
        copy = next((c for c in self.items if c.front is old), None)
        if copy is not None:
            apply_edits(draft, [e for e in copy.edits if e.active])

    def front_moved(self, old: Any, new: Any) -> None:
        """A later instruction edit put the copy `new` (made with `apply_front`) in place of `old`."""
        for copy in self.items:
            if copy.front is old:
                copy.front, copy.handle = new, new.handle

    def front_gone(self, old: Any) -> list[int]:
        """The instruction edit's copy `old` was taken out with no successor (`patch undo`): the guard edits made
        on it go with it. Returns their numbers (``guard`` lists them, inactive)."""
        gone: list[int] = []
        for copy in [c for c in self.items if c.front is old]:
            self.items.remove(copy)
            for e in copy.edits:
                if e.active:
                    e.active = False
                    gone.append(e.number)
        return gone

    def put_in(self, ctx: "PauseContext", where: tuple[Any, ...], edit: GuardEdit, *, allow_baked: bool) -> Any:
        """Make the copy with `edit` (and the session's earlier edits of that entry), validate it and put it in:
        in a frame, a toolkit copy installed in place of the entry (``replace``: from the next call that it
        accepts; a call it rejects recompiles; a later edit swaps in a new copy); at a compile stop, the entry
        being built gets the copy's guard manager. A drop of a guard on a value Dynamo specialised on is made
        when `allow_baked` (the drop's warning says so); any other problem refuses, with the toolkit's reason.
        Returns the refusal (an `EditOutcome`), or the copy's `toolkit_model.Validation`."""
        from . import toolkit
        from .format.toolkit import problem_text

        event = ctx.compile_event
        copy = self.copy_of(ctx.frame.frame.f_code) if event is None and ctx.frame is not None else None
        before = [e for e in copy.edits if e.active] if copy is not None else []
        draft = self.draft(ctx, where, before + [edit])
        if isinstance(draft, EditOutcome):
            return draft
        try:
            if event is not None:
                _code, wrapper, validation = draft.build(code=event.dynamo_code, guard_manager=event.guard_manager,
                                                         f_locals=draft.call_inputs, f_globals=where[3])
            else:
                validation = draft.validate()
        except toolkit.ToolkitError as exc:
            return refused("rejected", f"{exc} (nothing changed)")
        blocking = [p for p in validation.problems if not (allow_baked and p.kind.value == "baked value")]
        if blocking:
            reasons = "; ".join(problem_text(p) for p in blocking)
            return refused("rejected", f"the copy of {edit.code_name} {edit.compile_id} is refused: {reasons} "
                                        f"(nothing changed)")
        if event is not None:
            edit.event, edit.old_manager, edit.wrapper = event, event.guard_manager, wrapper
            event.guard_manager = wrapper
            return validation
        front = self._patches().front_copy(ctx.frame.frame.f_code) if ctx.frame is not None else None
        try:
            if front is not None:
                # the instruction edit's copy that runs this frame: a copy with the same code edits and this
                # guard change takes its place in front of the cache entries
                self._patches().swap_front(front, draft, force=bool(validation.problems))
                if copy is None:
                    copy = EntryCopy(draft.entry, front.handle, front)
                    self.items.append(copy)
                copy.handle = front.handle
            elif copy is None:
                copy = EntryCopy(draft.entry, draft.install("replace", force=bool(validation.problems)))
                self.items.append(copy)
            else:
                copy.handle = copy.handle.swap(draft, force=bool(validation.problems))
        except toolkit.ToolkitError as exc:
            return refused("unsupported", f"cannot install the copy: {exc} (nothing changed)")
        edit.copy = copy
        copy.edits.append(edit)
        return validation

    def undo_in_copy(self, ctx: "PauseContext", edit: GuardEdit) -> str:
        """Take `edit` out of its copy: with no other active edit the copy is removed (the entry it replaced
        serves again from its next call), else a copy with the others is swapped in."""
        copy = edit.copy
        assert copy is not None
        rest = [e for e in copy.edits if e.active]
        if copy.front is not None:
            return self.undo_in_front(ctx, copy, rest)
        if not rest:
            copy.handle.remove()
            return (f"copy {copy.handle.compile_id} is taken out and entry {copy.base.compile_id} serves again from "
                    f"the next call that it accepts")
        old = copy.handle.compile_id
        inputs = (dict(ctx.frame.inputs or ctx.frame.frame.f_locals)
                  if ctx.frame is not None and ctx.frame.frame is not None else {})
        where: tuple[Any, ...] = (copy.base.original, copy.base.compile_id, inputs, copy.base.target.f_globals,
                                  [], None)
        draft = self.draft(ctx, where, rest) if ctx.compile_event is None else None
        if not isinstance(draft, EditOutcome) and draft is not None:
            from . import toolkit

            try:
                problems = draft.validate().problems
                if all(p.kind.value == "baked value" for p in problems):   # the drops already warned of those
                    copy.handle = copy.handle.swap(draft, force=bool(problems))
                    return f"copy {old} is swapped for copy {copy.handle.compile_id}, which has the other edits"
            except toolkit.ToolkitError:
                pass
        copy.handle.remove()
        for e in rest:
            e.active = False
        return (f"copy {old} is taken out with edits {', '.join(str(e.number) for e in rest)} (they could not be "
                f"rebuilt here); entry {copy.base.compile_id} serves again from the next call that it accepts")

    def undo_in_front(self, ctx: "PauseContext", copy: EntryCopy, rest: list[GuardEdit]) -> str:
        """Take an edit out of the instruction edit's copy it was made on: a copy with the patch's code edits and
        the other guard edits (`rest`) is swapped in; when that cannot be built, one with none of them."""
        from . import toolkit

        old = copy.handle.compile_id
        inputs = (dict(ctx.frame.inputs or ctx.frame.frame.f_locals)
                  if ctx.frame is not None and ctx.frame.frame is not None else None)
        draft = self.front_draft(copy.front, inputs, rest)
        others = "the other guard edits" if rest else "no guard edits"
        try:
            if isinstance(draft, EditOutcome):
                raise toolkit.ToolkitError(draft.message)
            self._patches().swap_front(copy.front, draft)
        except toolkit.ToolkitError:
            plain = self.front_draft(copy.front, inputs, [])
            try:
                if isinstance(plain, EditOutcome):
                    raise toolkit.ToolkitError(plain.message) from None
                self._patches().swap_front(copy.front, plain, force=True)
            except toolkit.ToolkitError as exc:
                return f"the edit's copy {old} could not be rebuilt without it ({exc}); it keeps serving as it is"
            for e in rest:
                e.active = False
            rest, others = [], "no guard edits (the others could not be rebuilt here and are undone too)"
        copy.handle = copy.front.handle
        if not rest:
            self.items.remove(copy)
        return (f"the edit's copy {old} is swapped for copy {copy.handle.compile_id}, with the patch's code edits "
                f"and {others}")
