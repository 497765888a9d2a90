"""Guard edits: add a guard to a live cache entry, drop guards from one code object, export the drops as a
``guard_filter_fn``, undo each (notes/torch-internals.md §3, §11).

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
silently wrong. Every drop says so (`GuardEditOutcome.warning`).

At session teardown every added guard is switched off, the filter patch removed, and every code object with a
dropped guard reset, so the next session in the process starts with Dynamo's own guards.
"""

from __future__ import annotations

import builtins
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from . import compat
from .model import GuardEditOutcome, GuardEditView

if TYPE_CHECKING:
    from .patches import PatchManager
    from .protocol import Host
    from .state import PauseContext

__all__ = ["GuardEditOutcome", "GuardEditView", "GuardEditor", "constant_folding_warning", "export_guard_filter"]

#: Leaf types that pin a value Dynamo may have baked into the graph or the generated code.
VALUE_GUARD_TYPES: frozenset[str] = frozenset(
    {"EQUALS_MATCH", "CONSTANT_MATCH", "ID_MATCH", "TRUE_MATCH", "FALSE_MATCH", "NONE_MATCH", "NOT_NONE",
     "BOOL_MATCH", "DICT_VERSION", "CLOSURE_MATCH", "FUNCTION_MATCH"}
)
#: Leaf types that pin a shape, length, type or key set the graph was traced for.
SHAPE_GUARD_TYPES: frozenset[str] = frozenset(
    {"TENSOR_MATCH", "LENGTH_CHECK", "DICT_LENGTH", "TUPLE_ITERATOR_LEN", "TYPE_MATCH", "DICT_CONTAINS",
     "DICT_KEYS_MATCH", "MAPPING_KEYS_MATCH", "NO_HASATTR", "HASATTR"}
)


def constant_folding_warning(guard_type: str, source: str, code: str, expected: str | None) -> str:
    """The warning a drop of this guard gets: what Dynamo may have baked in, and what can go wrong."""
    pinned = f"{source} == {expected}" if expected else code
    if guard_type in VALUE_GUARD_TYPES:
        return (f"WARNING: {guard_type} pins {pinned}. Dynamo specialised this code on that value and may have "
                f"baked it into the graph or the generated code (constant folding): calls with another value will "
                f"reuse this code and can give silently wrong results.")
    if guard_type in SHAPE_GUARD_TYPES:
        return (f"WARNING: {guard_type} on {source} ({code}) is what the graph was traced for: calls where it "
                f"does not hold reuse code traced for other types, shapes or keys and can give wrong results or "
                f"fail.")
    return (f"WARNING: the compiled code assumes {guard_type} ({code}) holds; without it calls where it does not "
            f"can give wrong results.")


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


class _Rule:
    """One dropped guard: leave (source, guard type) out of the compiles of one code object."""

    __slots__ = ("original", "source", "match_source", "guard_type", "code", "compile_id", "warning", "matched")

    def __init__(self, original: CodeType, source: str, guard_type: str, code: str, compile_id: str | None,
                 warning: str) -> None:
        self.original = original
        self.source = source
        self.match_source = "" if source == "L" else source   # ambient root guards have an empty name
        self.guard_type = guard_type
        self.code = code
        self.compile_id = compile_id
        self.warning = warning
        self.matched = False

    def drops(self, source: str, types: frozenset[str]) -> bool:
        return source == self.match_source and self.guard_type in types


class _Edit:
    __slots__ = ("number", "kind", "code_name", "compile_id", "text", "rule", "guard", "event", "old_manager",
                 "active")

    def __init__(self, number: int, kind: str, code_name: str, compile_id: str | None, text: str) -> None:
        self.number = number
        self.kind = kind
        self.code_name = code_name
        self.compile_id = compile_id
        self.text = text
        self.rule: _Rule | None = None
        self.guard: _AddedGuard | None = None
        self.event: Any = None          # the CompileEvent a drop replaced the guard manager of
        self.old_manager: Any = None    # ... and the manager it had
        self.active = True

    def view(self) -> GuardEditView:
        rule = self.rule
        return GuardEditView(
            self.number, self.kind, self.code_name, self.compile_id, self.text,
            source=rule.source if rule else None, guard_type=rule.guard_type if rule else "LAMBDA_GUARD",
            warning=rule.warning if rule else None, active=self.active,
        )


