"""Guard edits: add a guard to the entry at a stop, drop guards from one code object, export the drops as a
``guard_filter_fn``, undo each (docs/torch-internals.md §3, §11).

* ``guard add EXPR`` — a Python expression over ``L`` (the frame's f_locals dict, free variables included) and
  ``G`` (its globals). It must compile and evaluate without error on this call's inputs. It becomes a root lambda
  guard (``Draft.add_lambda_guard``) of a toolkit copy of the entry serving the frame, installed in its place
  (``replace``), or of the guard manager the entry being built gets at a compile stop: a later call whose inputs
  make it False (or raise) misses that entry, and Dynamo compiles a new one without it. ``guard add SOURCE``,
  ``SOURCE TYPE``, ``SOURCE == VALUE`` and ``SOURCE is None`` add a real leaf guard the same way. In a frame that
  an instruction edit's copy runs (a toolkit copy installed in front of the cache entries, `patches`), every
  guard edit is made on that copy: a draft of the same cache entry with the patch's instruction edits and the
  guard change is swapped in its place (`PatchManager.swap_front`, `toolkit.Handle.swap`); a call it rejects
  misses it and goes on to Dynamo's entries (which run Dynamo's code, or recompile, the patch re-applying
  itself to the compile). A later instruction edit carries those guard edits to its new copy
  (`apply_front`); `patch undo` takes the copy out and they go with it (`front_gone`,
  `EditOutcome.guard_edits_gone`). In a frame that runs Dynamo's own code while such a copy stands in front of
  its entry, an expression guard is added to both live guard managers and a leaf guard is refused.
* ``guard drop ID`` — a leaf id (``g6``) from the ``guards`` output. The code object's next compiles leave that
  guard out: a patched ``CheckFunctionManager`` filters the ``GuardFilterEntry`` objects whose source and type
  match (``compat.install_guard_filter``). In a frame a copy of the entry without the leaf replaces it; at a
  compile stop the entry being built gets a copy of its guard tree without that guard's manager; a root guard's
  drop resets the code object (``reset_code``) so it recompiles on its next call.
* ``guard export`` — Python source of a ``guard_filter_fn`` that drops the same guards, for
  ``torch.compile(..., options={"guard_filter_fn": ...})``.
* ``guard undo`` — undo the last edit (or a numbered one, or all): a copy's edit is taken out (the copy goes, or
  is swapped for one with the other edits); an entry built at a compile stop with an added guard is invalidated
  (its next call recompiles); an expression guard on a live entry is switched off (torch keeps the leaf; it then
  always passes); a dropped guard comes back on the next compile.

Dropping a guard on a value Dynamo specialised on (``EQUALS_MATCH``/``CONSTANT_MATCH`` on an int, a
``TENSOR_MATCH``'s shapes) lets calls with other values reuse code that baked the old value in: results can be
silently wrong. Every drop says so (`EditOutcome.warning`).

At session teardown the session's copies are removed (`toolkit.end_session`), entries built at a compile stop
with an added guard are invalidated, every expression guard on a live entry is switched off, the filter patch
removed, and every code object with a dropped guard reset, so the next session in the process starts with
Dynamo's own guards.
"""

from __future__ import annotations

import builtins
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from . import compat, facts
from .guard_copies import AddedGuard, EntryCopies, GuardEdit, copy_text, refused
from .guard_filter import FilterRule, GuardFilter, Scope, drop_warning, export_guard_filter
from .model import EditOutcome, GuardEditKind, GuardEditView, GuardRef
from .toolkit_sources import parse_source, value_at

if TYPE_CHECKING:
    from .events import CompileEvent
    from .patches import PatchManager
    from .protocol import Host
    from .state import PauseContext

__all__ = ["GuardEditView", "GuardEditor", "export_guard_filter"]


#: The leaf types ``guard add SOURCE TYPE`` builds (`dynadbg.core.toolkit.Draft.add_guard`).
LEAF_TYPES: tuple[str, ...] = ("TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH", "NONE_MATCH")


