"""Guard edits: add a guard to a live cache entry, drop guards from one code object, export the drops as a
``guard_filter_fn``, undo each (docs/torch-internals.md §3, §11).

* ``guard add EXPR`` — a Python expression over ``L`` (the frame's f_locals dict, free variables included) and
  ``G`` (its globals). It must compile and evaluate without error on this call's inputs. It becomes a root lambda
  guard (``RootGuardManager.add_lambda_guard``) of the cache entry serving the frame (or being built, at a compile
  stop), and of the precompile entry in front of it when an instruction edit installed one: a later call whose
  inputs make it False (or raise) misses that entry, and Dynamo compiles a new one without it.
* ``guard drop ID`` — a leaf id (``g6``) from the ``guards`` output. The code object's next compiles leave that
  guard out: a patched ``CheckFunctionManager`` filters the ``GuardFilterEntry`` objects whose source and type
  match (``compat.install_guard_filter``). In a frame the code object is reset (``reset_code``) so it
  recompiles on its next call; at a compile stop the entry being built gets a copy of its guard tree without that
  guard's manager (``clone_manager``), so it applies from the next call with no recompile.
* ``guard export`` — Python source of a ``guard_filter_fn`` that drops the same guards, for
  ``torch.compile(..., options={"guard_filter_fn": ...})``.
* ``guard undo`` — undo the last edit (or a numbered one, or all): an added guard is switched off (torch keeps
  the leaf; it then always passes); a dropped guard comes back on the next compile.

Dropping a guard on a value Dynamo specialised on (``EQUALS_MATCH``/``CONSTANT_MATCH`` on an int, a
``TENSOR_MATCH``'s shapes) lets calls with other values reuse code that baked the old value in: results can be
silently wrong. Every drop says so (`EditOutcome.warning`).

At session teardown every added guard is switched off, the filter patch removed, and every code object with a
dropped guard reset, so the next session in the process starts with Dynamo's own guards.
"""

from __future__ import annotations

import builtins
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from . import compat, facts
from .guard_filter import FilterRule, GuardFilter, Scope, drop_warning, export_guard_filter
from .model import DropWarning, EditError, EditOutcome, GuardEditKind, GuardEditView, GuardRef

if TYPE_CHECKING:
    from .patches import PatchManager
    from .protocol import Host
    from .state import PauseContext

__all__ = ["GuardEditView", "GuardEditor", "export_guard_filter"]


def _refused(kind: str, message: str) -> EditOutcome:
    """A guard command that changed nothing: `message` says why (`EditError.kind` what sort of refusal)."""
    return EditOutcome(EditError(kind, message))


class _AddedGuard:
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


class _Edit:
    __slots__ = ("number", "kind", "code_name", "compile_id", "text", "rule", "source", "guard_type", "warning",
                 "guard", "event", "old_manager", "active", "original", "dynamo")

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
        self.guard: _AddedGuard | None = None
        self.event: Any = None          # the CompileEvent a drop replaced the guard manager of
        self.old_manager: Any = None    # ... and the manager it had
        self.active = True
        self.original: CodeType | None = None   # the code object it was made for (patch files key on it)
        self.dynamo: CodeType | None = None     # ... and Dynamo's code of the entry it was made on

    def view(self) -> GuardEditView:
        return GuardEditView(
            self.number, self.kind, self.code_name, self.compile_id, self.text,
            source=self.source, guard_type=self.guard_type, warning=self.warning, active=self.active,
        )