class GuardEditor:
    """The guard edits of one `Session` (worker thread only). One per session (`Session.guard_editor`).

    Args:
        session: what the editor may use of the session (`protocol.Host`).
        patches: the session's `patches.PatchManager` (edited code runs from its precompile entries, whose guard
            managers get the same edits).
    """

    def __init__(self, session: "Host", patches: "Callable[[], PatchManager]") -> None:
        self.session = session
        self._patches = patches
        self.active = True
        self._edits: list[_Edit] = []
        self._rules: dict[int, list[_Rule]] = {}
        self._undo_filter: Any = None
        self._reset_at_end: dict[int, CodeType] = {}
        session.teardown_hooks.append(self._teardown)

    # -- queries -----------------------------------------------------------------------------------------------

    def edits(self) -> list[GuardEditView]:
        return [e.view() for e in self._edits]

    def export(self) -> str:
        """`export_guard_filter` of the drops in effect."""
        return export_guard_filter([r for rules in self._rules.values() for r in rules])

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
        original, compile_id = info[0], str(info[1])
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

    def add(self, ctx: "PauseContext", expr: str) -> GuardEditOutcome:
        """Add ``EXPR`` (over ``L`` and ``G``) as a guard of the entry serving this frame or being compiled."""
        expr = expr.strip()
        if not expr:
            return GuardEditOutcome("usage: guard add EXPR  (over L, the frame's locals dict, and G, its globals)")
        where = self._where(ctx)
        if isinstance(where, str):
            return GuardEditOutcome(where)
        original, compile_id, f_locals, f_globals, managers, event = where
        try:
            code = compile(expr, "<guard add>", "eval")
        except SyntaxError as exc:
            return GuardEditOutcome(f"syntax error in the guard: {exc.msg} (nothing added)")
        try:
            value = bool(eval(code, {"__builtins__": builtins, "L": f_locals, "G": f_globals}))  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - the user's own expression
            hint = " (use L['name'] for a local, G['name'] for a global)" if isinstance(exc, NameError) else ""
            return GuardEditOutcome(f"{type(exc).__name__}: {exc}{hint} on this call's inputs (nothing added)")
        guard = _AddedGuard(code, f_globals)
        parts = [f"DEBUGGER: {expr}"]
        try:
            for manager in managers:
                compat.add_lambda_guard(manager, guard, parts)
        except Exception as exc:  # noqa: BLE001 - this torch lacks the API
            guard.active = False
            return GuardEditOutcome(f"cannot add a guard here: {type(exc).__name__}: {exc}")
        edit = _Edit(len(self._edits) + 1, "add", original.co_name, compile_id, expr)
        edit.guard = guard
        self._edits.append(edit)
        when = "from the next call" if event is None else "from the next call (this call runs it regardless)"
        note = "" if value else ("; it is False for this call's inputs: the next call with the same inputs "
                                 "recompiles")
        return GuardEditOutcome(message=f"guard {edit.number} added to {original.co_name} {compile_id}, in effect "
                                        f"{when}: {expr}{note}", edit=edit.view())

    # -- drop ----------------------------------------------------------------------------------------------------

    def drop(self, ctx: "PauseContext", leaf_id: str) -> GuardEditOutcome:
        """Leave the guard `leaf_id` (from ``guards``) out of this code object's compiles (see the module doc)."""
        leaf_id = leaf_id.strip()
        if not leaf_id:
            return GuardEditOutcome("usage: guard drop ID  (a leaf id such as g6 from `guards`)")
        where = self._where(ctx)
        if isinstance(where, str):
            return GuardEditOutcome(where)
        original, compile_id, f_locals, _g, managers, event = where
        from . import guards

        tree = guards.build_guard_tree(managers[0], compile_id)
        leaf = next((lf for lf in guards.iter_leaves(tree) if lf.id == leaf_id), None)
        if leaf is None:
            return GuardEditOutcome(f"no guard {leaf_id} in the guards of {original.co_name} {compile_id} "
                                    f"(`guards` lists them)")
        if leaf.relational or leaf.epilogue:
            kind = "relational" if leaf.relational else "epilogue (symbolic-shape)"
            return GuardEditOutcome(f"{leaf_id} is a {kind} guard: it cannot be dropped on its own")
        if leaf.guard_type == "LAMBDA_GUARD" and any(c.startswith("DEBUGGER:") for c in leaf.code):
            return GuardEditOutcome(f"{leaf_id} is a guard added with `guard add`: use `guard undo` instead")
        code_text = "; ".join(leaf.code)
        warning = constant_folding_warning(leaf.guard_type, leaf.source, code_text, leaf.expected)
        rule = _Rule(original, leaf.source, leaf.guard_type, code_text, compile_id, warning)
        edit = _Edit(len(self._edits) + 1, "drop", original.co_name, compile_id, code_text)
        edit.rule = rule
        self._ensure_filter()
        self._rules.setdefault(id(original), []).append(rule)
        self._reset_at_end[id(original)] = original
        if event is not None:
            message = self._drop_now(event, edit, tree, leaf)
        else:
            self._reset(original)
            message = (f"dropped {leaf_id} {leaf.guard_type} {code_text} from {original.co_name}: its cache entries "
                       f"were reset, so its next call compiles without that guard")
        self._edits.append(edit)
        return GuardEditOutcome(message=message, warning=warning, edit=edit.view())

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

    def undo(self, ctx: "PauseContext", which: str = "") -> GuardEditOutcome:
        """Undo the last active guard edit, edit number `which`, or ``"all"``."""
        active = [e for e in self._edits if e.active]
        if not active:
            return GuardEditOutcome("no guard edits to undo")
        which = which.strip()
        if which == "all":
            targets = list(reversed(active))
        elif which:
            try:
                number = int(which)
            except ValueError:
                return GuardEditOutcome("usage: guard undo [N|all]")
            found = [e for e in active if e.number == number]
            if not found:
                return GuardEditOutcome(f"no active guard edit {number} (`guard` lists them)")
            targets = found
        else:
            targets = [active[-1]]
        lines = [self._undo_one(ctx, e) for e in targets]
        return GuardEditOutcome(message="\n".join(lines), edit=targets[-1].view())

    def _undo_one(self, ctx: "PauseContext", edit: _Edit) -> str:
        edit.active = False
        if edit.guard is not None:
            edit.guard.active = False
            return (f"guard {edit.number} ({edit.text}) switched off: torch keeps the leaf, which now always "
                    f"passes")
        rule = edit.rule
        assert rule is not None
        rules = self._rules.get(id(rule.original), [])
        if rule in rules:
            rules.remove(rule)
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

    def _ensure_filter(self) -> None:
        if self._undo_filter is None:
            self._undo_filter = compat.install_guard_filter(self._filter_for)

    def _filter_for(self, f_code: CodeType) -> Any:
        if not self.active:
            return None
        rules = [r for r in self._rules.get(id(f_code), ()) if r.original is f_code]
        if not rules:
            return None
        editor = self

        def dynadbg_drop(entries: list[Any]) -> list[bool]:
            keep = []
            for entry in entries:
                source, types = compat.guard_filter_entry_match_keys(entry)
                hit = [r for r in rules if r.drops(source, types)]
                for r in hit:
                    r.matched = True
                keep.append(not hit)
            for r in rules:
                if not r.matched:
                    editor._say(f"guard drop: no {r.guard_type} guard on {r.source} was built in this compile of "
                                f"{f_code.co_name}; nothing dropped for it")
            return keep

        return dynadbg_drop

    def _teardown(self) -> None:
        self.active = False
        for edit in self._edits:
            if edit.guard is not None:
                edit.guard.active = False
        if self._undo_filter is not None:
            self._undo_filter()
            self._undo_filter = None
        for original in self._reset_at_end.values():
            try:
                compat.reset_code(original)
            except Exception as exc:  # noqa: BLE001
                self._say(f"could not reset {original.co_name}: {exc}")
        self._reset_at_end.clear()
        self._rules.clear()

    def _say(self, text: str) -> None:
        self.session.message(text)


