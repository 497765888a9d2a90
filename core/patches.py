"""Installing instruction edits in a session (`PatchManager`). The edits themselves are made by `dynadbg.core.edits`,
patch files read and written by `dynadbg.core.patchfile`.

How an edit is installed (`PatchManager`): at a compile stop it replaces the code of the compile being finished
(``CompileEvent.code``), so the very call that compiled it runs the edit; at any later stop each live cache entry
whose Dynamo code the patch was made for gets a `dynadbg.core.toolkit` copy: a `toolkit.Draft` of the entry with
the patch's instruction edits, validated by the toolkit (the unguarded-edit check, the layout checks) and
installed in front of the cache entries (``Draft.install("front")``: a precompile entry, tried before them), so it
runs from the next call; ``toolkit.entries`` lists it with its hit count. A patch also re-applies itself to every
later compile of the same code object whose Dynamo code has the same fingerprint. `patch undo` and the session's
end take the copies out (`toolkit.Handle.remove`).

A guard edit in a frame that such a copy runs (`guard_edits.GuardEditor`) is made on the copy: `swap_front`
puts a draft of the same entry with the patch's edits and the guard change in its place (`toolkit.Handle.swap`).
A later edit of the same code makes those guard edits on its new copy too (`guard_copies.EntryCopies.apply_front`); an
undo that leaves no copy takes them with it, and its `EditOutcome.guard_edits_gone` names them.

The edits themselves (parse, apply, validate, diff) are pure functions in `dynadbg.core.edits`; patch files
(JSON) are `dynadbg.core.patchfile`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from types import CodeType, SimpleNamespace
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import compat, precompile
from .edits import build_patched, diff_code, fingerprint, preview_edit
from .format.edits import guard_edits_gone, patch_contents
from .model import EditError, EditOp, EditOutcome, EditPreview, PatchDiff, PatchKey, PatchSpec, PatchView
from .patchfile import _version_note, patch_file_json, read_patch_file

if TYPE_CHECKING:
    from .protocol import Host
    from .state import PauseContext

__all__ = ["PatchManager", "patch_key"]


# ==============================================================================================================
# Installing patches in a session
# ==============================================================================================================


class _Patch:
    """A patch the session holds: the ops for one Dynamo code (by key), and where they went."""

    __slots__ = ("key", "ops", "compile_ids", "originals", "guards")

    def __init__(self, key: PatchKey, ops: Sequence[EditOp] = (), guards: Sequence[Any] = ()) -> None:
        self.key = key
        self.ops: list[EditOp] = list(ops)
        #: guard operations (`toolkit_model.GuardOp`) a patch file carried, applied to each compile it matches
        self.guards: list[Any] = list(guards)
        self.compile_ids: list[str] = []
        #: id -> the original code objects it was made for or applied to
        self.originals: dict[int, CodeType] = {}

    def view(self) -> PatchView:
        return PatchView(self.key, tuple(self.ops), tuple(self.compile_ids), guard_ops=len(self.guards))


class _Precompiled:
    """One toolkit copy the session installed in front of a cache entry (`toolkit.Handle`, mode ``front``): its
    code serves the calls its guard manager accepts, in front of the cache entry whose Dynamo code is `dynamo` and
    whose own code is `entry_code`."""

    __slots__ = ("dynamo", "entry_code", "handle", "patch")

    def __init__(self, dynamo: CodeType, entry_code: CodeType, handle: Any, patch: _Patch) -> None:
        self.dynamo = dynamo
        self.entry_code = entry_code
        self.handle = handle
        self.patch = patch

    @property
    def code(self) -> CodeType:
        """The code the copy runs (Dynamo's code with the patch's edits)."""
        return self.handle.record.built.code  # type: ignore[no-any-return]

    @property
    def guard_manager(self) -> Any:
        """The copy's guard manager wrapper (the entry's guards, those the unguarded-edit check added, and the
        toolkit's hit counter)."""
        return self.handle.record.built.wrapper


@dataclass
class _Target:
    """The generated code an edit command works on."""

    original: CodeType            # the user's code object (or resume function) Dynamo compiled
    dynamo: CodeType              # Dynamo's generated code the patch applies to
    current: CodeType             # what the stop shows (the event's code, or the frame's)
    compile_id: str
    event: Any = None             # capture.CompileEvent at a compile stop


