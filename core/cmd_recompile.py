"""Commands for recompile insight (issue 4): guard diffs, dropping guards, marking dimensions dynamic, exports.

A mixin of `commands.CommandSet`: each ``do_*`` method is a command; its docstring is its help line.

At a recompile stop (``--break-on recompile``) the choices are ``recompile``, ``eager``, ``skip`` (in
`commands`), ``drop [ID...]`` and ``dynamic NAME DIM`` (here); each prints the code a user would write to get
the same effect for good. ``why`` and ``diff`` show the recorded analysis anywhere. The analysis itself lives in
`dynadbg.core.recompile`; bad input returns an error line and changes nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from . import compat
from .model import CommandResult, StopKind

if TYPE_CHECKING:
    from .recompile import GuardDropper, RecompileRecord
    from .session import PauseContext, Session

_ID_RE = re.compile(r"^(?:(?P<cid>!?\d+(?:/\d+)+):)?(?P<leaf>g\d+)$")


class RecompileCommands:
    """Mixed into `CommandSet` (``self.s`` is the Session, ``self.ctx`` the current PauseContext)."""

    s: "Session"
    ctx: "PauseContext"

    # -- state -----------------------------------------------------------------------------------------------
    def _log(self) -> Any:
        return getattr(self.s, "recompiles", None)

    def _dropper(self) -> "GuardDropper":
        dropper = getattr(self, "_guard_dropper", None)
        if dropper is None:
            from .recompile import GuardDropper

            dropper = GuardDropper(self.s._message, self._log())
            self.s.compile_hooks.append(dropper.on_compiled)
            self.s.teardown_hooks.append(dropper.undo)
            self._guard_dropper = dropper
        return dropper

    def _record(self) -> "RecompileRecord":
        """The record of the current recompile stop (raises a usage error elsewhere)."""
        from .commands import _Usage
        from .recompile import analyze_miss

        ctx = self.ctx
        if ctx.kind is not StopKind.RECOMPILE or ctx.miss_event is None:
            raise _Usage("only at a recompile stop")
        record = ctx.extra.get("recompile")
        if record is None:
            ev = ctx.miss_event
            record = ctx.extra["recompile"] = analyze_miss(ev.code, ev.f_locals, ev.entries)
        log = self._log()
        if log is not None:
            kept = log.latest(record.seq)
            if kept is not None and kept.code_key == record.code_key:
                record = kept
        return record

    def _choice_note(self, decision: str) -> str:
        """Text after a recompile-stop choice: the code that gets the same effect permanently."""
        from .recompile import choice_code

        try:
            record = self._record()
        except Exception:  # noqa: BLE001
            record = None
        code = choice_code(decision, record)
        return f"\npermanently:\n{code}" if code else ""

    def _resume_recompile(self, text: str) -> CommandResult:
        from .session import Mode

        self.ctx.decision = "recompile"
        self.s.mode = Mode.CONTINUE
        return CommandResult(output=text, resumed=True)

    # -- choices -----------------------------------------------------------------------------------------------
    def do_drop(self, arg: str) -> CommandResult:
        """drop [ID...]: (recompile stop) drop guards from the entry compiled next, then recompile (default: every failing guard of the first entry listed; IDs as `g5` or `0/1:g5`)."""
        from .commands import _Usage
        from .recompile import default_drop_leaves, drop_spec, filter_snippet, fn_name_for

        record = self._record()
        if record.limit is not None and record.limit.hit_now:
            raise _Usage(f"this compile hits torch._dynamo.config.{record.limit.exceeds}: Dynamo will not compile, "
                         f"so there is no new entry to drop guards from (eager or skip instead)")
        if not record.entries:
            raise _Usage("no cache entry was analysed at this stop")
        tokens = arg.replace(",", " ").split()
        if tokens:
            leaves = [self._leaf_by_id(record, tok) for tok in tokens]
        else:
            leaves = default_drop_leaves(record)
            if not leaves:
                raise _Usage(f"no failing guard of {record.entries[0].compile_id} can be dropped by a guard filter; "
                             f"name guard ids (see `guards fail`)")
        specs = []
        for leaf in leaves:
            try:
                specs.append(drop_spec(leaf))
            except ValueError as exc:
                raise _Usage(str(exc)) from None
        # everything validated: now change state
        self._dropper().schedule(self.ctx.miss_event.code, specs, record)
        what = ", ".join(f"{s.leaf.id} {s.leaf.guard_type} {'; '.join(s.leaf.code)[:120]}" for s in specs)
        log = self._log()
        if log is not None:
            log.update(record, action="drop " + " ".join(s.leaf.id for s in specs))
        lines = [f"recompiling without: {what}"]
        for spec in specs:
            if spec.warning:
                lines.append(f"WARNING: {spec.warning}")
        lines.append("permanently:")
        lines.append(filter_snippet(specs, fn_name_for(record)))
        from .recompile import config_hints

        lines += [f"{hint}   # torch's own hint" for hint in config_hints(record)]
        return self._resume_recompile("\n".join(lines))

    def _leaf_by_id(self, record: "RecompileRecord", token: str) -> Any:
        """The leaf `token` (``g5`` of the first entry listed, or ``0/1:g5``) names, from the entry's full tree."""
        from .commands import _Usage
        from . import guards

        m = _ID_RE.match(token)
        if m is None:
            raise _Usage(f"bad guard id {token!r}: use g5 or COMPILE_ID:g5 (e.g. 0/1:g5)")
        cid, leaf_id = m.group("cid"), m.group("leaf")
        ev = self.ctx.miss_event
        entries = list(ev.entries)
        if cid is None:
            entry = entries[0]
        else:
            entry = next((e for e in entries if str(e.compile_id) == cid), None)
            if entry is None:
                raise _Usage(f"no cache entry {cid} here (entries: {', '.join(str(e.compile_id) for e in entries)})")
        for verdict in record.entries:
            if verdict.compile_id == str(entry.compile_id):
                for leaf in verdict.failing:
                    if leaf.id == leaf_id:
                        return leaf
        tree = guards.entry_guard_tree(entry, ev.f_locals)
        for leaf in guards.iter_leaves(tree):
            if leaf.id == leaf_id:
                return leaf
        raise _Usage(f"entry {entry.compile_id} has no guard {leaf_id} (it has g0..g{max(tree.leaf_count - 1, 0)})")

    def do_dynamic(self, arg: str) -> CommandResult:
        """dynamic NAME DIM: (recompile stop) mark dimension DIM of input tensor NAME dynamic (torch._dynamo.mark_dynamic), then recompile."""
        from .commands import _Usage
        from .recompile import fn_name_for

        record = self._record()
        parts = arg.split()
        if len(parts) != 2:
            raise _Usage("usage: dynamic NAME DIM   (e.g. dynamic x 0)")
        name, dim_text = parts
        try:
            dim = int(dim_text)
        except ValueError:
            raise _Usage(f"DIM must be an integer, not {dim_text!r}") from None
        if record.limit is not None and record.limit.hit_now:
            raise _Usage(f"this compile hits torch._dynamo.config.{record.limit.exceeds}: Dynamo will not compile")
        f_locals = self.ctx.miss_event.f_locals
        value = self._input_value(name, f_locals)
        compat.load()
        torch = compat.torch
        if not isinstance(value, torch.Tensor):
            kind = type(value).__name__
            extra = (" (ints and floats become dynamic on their own once they change: automatic dynamic)"
                     if isinstance(value, (int, float)) else "")
            raise _Usage(f"{name} is a {kind}, not a tensor{extra}")
        ndim = value.dim()
        if not -ndim <= dim < ndim:
            raise _Usage(f"{name} has {ndim} dimension(s): DIM must be in {-ndim}..{ndim - 1}")
        dim %= ndim
        try:
            compat.mark_dynamic(value, dim)
        except Exception as exc:  # noqa: BLE001 - torch refuses (e.g. marked static): nothing changed
            raise _Usage(f"torch refused: {type(exc).__name__}: {exc}") from None
        shown = compat.strip_local_scope(name) if name.startswith("L[") else name
        log = self._log()
        if log is not None:
            log.update(record, action=f"mark_dynamic({shown}, {dim})")
        text = (f"marked {shown} dimension {dim} dynamic (size now {int(value.shape[dim])}); recompiling\n"
                f"permanently:\ntorch._dynamo.mark_dynamic({shown}, {dim})   # before calling {fn_name_for(record)}")
        return self._resume_recompile(text)

    @staticmethod
    def _input_value(name: str, f_locals: dict[str, Any]) -> Any:
        from .commands import _Usage

        if name.isidentifier():
            if name not in f_locals:
                raise _Usage(f"no input named {name!r} (inputs: {', '.join(sorted(f_locals)) or 'none'})")
            return f_locals[name]
        try:
            code = compile(name, "<dynamic>", "eval")
        except SyntaxError:
            raise _Usage(f"bad NAME {name!r}: an input name or expression such as L['x'] or batch['x']") from None
        try:
            return eval(code, {"__builtins__": {}, "L": f_locals}, dict(f_locals))  # noqa: S307 - user's own names
        except Exception as exc:  # noqa: BLE001
            raise _Usage(f"{name}: {type(exc).__name__}: {exc}") from None

    # -- insight anywhere ----------------------------------------------------------------------------------------
    def do_why(self, arg: str) -> CommandResult:
        """why [COMPILE_ID]: why this code object recompiled: every failing guard of every entry, guard diffs, recompile limit (at a recompile stop: this one)."""
        from .commands import _Usage
        from .recompile import record_text

        log = self._log()
        if self.ctx.kind is StopKind.RECOMPILE and not arg:
            record = self._record()
            return CommandResult(output=record_text(record), data=record)
        orig = self._original_code()  # type: ignore[attr-defined]
        if orig is None:
            raise _Usage("no compiled code object here")
        records = log.for_code(id(orig)) if log is not None else ()
        if arg:
            if not re.match(r"^!?\d+(?:/\d+)+$", arg):
                raise _Usage(f"bad compile id {arg!r} (e.g. 0/1)")
            records = tuple(r for r in records if r.compile_id == arg)
            if not records:
                raise _Usage(f"no recompile of {orig.co_name} produced {arg}")
        if not records:
            return CommandResult(output=f"{orig.co_name} has not recompiled in this run", data=())
        return CommandResult(output="\n\n".join(record_text(r) for r in records), data=records)

    def do_diff(self, arg: str) -> CommandResult:
        """diff [OLD NEW]: guard differences between this code object's cache entries (consecutive ones, or OLD to NEW)."""
        from .commands import _Usage
        from . import guards
        from .recompile import _compile_order_key, diffs_text, entry_diffs

        parts = arg.split()
        if len(parts) not in (0, 2):
            raise _Usage("usage: diff [OLD_COMPILE_ID NEW_COMPILE_ID]")
        orig = self._original_code()  # type: ignore[attr-defined]
        if orig is None:
            raise _Usage("no compiled code object here")
        entries = [e for e in compat.cache_entries(orig) if getattr(e, "code", None) is not None]
        by_id = {str(e.compile_id): e for e in entries}
        if parts:
            missing = [p for p in parts if p not in by_id]
            if missing:
                raise _Usage(f"no live cache entry {', '.join(missing)} (entries: {', '.join(sorted(by_id)) or 'none'})")
            chosen = [by_id[p] for p in parts]
        else:
            chosen = sorted(entries, key=lambda e: _compile_order_key(str(e.compile_id)))
        if len(chosen) < 2:
            return CommandResult(output="fewer than two cache entries: nothing to compare", data=())
        trees = [guards.entry_guard_tree(e) for e in chosen]
        diffs = entry_diffs(trees)
        return CommandResult(output=diffs_text(diffs, max_per_pair=200), data=diffs)

    # -- compiles / entries (called by CommandSet.do_compiles / do_entries) ------------------------------------
    def _compiles_result(self) -> CommandResult:
        from .recompile import CompilesData, compiles_text, frame_recompiles

        views = self.s.compiled_frames()
        log = self._log()
        records = log.records() if log is not None else ()
        counted = bool(getattr(self.s.capture, "hits_counted", False))
        with_entries = [v for v in views if v.entries or v.recompiles or v.graph_breaks]
        without = tuple((v.name, v.skipped) for v in views if not (v.entries or v.recompiles or v.graph_breaks))
        frames = tuple(frame_recompiles(v, records, hits_counted=counted) for v in with_entries)
        data = CompilesData(frames=frames, timeline=tuple(records),
                            limit_hits=tuple(r for r in records if r.limit_hit), without_entries=without)
        return CommandResult(output=compiles_text(data), data=data)

    def _entries_result(self) -> CommandResult:
        from .commands import _Usage
        from .recompile import entries_text, frame_recompiles

        frame = self._compiled_frame()  # type: ignore[attr-defined]
        if frame is None:
            raise _Usage("no compiled code object here")
        serving = None
        code = self.current_code()  # type: ignore[attr-defined]
        if code is not None and self.ctx.kind is not StopKind.RECOMPILE:
            info = self.s.generated_info(code)
            serving = info[1] if info else None
        log = self._log()
        records = log.records() if log is not None else ()
        counted = bool(getattr(self.s.capture, "hits_counted", False))
        fr = frame_recompiles(frame, records, serving=serving, hits_counted=counted)
        return CommandResult(output=entries_text(fr), data=fr)