class GuardEditor:
    """The guard edits of one `Session` (worker thread only). One per session (`Session.guard_editor`).

    Args:
        session: what the editor may use of the session (`protocol.Host`).
        patches: the session's `patches.PatchManager` (edited code runs from its precompile entries, whose guard
            managers get the same edits).
        guard_filter: the session's one guard filter (drops are its `Scope.EVERY_COMPILE` rules).
    """

    def __init__(self, session: "Host", patches: "Callable[[], PatchManager]", guard_filter: GuardFilter) -> None:
        self.session = session
        self._patches = patches
        self._filter = guard_filter
        self.active = True
        self._edits: list[_Edit] = []
        self._reset_at_end: dict[int, CodeType] = {}
        session.teardown_hooks.append(self._teardown)

    # -- queries -----------------------------------------------------------------------------------------------

    def edits(self) -> list[GuardEditView]:
        return [e.view() for e in self._edits]

    def _dynamo_code(self, ctx: "PauseContext", event: Any) -> CodeType | None:
        if event is not None:
            return event.dynamo_code
        st = ctx.frame
        return self._patches().dynamo_code_of(st.frame.f_code) if st is not None and st.frame is not None else None

    def patch_ops(self) -> list[tuple[CodeType, CodeType | None, Any]]:
        """The active guard edits as patch-file operations (`toolkit_model.GuardOp`), each with the code object
        it was made for and Dynamo's code of that entry (None when unknown): a drop by source and leaf type, an
        add as its expression over ``L`` and ``G`` (rebuilt
        when the patch is replayed). A root guard's drop (source ``L``) is left out: it is a filter on the next
        compiles, not an edit of a built tree."""
        from .toolkit_model import GuardOp, GuardOpKind

        out: list[tuple[CodeType, CodeType | None, Any]] = []
        for e in self._edits:
            if not e.active or e.original is None:
                continue
            if e.kind == "drop" and e.source and e.source != "L":
                out.append((e.original, e.dynamo, GuardOp(GuardOpKind.DROP, e.source, e.guard_type)))
            elif e.kind == "add":
                out.append((e.original, e.dynamo, GuardOp(GuardOpKind.EXPR, "L", description=e.text)))
        return out

    def export(self) -> str:
        """`guard_filter.export_guard_filter` of every drop of the session (``guard drop`` and ``drop``)."""
        return export_guard_filter(self._filter.exportable())

    # -- the current entry -------------------------------------------------------------------------------------

    def _where(self, ctx: "PauseContext") -> tuple[Any, ...] | str:
        """(original code, compile id, f_locals, f_globals, guard managers, compile event or None) of this stop."""
        ev = ctx.compile_event
        if ev is not None:
            scope = compat.compile_frame_scope()
            if scope is None:
                return "this call's inputs are not visible at this compile stop"
            f_locals, f_globals = scope
            return ev.original_code, str(ev.compile_id), f_locals, f_globals, [ev.guard_manager], ev
        st = ctx.frame
        if st is None or st.frame is None:
            return f"guard edits need a compile stop or a frame of generated code, not a {ctx.kind.value} stop"
        code = st.frame.f_code
        info = self.session.generated_info(code)
        if info is None:
            return f"{code.co_name} is not generated code the debugger recorded"
        original, compile_id = info.original, str(info.compile_id)
        entry_manager = None
        for entry in compat.cache_entries(original):
            if entry.code is code:
                entry_manager = entry.guard_manager
                break
        managers = self._patches().guard_managers_for(code, entry_manager)
        if not managers:
            return f"no cache entry of {original.co_name} runs {code.co_name} any more"
        f_locals = st.inputs if st.inputs else dict(st.frame.f_locals)
        return original, compile_id, f_locals, st.frame.f_globals, managers, None

    # -- add -----------------------------------------------------------------------------------------------------

    def add(self, ctx: "PauseContext", expr: str) -> EditOutcome:
        """Add ``EXPR`` (over ``L`` and ``G``) as a guard of the entry serving this frame or being compiled."""
        expr = expr.strip()
        if not expr:
            return _refused("usage", "usage: guard add EXPR  (over L, the frame's locals dict, and G, its globals)")
        where = self._where(ctx)
        if isinstance(where, str):
            return _refused("not here", where)
        original, compile_id, f_locals, f_globals, managers, event = where
        try:
            code = compile(expr, "<guard add>", "eval")
        except SyntaxError as exc:
            return _refused("syntax", f"syntax error in the guard: {exc.msg} (nothing added)")
        try:
            value = bool(eval(code, {"__builtins__": builtins, "L": f_locals, "G": f_globals}))  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - the user's own expression
            hint = " (use L['name'] for a local, G['name'] for a global)" if isinstance(exc, NameError) else ""
            return _refused("eval", f"{type(exc).__name__}: {exc}{hint} on this call's inputs (nothing added)")
        guard = _AddedGuard(code, f_globals)
        parts = [f"DEBUGGER: {expr}"]
        try:
            for manager in managers:
                compat.add_lambda_guard(manager, guard, parts)
        except Exception as exc:  # noqa: BLE001 - this torch lacks the API
            guard.active = False
            return _refused("unsupported", f"cannot add a guard here: {type(exc).__name__}: {exc}")
        edit = _Edit(len(self._edits) + 1, GuardEditKind.ADD, original.co_name, compile_id, expr)
        edit.guard = guard
        edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
        self._patches().note_guard_editor(self)
        self._edits.append(edit)
        when = "from the next call" if event is None else "from the next call (this call runs it regardless)"
        note = "" if value else ("; it is False for this call's inputs: the next call with the same inputs "
                                 "recompiles")
        return EditOutcome(message=f"guard {edit.number} added to {original.co_name} {compile_id}, in effect "
                                        f"{when}: {expr}{note}", edit=edit.view())

    # -- drop ----------------------------------------------------------------------------------------------------

    def drop(self, ctx: "PauseContext", leaf_id: str) -> EditOutcome:
        """Leave the guard `leaf_id` (from ``guards``) out of this code object's compiles (see the module doc)."""
        leaf_id = leaf_id.strip()
        if not leaf_id:
            return _refused("usage", "usage: guard drop ID  (a leaf id such as g6 from `guards`)")
        where = self._where(ctx)
        if isinstance(where, str):
            return _refused("not here", where)
        original, compile_id, f_locals, _g, managers, event = where
        from . import guards

        tree = guards.build_guard_tree(managers[0], compile_id)
        leaf = next((lf for lf in guards.iter_leaves(tree) if lf.id == leaf_id), None)
        if leaf is None:
            return _refused("not here", f"no guard {leaf_id} in the guards of {original.co_name} {compile_id} "
                                    f"(`guards` lists them)")
        if leaf.relational or leaf.epilogue:
            kind = "relational" if leaf.relational else "epilogue (symbolic-shape)"
            return _refused("rejected", f"{leaf_id} is a {kind} guard: it cannot be dropped on its own")
        if leaf.guard_type == "LAMBDA_GUARD" and any(c.startswith("DEBUGGER:") for c in leaf.code):
            return _refused("rejected", f"{leaf_id} is a guard added with `guard add`: use `guard undo` instead")
        types = facts.filter_types(leaf.guard_type, leaf.source, leaf.code)
        if types is None:
            from .decisions import no_filter_reason

            return _refused("rejected", no_filter_reason(leaf))
        code_text = "; ".join(leaf.code)
        warning = drop_warning(GuardRef.of(leaf, compile_id), leaf.expected)
        match_source = "" if leaf.source == "L" else leaf.source   # ambient root guards have an empty name
        rule = FilterRule(original, match_source, frozenset(types), Scope.EVERY_COMPILE,
                          name=compat.strip_local_scope(leaf.source), label=code_text, warning=warning,
                          guard=warning.guard)
        edit = _Edit(len(self._edits) + 1, GuardEditKind.DROP, original.co_name, compile_id, code_text)
        edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
        self._patches().note_guard_editor(self)
        edit.rule, edit.source, edit.guard_type, edit.warning = rule, leaf.source, leaf.guard_type, warning
        self._filter.add(rule)
        self._reset_at_end[id(original)] = original
        if event is not None:
            message = self._drop_now(event, edit, tree, leaf)
        else:
            self._reset(original)
            message = (f"dropped {leaf_id} {leaf.guard_type} {code_text} from {original.co_name}: its cache entries "
                       f"were reset, so its next call compiles without that guard")
        self._edits.append(edit)
        return EditOutcome(message=message, warning=warning, edit=edit.view())

    def _drop_now(self, event: Any, edit: _Edit, tree: Any, leaf: Any) -> str:
        """At a compile stop: give the entry being built a copy of its guard tree without the leaf's manager."""
        source = leaf.source
        base = (f"dropped {leaf.id} {leaf.guard_type} {edit.text} from {event.original_code.co_name}: later "
                f"compiles of it leave it out")
        if source == "L":
            return base + "; this entry keeps it (a root guard cannot be cut from a built tree)"
        from . import guards

        node = next((n for _d, n in guards.iter_managers(tree) if n.source == source), None)
        others = []
        if node is not None:
            others = [f"{lf.id} {lf.guard_type}" for lf in node.leaves if lf.id != leaf.id]
            if node.children:
                others.append(f"{len(node.children)} guard manager(s) below {source}")
        try:
            clone = compat.clone_guard_manager(event.guard_manager, lambda m: m.get_source() != source)
        except Exception as exc:  # noqa: BLE001
            return base + f"; this entry keeps it (cannot copy its guards: {type(exc).__name__}: {exc})"
        edit.event, edit.old_manager = event, event.guard_manager
        event.guard_manager = clone
        also = f" (with the rest of its manager: {', '.join(others)})" if others else ""
        return base + f"; this entry is built without it{also}: in effect from the next call"

    # -- undo ----------------------------------------------------------------------------------------------------

    def undo(self, ctx: "PauseContext", which: str = "") -> EditOutcome:
        """Undo the last active guard edit, edit number `which`, or ``"all"``."""
        active = [e for e in self._edits if e.active]
        if not active:
            return _refused("not here", "no guard edits to undo")
        which = which.strip()
        if which == "all":
            targets = list(reversed(active))
        elif which:
            try:
                number = int(which)
            except ValueError:
                return _refused("usage", "usage: guard undo [N|all]")
            found = [e for e in active if e.number == number]
            if not found:
                return _refused("not here", f"no active guard edit {number} (`guard` lists them)")
            targets = found
        else:
            targets = [active[-1]]
        lines = [self._undo_one(ctx, e) for e in targets]
        return EditOutcome(message="\n".join(lines), edit=targets[-1].view())

    def _undo_one(self, ctx: "PauseContext", edit: _Edit) -> str:
        edit.active = False
        if edit.guard is not None:
            edit.guard.active = False
            return (f"guard {edit.number} ({edit.text}) switched off: torch keeps the leaf, which now always "
                    f"passes")
        rule = edit.rule
        assert rule is not None
        self._filter.remove(rule)
        if edit.event is not None and ctx.compile_event is edit.event:
            edit.event.guard_manager = edit.old_manager
            return f"guard {edit.text} restored in compile {edit.compile_id} (it was still being built)"
        self._reset(rule.original)
        return (f"guard {edit.text} comes back: {rule.original.co_name}'s cache entries were reset, its next call "
                f"compiles with it")

    # -- torch state -------------------------------------------------------------------------------------------

    def _reset(self, original: CodeType) -> None:
        compat.reset_code(original)
        self._patches().on_reset(original)

    def _teardown(self) -> None:
        self.active = False
        for edit in self._edits:
            if edit.guard is not None:
                edit.guard.active = False
        for original in self._reset_at_end.values():
            try:
                compat.reset_code(original)
            except Exception as exc:  # noqa: BLE001
                self._say(f"could not reset {original.co_name}: {exc}")
        self._reset_at_end.clear()

    def _say(self, text: str) -> None:
        self.session.message(text)