def leaf_form(expr: str) -> tuple[str, str | None, str | None] | None:
    """(source, leaf type or None, value expression or None) when ``guard add EXPR`` asks for a real leaf guard:
    ``SOURCE`` ("guard it like this value": the leaf torch builds for the value there), ``SOURCE TYPE``,
    ``SOURCE == VALUE`` (an ``EQUALS_MATCH``, ``NONE_MATCH`` for None) or ``SOURCE is None``; None for any
    other expression (an expression guard). SOURCE is written as torch writes sources (``L['x'].dtype``)."""
    text = expr.strip()
    if parse_source(text) is not None:
        return text, None, None
    head, _sep, tail = text.rpartition(" ")
    if tail in LEAF_TYPES and parse_source(head) is not None:
        return head.strip(), tail, None
    left, sep, right = text.partition("==")
    if sep and right.strip() and parse_source(left) is not None:
        return left.strip(), "EQUALS_MATCH", right.strip()
    if text.endswith(" is None") and parse_source(text[:-len(" is None")]) is not None:
        return text[:-len(" is None")].strip(), "NONE_MATCH", None
    return None


class GuardEditor:
    """The guard edits of one `Session` (worker thread only). One per session (`Session.guard_editor`).

    Args:
        session: what the editor may use of the session (`protocol.Host`).
        patches: the session's `patches.PatchManager` (edited code runs from its toolkit copies in front of the
            cache entries, whose guard managers get the same expression guards).
        guard_filter: the session's one guard filter (drops are its `Scope.EVERY_COMPILE` rules).

    The toolkit copies that carry the edits made in frames are `copies` (`guard_copies.EntryCopies`).
    """

    def __init__(self, session: "Host", patches: "Callable[[], PatchManager]", guard_filter: GuardFilter) -> None:
        self.session = session
        self._patches = patches
        self._filter = guard_filter
        self.active = True
        self._edits: list[GuardEdit] = []
        self._reset_at_end: dict[int, CodeType] = {}
        self.copies = EntryCopies(patches)
        session.teardown_hooks.append(self._teardown)

    # -- queries -----------------------------------------------------------------------------------------------

    def edits(self) -> list[GuardEditView]:
        return [e.view() for e in self._edits]

    def _dynamo_code(self, ctx: "PauseContext", event: "CompileEvent | None") -> CodeType | None:
        if event is not None:
            return event.dynamo_code
        st = ctx.frame
        return self._patches().dynamo_code_of(st.frame.f_code) if st is not None and st.frame is not None else None

    def patch_ops(self) -> list[tuple[CodeType, CodeType | None, Any]]:
        """The active guard edits as patch-file operations (`toolkit_model.GuardOp`), each with the code object
        it was made for and Dynamo's code of that entry (None when unknown): a drop by source and leaf type, an
        expression guard as its expression over ``L`` and ``G``, a leaf guard by source and type (each rebuilt
        when the patch is replayed; a leaf from the live value at its source then). A root guard's drop (source
        ``L``) is left out: it is a filter on the next compiles, not an edit of a built tree."""
        from .toolkit_model import GuardOp, GuardOpKind

        out: list[tuple[CodeType, CodeType | None, Any]] = []
        for e in self._edits:
            if not e.active or e.original is None:
                continue
            if e.kind == "drop" and e.source and e.source != "L":
                out.append((e.original, e.dynamo, GuardOp(GuardOpKind.DROP, e.source, e.guard_type)))
            elif e.kind == "add" and e.op and e.op[0] == "add":
                # a leaf guard is rebuilt from the live value at its source when the patch is replayed
                out.append((e.original, e.dynamo, GuardOp(GuardOpKind.ADD, e.op[1], e.guard_type)))
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
        front = self._patches().front_copy(code)
        if front is not None:
            # an instruction edit's copy runs this frame: guard edits are made on it (`_put_in`)
            managers = [front.guard_manager]
        else:
            managers = self._patches().guard_managers_for(code, entry_manager)
        copy = self.copies.copy_of(code)
        if not managers and copy is not None:
            managers = [copy.handle.record.built.wrapper]   # the session's copy, before torch has it as an entry
        if not managers:
            return f"no cache entry of {original.co_name} runs {code.co_name} any more"
        f_locals = st.inputs if st.inputs else dict(st.frame.f_locals)
        return original, compile_id, f_locals, st.frame.f_globals, managers, None

    # -- add -----------------------------------------------------------------------------------------------------

    def add(self, ctx: "PauseContext", expr: str) -> EditOutcome:
        """Add ``EXPR`` (over ``L`` and ``G``) as a guard of the entry serving this frame or being compiled."""
        expr = expr.strip()
        if not expr:
            return refused("usage", "usage: guard add EXPR  (over L, the frame's locals dict, and G, its globals)")
        where = self._where(ctx)
        if isinstance(where, str):
            return refused("not here", where)
        form = leaf_form(expr)
        if form is not None:
            return self._add_leaf(ctx, where, *form)
        original, compile_id, f_locals, f_globals, managers, event = where
        try:
            code = compile(expr, "<guard add>", "eval")
        except SyntaxError as exc:
            return refused("syntax", f"syntax error in the guard: {exc.msg} (nothing added)")
        try:
            value = bool(eval(code, {"__builtins__": builtins, "L": f_locals, "G": f_globals}))  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - the user's own expression
            hint = " (use L['name'] for a local, G['name'] for a global)" if isinstance(exc, NameError) else ""
            return refused("eval", f"{type(exc).__name__}: {exc}{hint} on this call's inputs (nothing added)")
        guard = AddedGuard(code, f_globals)
        edit = GuardEdit(len(self._edits) + 1, GuardEditKind.ADD, original.co_name, compile_id, expr)
        note = "" if value else ("; it is False for this call's inputs: the next call with the same inputs "
                                 "recompiles")
        if self.copies.copyable(ctx, where):
            # a lambda guard of a toolkit copy of the entry, as the leaf forms are: `guards` lists it in the
            # copy's tree, `guard undo` takes it out with the copy, the session's end removes the copy
            edit.op = ("lambda", expr, guard)
            validation = self.copies.put_in(ctx, where, edit, allow_baked=False)
            if isinstance(validation, EditOutcome):
                return validation
            edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
            self._patches().note_guard_editor(self)
            self._edits.append(edit)
            if event is not None:
                where_text = "from the next call (this call runs it regardless)"
            else:
                assert edit.copy is not None  # an edit made at a frame stop is made on the session's copy
                where_text = f"from the next call ({copy_text(edit.copy)})"
            return EditOutcome(message=f"guard {edit.number} added to {original.co_name} {compile_id}, in effect "
                                       f"{where_text}: {expr}{note}", edit=edit.view())
        # this frame runs Dynamo's own code while an instruction edit's copy stands in front of its entry: both get it
        parts = [f"DEBUGGER: {expr}"]
        try:
            for manager in managers:
                compat.add_lambda_guard(manager, guard, parts)
        except Exception as exc:  # noqa: BLE001 - this torch lacks the API
            guard.active = False
            return refused("unsupported", f"cannot add a guard here: {type(exc).__name__}: {exc}")
        edit.guard = guard
        host = self.copies.copy_of(ctx.frame.frame.f_code) if event is None and ctx.frame is not None else None
        if host is not None:
            host.exprs.append(edit)     # on the session's copy: a later edit's copy carries it too
        edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
        self._patches().note_guard_editor(self)
        self._edits.append(edit)
        when = "from the next call" if event is None else "from the next call (this call runs it regardless)"
        return EditOutcome(message=f"guard {edit.number} added to {original.co_name} {compile_id}, in effect "
                                        f"{when}: {expr}{note}", edit=edit.view())

    def _add_leaf(self, ctx: "PauseContext", where: tuple[Any, ...], source: str, guard_type: str | None,
                  value_expr: str | None) -> EditOutcome:
        """``guard add SOURCE [TYPE]`` / ``SOURCE == VALUE`` / ``SOURCE is None``: a real leaf guard on `source`,
        built by the toolkit from the live value there (or from VALUE), on a copy of this stop's entry."""
        original, compile_id, f_locals, f_globals, _managers, event = where
        like = None
        if value_expr is not None:
            try:
                # in the function's module (``torch.float32``), with L and G as in an expression guard
                scope = {**f_globals, "__builtins__": builtins, "L": f_locals, "G": f_globals}
                like = eval(compile(value_expr, "<guard add>", "eval"), scope)  # noqa: S307 - the user's own
            except SyntaxError as exc:
                return refused("syntax", f"syntax error in the value: {exc.msg} (nothing added)")
            except Exception as exc:  # noqa: BLE001 - the user's own expression
                return refused("eval", f"{type(exc).__name__}: {exc} evaluating {value_expr} (nothing added)")
            if like is None:
                guard_type = "NONE_MATCH"
        if like is None:
            # "like this value": keep the value of this call, so a copy rebuilt at a later stop guards the same
            try:
                like = value_at(parse_source(source), f_locals, f_globals)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - the source names nothing on this call's inputs
                return refused("eval", f"{source} cannot be read on this call's inputs: {type(exc).__name__}: "
                                        f"{exc} (nothing added)")
        edit = GuardEdit(len(self._edits) + 1, GuardEditKind.ADD, original.co_name, compile_id, source)
        edit.source, edit.op = source, ("add", source, guard_type, like)
        validation = self.copies.put_in(ctx, where, edit, allow_baked=False)
        if isinstance(validation, EditOutcome):
            return validation
        added = next((a for a in reversed(validation.added) if a.source == source and a.why == "added"), None)
        if added is not None:
            edit.text, edit.guard_type = added.code, added.guard_type
        edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
        self._patches().note_guard_editor(self)
        self._edits.append(edit)
        passes = True
        if value_expr is not None:
            try:
                passes = bool(value_at(parse_source(source), f_locals, f_globals) == like)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 - only the note below depends on it
                pass
        note = "" if passes else "; it is False for this call's inputs: the next call with the same inputs recompiles"
        return EditOutcome(message=f"guard {edit.number} added to {original.co_name} {compile_id}: {edit.guard_type} "
                                   f"{edit.text}, {self._where_text(edit, event)}{note}", edit=edit.view())

    def _where_text(self, edit: GuardEdit, event: Any) -> str:
        if event is not None:
            return "in effect from the next call (this call runs it regardless)"
        assert edit.copy is not None  # an edit made at a frame stop is made on the session's copy
        return copy_text(edit.copy)

    # -- drop ----------------------------------------------------------------------------------------------------

    def drop(self, ctx: "PauseContext", leaf_id: str) -> EditOutcome:
        """Leave the guard `leaf_id` (from ``guards``) out of this code object's compiles (see the module doc)."""
        leaf_id = leaf_id.strip()
        if not leaf_id:
            return refused("usage", "usage: guard drop ID  (a leaf id such as g6 from `guards`)")
        where = self._where(ctx)
        if isinstance(where, str):
            return refused("not here", where)
        original, compile_id, f_locals, _g, managers, event = where
        from . import guards

        tree = guards.build_guard_tree(managers[0], compile_id)
        leaf = next((lf for lf in guards.iter_leaves(tree) if lf.id == leaf_id), None)
        if leaf is None:
            return refused("not here", f"no guard {leaf_id} in the guards of {original.co_name} {compile_id} "
                                    f"(`guards` lists them)")
        if leaf.relational or leaf.epilogue:
            kind = "relational" if leaf.relational else "epilogue (symbolic-shape)"
            return refused("rejected", f"{leaf_id} is a {kind} guard: it cannot be dropped on its own")
        if leaf.guard_type == "LAMBDA_GUARD" and any(c.startswith("DEBUGGER:") for c in leaf.code):
            return refused("rejected", f"{leaf_id} is a guard added with `guard add`: use `guard undo` instead")
        types = facts.filter_types(leaf.guard_type, leaf.source, leaf.code)
        if types is None:
            from .decisions import no_filter_reason

            return refused("rejected", no_filter_reason(leaf))
        code_text = "; ".join(leaf.code)
        warning = drop_warning(GuardRef.of(leaf, compile_id), leaf.expected)
        match_source = "" if leaf.source == "L" else leaf.source   # ambient root guards have an empty name
        rule = FilterRule(original, match_source, frozenset(types), Scope.EVERY_COMPILE,
                          name=compat.strip_local_scope(leaf.source), label=code_text, warning=warning,
                          guard=warning.guard)
        edit = GuardEdit(len(self._edits) + 1, GuardEditKind.DROP, original.co_name, compile_id, code_text)
        edit.original, edit.dynamo = original, self._dynamo_code(ctx, event)
        edit.rule, edit.source, edit.guard_type, edit.warning = rule, leaf.source, leaf.guard_type, warning
        message = None
        if leaf.source != "L":
            # a copy of the entry without the leaf (toolkit): the rest of its manager is rebuilt beside it
            if self.copies.copyable(ctx, where):
                edit.op = ("drop", leaf.source, leaf.guard_type)
                known = {id(e.guard_manager) for e in compat.cache_entries(original)}
                validation = self.copies.put_in(ctx, where, edit, allow_baked=True)
                if isinstance(validation, EditOutcome):
                    return validation
                if event is not None:
                    message = (f"dropped {leaf_id} {leaf.guard_type} {code_text} from {original.co_name}: later "
                               f"compiles of it leave it out; this entry is built without it: in effect from the "
                               f"next call")
                    self._reset_at_end[id(original)] = original
                else:
                    assert edit.copy is not None
                    edit.known = known | {id(edit.copy.handle.record.built.wrapper)}
                    where_to = (copy_text(edit.copy) if edit.copy.front is not None else
                                f"copy {edit.copy.handle.compile_id} of {edit.copy.base.compile_id} without it "
                                f"replaces that entry from the next call (no recompile)")
                    message = (f"dropped {leaf_id} {leaf.guard_type} {code_text} from {original.co_name}: "
                               f"{where_to}; later compiles leave it out")
        self._patches().note_guard_editor(self)
        self._filter.add(rule)
        if message is None:
            self._reset_at_end[id(original)] = original
            if event is not None:
                message = self._drop_now(event, edit, tree, leaf)
            else:
                self._reset(original)
                message = (f"dropped {leaf_id} {leaf.guard_type} {code_text} from {original.co_name}: its cache "
                           f"entries were reset, so its next call compiles without that guard")
        self._edits.append(edit)
        return EditOutcome(message=message, warning=warning, edit=edit.view())

    def _drop_now(self, event: Any, edit: GuardEdit, tree: Any, leaf: Any) -> str:
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
            return refused("not here", "no guard edits to undo")
        which = which.strip()
        if which == "all":
            targets = list(reversed(active))
        elif which:
            try:
                number = int(which)
            except ValueError:
                return refused("usage", "usage: guard undo [N|all]")
            found = [e for e in active if e.number == number]
            if not found:
                return refused("not here", f"no active guard edit {number} (`guard` lists them)")
            targets = found
        else:
            targets = [active[-1]]
        lines = [self._undo_one(ctx, e) for e in targets]
        return EditOutcome(message="\n".join(lines), edit=targets[-1].view())

    def _undo_one(self, ctx: "PauseContext", edit: GuardEdit) -> str:
        edit.active = False
        if edit.guard is not None:
            edit.guard.active = False
            return (f"guard {edit.number} ({edit.text}) switched off: torch keeps the leaf, which now always "
                    f"passes")
        if edit.kind is GuardEditKind.ADD:
            if edit.copy is not None:
                return f"guard {edit.number} ({edit.text}) removed: " + self.copies.undo_in_copy(ctx, edit)
            if ctx.compile_event is edit.event and edit.event is not None:
                edit.event.guard_manager = edit.old_manager
                return f"guard {edit.number} ({edit.text}) removed from compile {edit.compile_id} (still being built)"
            gone = self._invalidate_built(edit)
            return (f"guard {edit.number} ({edit.text}) removed: " + ("the entry built with it was invalidated, so the "
                    "next call recompiles" if gone else "the entry built with it is gone already"))
        rule = edit.rule
        assert rule is not None
        self._filter.remove(rule)
        if ctx.compile_event is edit.event and edit.event is not None:
            edit.event.guard_manager = edit.old_manager
            return f"guard {edit.text} restored in compile {edit.compile_id} (it was still being built)"
        if edit.copy is not None:
            return f"guard {edit.text} comes back: " + self.copies.undo_in_copy(ctx, edit)
        self._reset(rule.original)
        return (f"guard {edit.text} comes back: {rule.original.co_name}'s cache entries were reset, its next call "
                f"compiles with it")

    # -- torch state -------------------------------------------------------------------------------------------

    def _reset(self, original: CodeType) -> None:
        compat.reset_code(original)
        self._patches().on_reset(original)

    def _invalidate_built(self, edit: GuardEdit) -> bool:
        """Invalidate the cache entry a compile stop built with `edit`'s guard manager; False when there is none."""
        done = False
        for e in compat.cache_entries(edit.original) if edit.original is not None else ():
            if e.guard_manager is edit.wrapper:
                done = compat.invalidate_cache_entry(e, "dynadbg: a guard added at a compile stop was removed") or done
        return done

    def _teardown(self) -> None:
        self.active = False
        for edit in self._edits:
            if edit.guard is not None:
                edit.guard.active = False
            if edit.active and edit.kind is GuardEditKind.ADD and edit.wrapper is not None:
                self._invalidate_built(edit)
            if edit.active and edit.copy is not None and edit.known and edit.original is not None:
                # entries Dynamo compiled under the drop's guard filter lack the guard too: start that code afresh
                # (the toolkit's copies go at the session's end, `toolkit.end_session`)
                newer = [e for e in compat.cache_entries(edit.original) if id(e.guard_manager) not in edit.known
                         and getattr(e, "code", None) is not None
                         and id(e.guard_manager) not in self._toolkit_wrappers()]
                if newer:
                    self._reset_at_end[id(edit.original)] = edit.original
        for original in self._reset_at_end.values():
            try:
                compat.reset_code(original)
            except Exception as exc:  # noqa: BLE001
                self._say(f"could not reset {original.co_name}: {exc}")
        self._reset_at_end.clear()

    def _toolkit_wrappers(self) -> set[int]:
        from . import toolkit

        return {id(h.record.built.wrapper) for h in toolkit.installed()}

    def _say(self, text: str) -> None:
        self.session.message(text)