def export_guard_filter(rules: list[Any]) -> str:
    """Python source of a ``guard_filter_fn`` that drops the guards `rules` describe (objects with ``source``,
    ``guard_type``, ``code``, ``original``, ``warning``), to paste into a program and pass as
    ``torch.compile(..., options={"guard_filter_fn": dynadbg_guard_filter})``.

    The filter matches a ``GuardFilterEntry`` by ``orig_guard.name`` (the guard's source, ``""`` for ambient
    root guards) and by ``guard_type``/``derived_guard_types``, exactly as the debugger's own filter does. Unlike
    the debugger, which dropped each guard only from one code object, it applies to every frame that
    ``torch.compile`` call compiles.
    """
    if not rules:
        return "# no guards are dropped in this session: nothing to export"
    lines = [
        "# guard_filter_fn exported by dynadbg: leaves out the guards dropped in the debugger.",
        "# Use: torch.compile(fn, ..., options={\"guard_filter_fn\": dynadbg_guard_filter})",
        "# It applies to every frame that torch.compile call compiles (the debugger dropped each guard only",
        "# from the code object named beside it).",
    ]
    warned = [r for r in rules if r.guard_type in VALUE_GUARD_TYPES | SHAPE_GUARD_TYPES]
    if warned:
        lines.append("# WARNING: these guards pin values or shapes Dynamo specialised on; without them calls with")
        lines.append("# other values reuse code that baked the old ones in and can give silently wrong results.")
    lines.append("DYNADBG_DROPPED_GUARDS = [")
    for r in rules:
        origin = r.original
        where = f"{origin.co_name} ({origin.co_filename.rsplit('/', 1)[-1]}:{origin.co_firstlineno})"
        lines.append(f"    ({r.match_source!r}, {r.guard_type!r}),  # {where}: {r.code}")
    lines += [
        "]",
        "",
        "",
        "def dynadbg_guard_filter(guard_entries):",
        "    keep = []",
        "    for entry in guard_entries:",
        "        orig = getattr(entry, \"orig_guard\", None)",
        "        source = orig.name if orig is not None and orig.name is not None else entry.name",
        "        types = {entry.guard_type, *(entry.derived_guard_types or ())}",
        "        keep.append(not any(source == s and t in types for s, t in DYNADBG_DROPPED_GUARDS))",
        "    return keep",
    ]
    return "\n".join(lines)