def patch_key(original: CodeType, dynamo: CodeType | None = None) -> PatchKey:
    """The `PatchKey` of Dynamo's code `dynamo` for `original` (fingerprint empty without `dynamo`)."""
    return PatchKey(original.co_name, original.co_filename, original.co_firstlineno,
                    fingerprint(dynamo) if dynamo is not None else "")


class PatchManager:
    """The instruction patches of one `Session`: installs them, re-applies them to new compiles, undoes them,
    saves and loads patch files. Worker thread only (commands and compile hooks run there).

    One per session (`Session.patch_manager`, made on first use); creating it registers a compile hook (re-applies
    patches, applies patches loaded from files) and a teardown hook (drops every cache entry an edit touched, so a
    later session in the same process starts from Dynamo's own code).
    """

    def __init__(self, session: "Host") -> None:
        self.session = session
        self.active = True
        self._patches: list[_Patch] = []
        #: id(code this manager made) -> (its patch, the Dynamo code it edits); the codes are kept alive here
        self._made: dict[int, tuple[_Patch, CodeType, CodeType]] = {}
        #: id(original) -> (original, {id(dynamo code): _Precompiled})
        self._precompiled: dict[int, tuple[CodeType, dict[int, _Precompiled]]] = {}
        #: originals whose cache entries hold edited code or precompile entries (reset at teardown)
        self._touched: dict[int, CodeType] = {}
        self._pending: list[PatchSpec] = []
        self._mismatch_said: set[tuple[PatchKey, str]] = set()
        self._guard_editor: Any = None
        #: numbers of guard edits made on copies an install took out without a successor (`take_gone`)
        self._gone: list[int] = []
        #: (f_locals, f_globals) of the stop an edit is being installed from
        self._live_scope: tuple[dict[str, Any], dict[str, Any]] | None = None
        #: id(compile event) -> (event, the guard manager Dynamo built) for events whose manager an edit replaced
        self._event_managers: dict[int, tuple[Any, Any]] = {}
        session.compile_hooks.append(self._on_compile)
        session.teardown_hooks.append(self._teardown)

    # -- queries -----------------------------------------------------------------------------------------------

    def patches(self) -> list[PatchView]:
        """Every patch with edits, then the pending ones from patch files."""
        views = [p.view() for p in self._patches if p.ops]
        views += [PatchView(s.key, s.ops, pending=True, guard_ops=len(s.guards)) for s in self._pending]
        return views

    def dynamo_code_of(self, code: CodeType) -> CodeType:
        """Dynamo's own code behind `code` (`code` itself unless this manager made it)."""
        made = self._made.get(id(code))
        return made[1] if made is not None else code

    def guard_managers_for(self, code: CodeType, entry_manager: Any) -> list[Any]:
        """Every guard manager that decides whether the calls `code`'s cache entry serves run: the entry's own
        (`entry_manager`), or the precompile entry's this manager installed in front of it — and both when a
        precompile entry shadows the entry `code` belongs to."""
        dynamo = self.dynamo_code_of(code)
        out = [] if entry_manager is None else [entry_manager]
        for _orig, pres in self._precompiled.values():
            pre = pres.get(id(dynamo))
            if pre is not None and all(m is not pre.guard_manager for m in out):
                if pre.code is code:
                    out.insert(0, pre.guard_manager)
                else:
                    out.append(pre.guard_manager)
        return out

    def front_copy(self, code: CodeType) -> _Precompiled | None:
        """The instruction edit's copy (in front of the cache entries) that runs `code` — its current build, or
        one a guard edit swapped out while a frame still ran it — or None (`code` is Dynamo's own code, or
        a compile stop's edited code)."""
        made = self._made.get(id(code))
        if made is None:
            return None
        for _orig, pres in self._precompiled.values():
            pre = pres.get(id(made[1]))
            if pre is not None and pre.patch is made[0] and not pre.handle.record.removed:
                return pre
        return None

    def swap_front(self, pre: _Precompiled, draft: Any, *, force: bool = False) -> None:
        """Put `draft` (a copy of the same cache entry with the patch's edits and other guards: a guard edit made
        in a frame `pre` runs) in `pre`'s place (`toolkit.Handle.swap`); the session learns the new code.

        Raises:
            toolkit.Refused, toolkit.ToolkitError: as `Handle.swap` (`pre` stays)."""
        pre.handle = pre.handle.swap(draft, force=force)
        self._made[id(pre.code)] = (pre.patch, pre.dynamo, pre.code)
        self._register(pre.handle.record.original, pre)

    def take_gone(self) -> tuple[int, ...]:
        """The numbers of the guard edits that went with copies the last install took out (then forgotten)."""
        gone, self._gone = tuple(self._gone), []
        return gone

    # -- commands ----------------------------------------------------------------------------------------------

    def target(self, ctx: "PauseContext") -> _Target | EditError:
        """The generated code an edit at this stop works on: the compile's code at a compile stop, else the
        selected frame's code."""
        ev = ctx.compile_event
        if ev is not None:
            return _Target(ev.original_code, ev.dynamo_code, ev.code, str(ev.compile_id), ev)
        if ctx.frame is None or ctx.frame.frame is None:
            return EditError("not here", f"no generated code at a {ctx.kind.value} stop (edit at the compile stop "
                                         f"or in a frame of generated code)")
        code = ctx.frame.frame.f_code
        info = self.session.generated_info(code)
        if info is None:
            return EditError("not here", f"{code.co_name} is not generated code the debugger recorded")
        return _Target(info.original, self.dynamo_code_of(code), code, str(info.compile_id))

    def preview(self, ctx: "PauseContext", op: EditOp) -> EditPreview:
        """`preview_edit` of `op` on top of the current patch of this stop's code (installs nothing)."""
        t = self.target(ctx)
        if isinstance(t, EditError):
            return EditPreview(op, t)
        patch = self._patch(t.original, t.dynamo)
        return preview_edit(t.dynamo, patch.ops if patch else [], op)

    def edit(self, ctx: "PauseContext", op: EditOp) -> EditOutcome:
        """Validate `op` on top of this code's patch and install the result (see the module docstring)."""
        t = self.target(ctx)
        if isinstance(t, EditError):
            return EditOutcome(t)
        patch = self._patch(t.original, t.dynamo)
        old = list(patch.ops) if patch else []
        preview = preview_edit(t.dynamo, old, op)
        if preview.error is not None or preview.code is None:
            return EditOutcome(preview.error or EditError("cannot assemble", "no code came out"))
        self._live_scope = self._scope_of(ctx)
        try:
            return self._install(t, old + [op], preview.code)
        finally:
            self._live_scope = None

    def undo(self, ctx: "PauseContext", *, everything: bool = False) -> EditOutcome:
        """Put Dynamo's code back for this stop's code (`everything`: for every patched code object)."""
        if everything:
            done = []
            t = self.target(ctx)
            for patch in list(self._patches):
                if not patch.ops:
                    continue
                done.append(patch.key.name)
                patch.ops = []
                if isinstance(t, _Target) and t.event is not None and self._key_of(t).matches(patch.key):
                    self._install(t, [], t.dynamo)
                else:
                    installed = self._install_later_all(patch)
                    if isinstance(installed, EditError):
                        return EditOutcome(installed)
            self._patches = [p for p in self._patches if p.ops]
            self._pending.clear()
            gone = self.take_gone()
            return EditOutcome(message=(f"Dynamo's code restored for {', '.join(done)}" + guard_edits_gone(gone))
                               if done else "no edits to undo", guard_edits_gone=gone)
        t = self.target(ctx)
        if isinstance(t, EditError):
            return EditOutcome(t)
        current = self._patch(t.original, t.dynamo)
        if current is None or not current.ops:
            return EditOutcome(EditError("not here", f"{t.original.co_name} has no edits to undo"))
        outcome = self._install(t, [], t.dynamo)
        self._patches.remove(current)
        return outcome

    def show(self, ctx: "PauseContext") -> PatchDiff | EditError:
        """Dynamo's code against the patched code of this stop's code."""
        t = self.target(ctx)
        if isinstance(t, EditError):
            return t
        patch = self._patch(t.original, t.dynamo)
        new = build_patched(t.dynamo, patch.ops) if patch and patch.ops else t.dynamo
        if isinstance(new, EditError):
            return new
        return diff_code(t.dynamo, new)

    def note_guard_editor(self, editor: Any) -> None:
        """The session's guard editor (`guard_edits.GuardEditor`): `save` writes its guard edits too."""
        self._guard_editor = editor

    def save(self, path: str) -> int | EditError:
        """Write every patch (and pending ones) to `path` as JSON, with the session's guard edits as guard
        operations of the patch for their code object (format 2); the number of patches written."""
        items: list[list[Any]] = [[p.key, list(p.ops), list(p.guards)] for p in self._patches if p.ops or p.guards]
        items += [[s.key, list(s.ops), list(s.guards)] for s in self._pending]
        for original, dynamo, gop in (self._guard_editor.patch_ops() if self._guard_editor is not None else []):
            key = patch_key(original, dynamo) if dynamo is not None else self._live_key(original)
            if key is None:
                self._say(f"guard edit on {original.co_name} not saved: no compile of it is alive to match it by")
                continue
            item = next((i for i in items if i[0].matches(key)), None)
            if item is None:
                item = [key, [], []]
                items.append(item)
            if gop not in item[2]:
                item[2].append(gop)
        items = [i for i in items if i[1] or i[2]]
        if not items:
            return EditError("not here", "no patches to save")
        rows = [(k, tuple(o), tuple(g), None, False) for k, o, g in items]
        try:
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(patch_file_json(rows), fh, indent=2)
                fh.write("\n")
        except OSError as exc:
            return EditError("patch file", f"cannot write {path}: {exc.strerror or exc}")
        return len(items)

    def _live_key(self, original: CodeType) -> PatchKey | None:
        """The `PatchKey` of the newest live cache entry of `original` (its Dynamo code's fingerprint)."""
        try:
            entries = compat.cache_entries(original)
        except Exception:  # noqa: BLE001
            return None
        for entry in entries:
            if getattr(entry, "code", None) is not None:
                return patch_key(original, self.dynamo_code_of(entry.code))
        return None

    def load(self, ctx: "PauseContext", path: str) -> EditOutcome:
        """Read `path`; install the patch for this stop's code, keep the file's other patches for later compiles.

        A malformed file, or a file with no patch for this code object, is rejected and nothing changes. At a
        recompile stop the matching patches wait for the compile that follows.
        """
        specs = read_patch_file(path)
        if isinstance(specs, EditError):
            return EditOutcome(specs)
        notes = [n for n in {_version_note(s) for s in specs} if n]
        if ctx.miss_event is not None:
            here = patch_key(ctx.miss_event.code)
            mine = [s for s in specs if s.key.same_function(here)]
            if not mine:
                return EditOutcome(self._no_match(path, specs, here))
            self.add_pending(specs)
            return EditOutcome(message="; ".join(notes + [f"{len(specs)} patch(es) from {path} will apply when "
                                                          f"Dynamo compiles a matching code object"]))
        t = self.target(ctx)
        if isinstance(t, EditError):
            return EditOutcome(t)
        here = self._key_of(t)
        mine = [s for s in specs if s.key.matches(here)]
        if not mine:
            return EditOutcome(self._no_match(path, specs, here))
        spec = mine[0]
        new = build_patched(t.dynamo, spec.ops)
        if isinstance(new, EditError):
            return EditOutcome(replace(new, message=f"{path}: {new.message}"))
        guard_note: list[str] = []
        if spec.guards:
            if t.event is None:
                return EditOutcome(EditError("not here", f"{path} carries guard operations: they are rebuilt when "
                                                         f"Dynamo compiles the code (load it at a compile stop, "
                                                         f"or run with --patch); nothing installed"))
            rebuilt = self._apply_guard_ops(t.original, spec.guards, t.event.guard_manager)
            if isinstance(rebuilt, EditError):
                return EditOutcome(replace(rebuilt, message=f"{path}: {rebuilt.message}"))
            old_manager, t.event.guard_manager = t.event.guard_manager, rebuilt
            guard_note = [f"{len(spec.guards)} guard operation(s) applied to compile {t.compile_id}"]
        outcome = self._install(t, list(spec.ops), new)
        if not outcome.ok and spec.guards and t.event is not None:
            t.event.guard_manager = old_manager
        if outcome.ok and spec.guards:
            patch = self._patch(t.original, t.dynamo)
            if patch is not None:
                patch.guards = list(spec.guards)
            outcome = replace(outcome, message="; ".join([outcome.message] + guard_note))
        if outcome.ok:
            others = [s for s in specs if s is not spec]
            self.add_pending(others, quiet=True)
            extra = [f"{len(others)} other patch(es) wait for their compiles"] if others else []
            outcome = replace(outcome, message="; ".join(notes + [outcome.message] + extra))
        return outcome

    def add_pending(self, specs: Iterable[PatchSpec], *, quiet: bool = False) -> None:
        """Patches (from a file) to apply to every later compile they match (``dynadbg run --patch FILE``)."""
        for spec in specs:
            if spec not in self._pending:
                self._pending.append(spec)
            note = _version_note(spec)
            if note and not quiet:
                self._say(note)

    # -- installing --------------------------------------------------------------------------------------------

    def _key_of(self, t: _Target) -> PatchKey:
        return patch_key(t.original, t.dynamo)

    def _patch(self, original: CodeType, dynamo: CodeType) -> _Patch | None:
        key = patch_key(original, dynamo)
        return next((p for p in self._patches if p.key.matches(key)), None)

    def _no_match(self, path: str, specs: Sequence[PatchSpec], here: PatchKey) -> EditError:
        theirs = ", ".join(s.key.describe() for s in specs[:3]) + (" ..." if len(specs) > 3 else "")
        same = [s for s in specs if s.key.same_function(here)]
        why = (" (same function, but Dynamo's code differs: the program, torch or Python changed)" if same else "")
        return EditError("no match", f"{path} patches {theirs}, not {here.describe()}{why}; nothing installed")

    def _apply_guard_ops(self, original: CodeType, guard_ops: Sequence[Any], wrapper: Any) -> Any:
        """A copy of `wrapper` with a patch file's guard operations applied against this compile's live objects
        (`toolkit_ops.apply_guard_ops`), or an `EditError` saying why they no longer fit (a guard the compile
        does not have, a source that cannot be read, an object that fails a transported guard)."""
        from .format.toolkit import problem_text
        from .toolkit_guards import Scope
        from .toolkit_ops import apply_guard_ops

        scope = compat.compile_frame_scope()
        f_locals, f_globals = scope if scope is not None else (None, _globals_of(original))
        applied = apply_guard_ops(wrapper.root, guard_ops, Scope(original, f_globals, f_locals), check_baked=False)
        if applied.problems:
            return EditError("patch file", "guard operations do not fit: "
                             + "; ".join(problem_text(p) for p in applied.problems))
        return compat.wrap_guard_root(applied.clone, wrapper)

    def _scope_of(self, ctx: "PauseContext") -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(f_locals, f_globals) of the paused frame's call, for guards on the sources an edit makes the graph
        read; None when the stop has no frame."""
        st = ctx.frame
        if st is None or st.frame is None:
            return None
        return (st.inputs if st.inputs else dict(st.frame.f_locals)), st.frame.f_globals

    def _guarded(self, original: CodeType, dynamo: CodeType, new: CodeType, wrapper: Any,
                 scope: tuple[dict[str, Any], dict[str, Any]] | None, *, event: Any = None) -> Any:
        """The unguarded-edit check (`toolkit_validate.guard_edit`): an edit that makes the graph read another
        object gets the guards torch built for the old one rebuilt on it, or is refused (an `EditError` naming
        the source). Returns the guard manager to use (None: `wrapper` as it is). At a compile stop (`event`)
        the event's manager is replaced by the guarded copy, and put back when the edit is undone."""
        if event is not None and new is dynamo:
            first = self._event_managers.pop(id(event), None)
            if first is not None and first[0] is event:
                event.guard_manager = first[1]
            return None
        from .format.toolkit import problem_text
        from .toolkit_validate import guard_edit

        f_locals, f_globals = scope if scope is not None else (None, _globals_of(original))
        guarded, check = guard_edit(dynamo, new, wrapper, original, f_locals, f_globals)
        if check.problems:
            return EditError("unguarded source", "; ".join(problem_text(p) for p in check.problems)
                             + " (the graph would read it with no guard: nothing installed)")
        if guarded is not None and event is not None:
            self._event_managers.setdefault(id(event), (event, event.guard_manager))
            event.guard_manager = guarded
        return guarded

    def _install(self, t: _Target, ops: list[EditOp], new: CodeType) -> EditOutcome:
        key = self._key_of(t)
        patch = self._patch(t.original, t.dynamo)
        if patch is None:
            patch = _Patch(key)
            self._patches.append(patch)
        patch.originals[id(t.original)] = t.original
        old_ops = list(patch.ops)
        patch.ops = list(ops)
        if t.event is not None:
            guarded = self._guarded(t.original, t.dynamo, new, t.event.guard_manager, compat.compile_frame_scope(),
                                    event=t.event)
            if isinstance(guarded, EditError):
                patch.ops = old_ops
                return EditOutcome(guarded)
            t.event.code = new
            if new is not t.dynamo:
                self._made[id(new)] = (patch, t.dynamo, new)
                self._touched[id(t.original)] = t.original
            if t.compile_id not in patch.compile_ids:
                patch.compile_ids.append(t.compile_id)
            self.session.generated[id(new)] = new
            what = "Dynamo's code restored" if new is t.dynamo else "installed"
            return EditOutcome(message=f"{what} in compile {t.compile_id} of {t.original.co_name}: this call runs it",
                               diff=diff_code(t.dynamo, new), code=new)
        done = self._install_later_all(patch, {id(t.dynamo): new})
        if isinstance(done, EditError):
            patch.ops = old_ops
            self._install_later_all(patch)
            return EditOutcome(done)
        what = "Dynamo's code restored" if new is t.dynamo else "installed"
        copy = self._precompiled.get(id(t.original), (t.original, {}))[1].get(id(t.dynamo))
        if copy is not None:
            new = copy.code     # the toolkit's build of the same edits: what the next call runs
        if not done and ops:
            return EditOutcome(message=f"{what}: no live cache entry of {t.original.co_name} runs this code now; the "
                                       f"edit applies when Dynamo compiles it again", diff=diff_code(t.dynamo, new),
                               code=new)
        where = ", ".join(patch.compile_ids[-3:]) or t.compile_id
        gone = self.take_gone()
        return EditOutcome(message=f"{what} for {t.original.co_name} ({where}) from the next call; this call keeps "
                                   f"running the code it started with" + guard_edits_gone(gone),
                           diff=diff_code(t.dynamo, new), code=new, guard_edits_gone=gone)

    def _install_later_all(self, patch: _Patch, prebuilt: dict[int, CodeType] | None = None) -> int | EditError:
        """Make every live cache entry of the patched code object whose Dynamo code matches the patch run
        `patch.ops` from the next call: a toolkit copy of each (`_install_copy`) in front of the cache entries,
        the copy it had before taken out. `prebuilt` maps id(Dynamo code) to the patched code already built (an
        edit's preview; it says whether anything is to install). Returns how many entries now run the patch."""
        reason = compat.precompile_entries_supported()
        if reason is not None:
            return EditError("unsupported", f"installing after the compile stop needs precompile entries: {reason}")
        prebuilt = prebuilt or {}
        count = 0
        for original in list(patch.originals.values()):
            try:
                entries = compat.cache_entries(original)
            except Exception as exc:  # noqa: BLE001
                return EditError("unsupported", f"cannot read the cache entries of {original.co_name}: {exc}")
            _orig, pres = self._precompiled.setdefault(id(original), (original, {}))
            for entry in entries:
                entry_code = getattr(entry, "code", None)
                if entry_code is None:
                    continue
                dynamo = self.dynamo_code_of(entry_code)
                if fingerprint(dynamo) != patch.key.fingerprint:
                    continue
                want = (prebuilt.get(id(dynamo)) or build_patched(dynamo, patch.ops)) if patch.ops else dynamo
                if isinstance(want, EditError):
                    return want
                count += 1
                old = pres.pop(id(dynamo), None)
                if old is not None:
                    self._unregister(old)
                editor = self._guard_editor
                if want is entry_code:
                    if old is not None and editor is not None:
                        self._gone += editor.copies.front_gone(old)   # guard edits made on the copy go with it
                    continue
                pre = self._install_copy(original, entry, dynamo, entry_code, patch, carried=old)
                if isinstance(pre, EditError):
                    if old is not None and editor is not None:
                        self._gone += editor.copies.front_gone(old)
                    return pre
                if old is not None and editor is not None:
                    editor.copies.front_moved(old, pre)
                pres[id(dynamo)] = pre
                if pre.code is not dynamo:
                    self._made[id(pre.code)] = (patch, dynamo, pre.code)
                self._register(original, pre)
                cid = str(getattr(entry, "compile_id", "?"))
                if cid not in patch.compile_ids:
                    patch.compile_ids.append(cid)
        return count

    def _install_copy(self, original: CodeType, entry: Any, dynamo: CodeType, entry_code: CodeType,
                      patch: _Patch, carried: _Precompiled | None = None) -> _Precompiled | EditError:
        """A toolkit copy of the cache entry `entry` (its guards; Dynamo's code `dynamo` with `patch.ops`),
        validated and installed in front of the cache entries (``Draft.install("front")``). The guard edits made
        on `carried` (the copy it succeeds) are made on it too. A copy the toolkit refuses (a source the graph
        would read with no guard) is an `EditError` with the toolkit's reason."""
        from . import toolkit
        from .format.toolkit import problem_text

        scope = self._live_scope
        f_globals = scope[1] if scope is not None else _globals_of(original)
        base = toolkit.compile_entry(original, dynamo, entry.guard_manager, getattr(entry, "compile_id", None),
                                     f_globals)
        draft = base.copy()
        draft.call_inputs = dict(scope[0]) if scope is not None else None
        draft.edit_ops = list(patch.ops)
        try:
            if carried is not None and self._guard_editor is not None:
                self._guard_editor.copies.apply_front(carried, draft)
            handle = draft.install("front")
        except toolkit.Refused as exc:
            problems = exc.validation.problems
            kinds = {p.kind.value for p in problems}
            if kinds <= {"edit"}:
                return EditError("invalid edit", "; ".join(problem_text(p) for p in problems))
            return EditError("unguarded source", "; ".join(problem_text(p) for p in problems)
                             + " (the graph would read it with no guard: nothing installed)")
        except toolkit.ToolkitError as exc:
            return EditError("unsupported", f"cannot install the edit: {exc}")
        return _Precompiled(dynamo, entry_code, handle, patch)

    def _register(self, original: CodeType, pre: _Precompiled) -> None:
        """The session learns the copy's code (the toolkit registered it with torch as Dynamo's code's stand-in)."""
        s = self.session
        s.generated[id(pre.code)] = pre.code
        s.mark_changed(id(pre.code))  # a new code object may need tracing
        if s.capture is not None:
            try:
                s.capture.register_generated(pre.code, like=pre.entry_code)
            except KeyError:
                pass
        self._touched[id(original)] = original

    def _unregister(self, pre: _Precompiled) -> None:
        """Take the copy out (`toolkit.Handle.remove`: its precompile entry goes) and point the capture back at the
        cache entry's code."""
        pre.handle.remove()
        capture = self.session.capture
        if capture is not None:
            try:
                capture.register_generated(pre.entry_code, like=pre.code)
            except KeyError:
                pass

    def on_reset(self, original: CodeType) -> None:
        """`original`'s cache and precompile entries were dropped (``reset_code``): forget the precompile
        entries; the compile hook re-applies the patches when it compiles again."""
        _orig, pres = self._precompiled.pop(id(original), (original, {}))
        for pre in pres.values():
            self._unregister(pre)
        precompile.forget(original)

    # -- hooks -------------------------------------------------------------------------------------------------

    def _on_compile(self, event: Any) -> None:
        """Session compile hook: apply the patch (interactive, or from a file) that matches this compile."""
        if not self.active:
            return
        original = event.original_code
        here = patch_key(original)
        patches = [p for p in self._patches if (p.ops or p.guards) and p.key.same_function(here)]
        pending = [s for s in self._pending if s.key.same_function(here)]
        if not patches and not pending:
            return
        dynamo = event.dynamo_code
        key = patch_key(original, dynamo)
        cid = str(event.compile_id)
        patch = next((p for p in patches if p.key.matches(key)), None)
        if patch is None:
            spec = next((s for s in pending if s.key.matches(key)), None)
            if spec is None:
                why = {id(s): "the program, torch or Python changed" for s in pending}
                for s in pending + [_spec(p) for p in patches]:
                    said = (s.key, key.fingerprint)
                    if said not in self._mismatch_said:
                        self._mismatch_said.add(said)
                        reason = why.get(id(s), "Dynamo generated other code for this compile")
                        self._say(f"patch for {s.key.describe()} does not match Dynamo's code of compile {cid} "
                                  f"(code {key.fingerprint[:12]}: {reason}); not applied")
                return
            self._pending.remove(spec)
            patch = _Patch(spec.key, spec.ops, spec.guards)
            self._patches.append(patch)
        patch.originals[id(original)] = original
        new = build_patched(dynamo, patch.ops)
        if isinstance(new, EditError):
            self._say(f"patch for {patch.key.describe()} not applied to compile {cid}: {new}")
            return
        if patch.guards:
            rebuilt = self._apply_guard_ops(original, patch.guards, event.guard_manager)
            if isinstance(rebuilt, EditError):
                self._say(f"patch for {patch.key.describe()} not applied to compile {cid}: {rebuilt}")
                return
            event.guard_manager = rebuilt
        guarded = self._guarded(original, dynamo, new, event.guard_manager, compat.compile_frame_scope(),
                                event=event)
        if isinstance(guarded, EditError):
            self._say(f"patch for {patch.key.describe()} not applied to compile {cid}: {guarded}")
            return
        event.code = new
        self._made[id(new)] = (patch, dynamo, new)
        self._touched[id(original)] = original
        if cid not in patch.compile_ids:
            patch.compile_ids.append(cid)
        self._say(f"patch applied to {original.co_name} compile {cid} "
                  f"({patch_contents(len(patch.ops), len(patch.guards))})")

    def _teardown(self) -> None:
        """Drop every cache entry an edit touched (its code was replaced, or a precompile entry sits in front):
        the next call compiles Dynamo's own code again."""
        self.active = False
        for _orig, pres in list(self._precompiled.values()):
            for pre in pres.values():
                pre.handle.remove()
        for original in list(self._touched.values()):
            try:
                compat.reset_code(original)
            except Exception as exc:  # noqa: BLE001
                self._say(f"could not reset {original.co_name}: {exc}")
        self._precompiled.clear()
        self._touched.clear()
        for spec in self._pending:
            self._say(f"patch for {spec.key.describe()} was never applied: no compile matched it")
        self._pending.clear()

    def _say(self, text: str) -> None:
        self.session.message(text)

    def serving_entry(self, code: CodeType) -> Any:
        """A cache-entry-like view (``code``, ``compile_id``, ``guard_manager``) of the precompile entry this
        manager installed to run `code`, or None. Lets ``guards`` show the tree of a frame running edited code
        (after a guard edit there swapped the copy, the tree of the copy now in its place)."""
        pre = self.front_copy(code)
        if pre is None:
            return None
        info = self.session.generated_info(code)
        return SimpleNamespace(code=pre.code, compile_id=info.compile_id if info else "?",
                               guard_manager=pre.guard_manager)


def _globals_of(original: CodeType) -> dict[str, Any]:
    """The globals of the module `original` was defined in (found through its function objects), or {}."""
    import gc

    for ref in gc.get_referrers(original):
        if getattr(ref, "__code__", None) is original:
            found = getattr(ref, "__globals__", None)
            if isinstance(found, dict):
                return found
    return {}


def _spec(patch: _Patch) -> PatchSpec:
    return PatchSpec(patch.key, tuple(patch.ops))
