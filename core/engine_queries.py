"""The engine methods that read what torch compiled for the paused frame: its graphs, cache entries, guard
trees, guard costs, recompile records and guard diffs.

`CompileQueries` is a group of `Session` (`engine_base.Group`); `Session` names its public methods (see
`dynadbg.core.protocol.Engine` for each one's contract)."""

from __future__ import annotations

import re
from dataclasses import replace
from types import CodeType
from typing import Any

from . import compat
from .engine_base import Group, EngineHost, engine_method, refuse
from .engine_decisions import Decisions
from .model import (
    CompilesData,
    EngineError,
    EntryDiff,
    ErrorKind,
    FrameRecompiles,
    GraphView,
    CompiledFrameView,
    GuardCostView,
    GuardTree,
    RecompileRecord,
    StopKind,
)
from .recompile import _compile_order_key, entry_diffs, frame_recompiles


_COMPILE_ID_RE = re.compile(r"^!?\d+(?:/\d+)+$")


class CompileQueries(Group):
    """What torch compiled for the paused frame (`decisions`: the recompile stop's record comes from there)."""

    def __init__(self, host: EngineHost, decisions: Decisions) -> None:
        super().__init__(host)
        self.decisions = decisions

    def _compiled_frame(self) -> Any:
        if self.host.capture is None:
            return None
        orig = self.host._original()
        if orig is None:
            return None
        for f in self.host.capture.frames():
            if f.key == id(orig):
                return f
        return None

    @engine_method()
    def graphs(self, name: str | None = None) -> tuple[GraphView, ...] | EngineError:
        frame = self._compiled_frame()
        if frame is None:
            refuse("no compiled code object here", ErrorKind.NOT_HERE)
        graphs = list(frame.graphs)
        if name:
            graphs = [g for g in graphs if name in g.name]
        else:
            stop = self.host._paused().stop
            cid = stop.compile_id if stop else None
            mine = [g for g in graphs if g.compile_id == cid]
            graphs = mine or graphs
        if not graphs:
            refuse("no FX graph was captured for this code object" + (f" matching {name!r}" if name else ""),
                   ErrorKind.NOT_HERE)
        return tuple(graphs)

    @engine_method()
    def entries(self) -> FrameRecompiles | EngineError:
        frame = self._compiled_frame()
        if frame is None:
            refuse("no compiled code object here", ErrorKind.NOT_HERE)
        serving = None
        code = self.host._current_code()
        if code is not None and self.host._paused().kind is not StopKind.RECOMPILE:
            info = self.host.generated_info(code)
            serving = info.compile_id if info else None
        counted = bool(getattr(self.host.capture, "hits_counted", False))
        fr = frame_recompiles(frame, self.host.recompiles.records(), serving=serving, hits_counted=counted)
        return replace(fr, guard_costs=self._guard_costs(frame, self.host._original()))

    def _guard_costs(self, frame: CompiledFrameView, original: CodeType | None) -> tuple[GuardCostView, ...]:
        """Guard count, torch's guard-eval latency and the guards per source of each live entry of `frame`
        (`original`: its original code object)."""
        import dataclasses

        from . import guard_cost, guards

        if original is None:
            return ()
        try:
            live = {str(e.compile_id): e for e in compat.cache_entries(original)}
        except Exception:  # noqa: BLE001 - no cache entries readable: no costs
            return ()
        log = self.host.guard_costs
        out = []
        for view in frame.entries:
            entry = live.get(view.compile_id)
            if entry is None or view.dropped:
                continue
            try:
                tree = dataclasses.asdict(guards.entry_guard_tree(entry))
            except Exception:  # noqa: BLE001 - an odd tree: count unknown
                tree = None
            cost = log.get(view.compile_id) if log is not None else None
            groups = guard_cost.group_by_source(tree) if tree else {}
            count = guard_cost.guard_count(tree) if tree else None
            names = guard_cost.advice(groups, entries=len(live), total=count) if tree else []
            out.append(GuardCostView(
                view.compile_id, count, None if cost is None else round(cost.eval_us, 3),
                tuple((g, v["guards"], v["tensors"]) for g, v in groups.items()),
                tuple(self._cut_text(n, original) for n in names)))
        return tuple(out)

    def _cut_text(self, name: str, original: CodeType) -> str:
        """A documented guard-overhead cut, on the user's own ``torch.compile`` call when the capture saw it
        (`callsites`); else torch's snippet with its placeholder name (no name guessed from the function)."""
        from . import guard_cost
        from .callsites import with_option

        log = getattr(self.host.capture, "callsites", None)
        site = log.site_for(original) if log is not None else None
        cut_by_filter = guard_cost.filter_cut(name)
        if site is None or cut_by_filter is None:
            return guard_cost.advice_text(name)
        fixed = with_option(site, "guard_filter_fn", f"torch.compiler.{name}")
        if fixed is None:
            return guard_cost.advice_text(name)
        return f"{fixed}: {cut_by_filter[1]} (in place of {site.text} at {site.where})"

    @engine_method(anytime=True)
    def compiles(self) -> CompilesData:
        views = list(self.host.capture.frames()) if self.host.capture is not None else []
        records = self.host.recompiles.records()
        counted = bool(getattr(self.host.capture, "hits_counted", False))
        with_entries = [v for v in views if v.entries or v.recompiles or v.graph_breaks]
        without = tuple((v.name, v.skipped) for v in views if not (v.entries or v.recompiles or v.graph_breaks))
        frames = tuple(frame_recompiles(v, records, hits_counted=counted) for v in with_entries)
        return CompilesData(frames=frames, timeline=tuple(records),
                            limit_hits=tuple(r for r in records if r.limit_hit), without_entries=without)

    def _serving_entry(self, code: CodeType) -> Any:
        info = self.host.generated_info(code)
        if info is None:
            return None
        for e in compat.cache_entries(info.original):
            if e.code is code:
                return e
        # edited code runs from the toolkit copy the patch manager installed in front of the cache entries
        return self.host.patch_manager.serving_entry(code)

    def guard_trees_now(self) -> list[GuardTree]:
        """The guard trees `guard_trees` returns, on the worker thread, [] where there are none."""
        from . import guards, toolkit

        ctx = self.host._paused()
        if ctx.miss_event is not None:
            ev = ctx.miss_event
            return [guards.entry_guard_tree(e, ev.f_locals, backend=getattr(ev, "backend", None)) for e in ev.entries]
        if ctx.compile_event is not None:
            compiled = ctx.compile_event
            inputs = getattr(compiled, "f_locals", None)
            return [guards.build_guard_tree(compiled.guard_manager, str(compiled.compile_id), inputs)]
        st = ctx.frame
        if st is None:
            return []
        entry = self._serving_entry(st.frame.f_code)
        if entry is None:
            # a guard edit replaced the entry with a copy that torch gets at the next call: show the copy
            info = self.host.generated_info(st.frame.f_code)
            waiting = toolkit.waiting_copy(info.original, st.frame.f_code) if info is not None else None
            if waiting is None:
                return []
            return [guards.build_guard_tree(waiting[0], waiting[1], st.inputs or None)]
        return [guards.entry_guard_tree(entry, st.inputs or None)]

    @engine_method()
    def guard_trees(self) -> tuple[GuardTree, ...] | EngineError:
        trees = self.guard_trees_now()
        if not trees:
            refuse("no cache entry is known for this frame", ErrorKind.NOT_HERE)
        return tuple(trees)

    @engine_method()
    def what_if(self) -> tuple[GuardTree, ...] | EngineError:
        from . import guards

        ctx = self.host._paused()
        backend = None
        if ctx.miss_event is not None:
            entries, inputs = ctx.miss_event.entries, ctx.miss_event.f_locals
            backend = getattr(ctx.miss_event, "backend", None)
        else:
            st = self.host._need_frame()
            info = self.host.generated_info(st.frame.f_code)
            if info is None:
                refuse("the original code of this frame is not known", ErrorKind.NOT_HERE)
            entries, inputs = compat.cache_entries(info.original), st.inputs
        return tuple(guards.entry_guard_tree(e, inputs, backend=backend) for e in entries)

    @engine_method()
    def recompile_records(self, compile_id: str | None = None) -> tuple[RecompileRecord, ...] | EngineError:
        ctx = self.host._paused()
        if ctx.kind is StopKind.RECOMPILE and not compile_id:
            return (self.decisions.current_record(),)
        orig = self.host._original()
        if orig is None:
            refuse("no compiled code object here", ErrorKind.NOT_HERE)
        records = self.host.recompiles.for_code(id(orig))
        if compile_id:
            if not _COMPILE_ID_RE.match(compile_id):
                refuse(f"bad compile id {compile_id!r} (e.g. 0/1)")
            records = tuple(r for r in records if r.compile_id == compile_id)
            if not records:
                refuse(f"no recompile of {orig.co_name} produced {compile_id}", ErrorKind.NOT_HERE)
        return tuple(records)

    @engine_method()
    def guard_diffs(self, old: str | None = None, new: str | None = None) -> tuple[EntryDiff, ...] | EngineError:
        from . import guards
        if (old is None) != (new is None):
            refuse("usage: diff [OLD_COMPILE_ID NEW_COMPILE_ID]")
        orig = self.host._original()
        if orig is None:
            refuse("no compiled code object here", ErrorKind.NOT_HERE)
        entries = [e for e in compat.cache_entries(orig) if getattr(e, "code", None) is not None]
        by_id = {str(e.compile_id): e for e in entries}
        if old is not None and new is not None:
            missing = [p for p in (old, new) if p not in by_id]
            if missing:
                refuse(f"no live cache entry {', '.join(missing)} (entries: {', '.join(sorted(by_id)) or 'none'})",
                       ErrorKind.NOT_HERE)
            chosen = [by_id[old], by_id[new]]
        else:
            chosen = sorted(entries, key=lambda e: _compile_order_key(str(e.compile_id)))
        if len(chosen) < 2:
            return ()
        return tuple(entry_diffs([guards.entry_guard_tree(e) for e in chosen]))
