"""The capture's records (mutable, owned by `capture.Capture`, guarded by its lock) and the frozen views built from
them: a compiled frame (`CompiledFrameView`), a cache entry (`CacheEntryView`), the graph break behind a resume
function.

The views read torch's live cache entries (`compat.cache_entries`) and, with ``guards``, build guard trees
(`dynadbg.core.guards`): call them on the program's worker thread.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import replace
from types import CodeType
from typing import Any, Callable, Iterable

from . import compat, facts
from .graph_break_dups import DuplicateJudge
from .disasm import code_view
from .model import CacheEntryView, CompiledFrameView, GeneratedInfo, GraphBreakView, GraphView, RecompileView


class _Entry:
    __slots__ = ("frame", "compile_id", "dynamo_code", "code", "guard_manager", "backend", "hits", "names")

    def __init__(self, frame: "_Frame", compile_id: str, dynamo_code: CodeType, guard_manager: Any) -> None:
        self.frame = frame
        self.compile_id = compile_id
        self.dynamo_code = dynamo_code      # kept alive on purpose (CleanupManager)
        self.code = dynamo_code             # what runs: a replacement if on_compiled made one
        self.guard_manager = guard_manager
        self.backend: str | None = None
        self.hits = 0
        self.names: tuple[CodeType | None, tuple[str, ...]] = (None, ())  # (code scanned, its global names)

    def global_names(self) -> tuple[str, ...]:
        """``__compiled_fn_*`` / ``__resume_at_*`` globals the current code loads (scanned once per code)."""
        scanned, names = self.names
        if scanned is not self.code:
            names = _global_names(self.code)
            self.names = (self.code, names)
        return names


class _Break:
    __slots__ = ("reason", "filename", "lineno", "user_line", "duplicate", "summary", "notes", "torch_duplicate",
                 "trace_id")

    def __init__(self, reason: str, filename: str | None, lineno: int | None, user_line: str | None) -> None:
        #: torch's own judgement (`graph_break_dups.DuplicateJudge`), None when it could not be made
        self.torch_duplicate: bool | None = None
        #: the id torch logs the break under (``"2/0_1"``: compile 2/0, restart 1), None when unknown
        self.trace_id: str | None = None
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        self.user_line = user_line
        self.duplicate = False
        # torch's reason parsed here, once: front ends and reports read the parts
        self.summary, self.notes = facts.parse_break_reason(reason)

    def view(self, compile_id: str, resume_functions: tuple[str, ...]) -> GraphBreakView:
        return GraphBreakView(compile_id, self.reason, self.filename, self.lineno, self.user_line, resume_functions,
                              self.duplicate, self.summary, self.notes, self.trace_id)


class _Compile:
    """Everything seen during one compile (one compile id, one `CatchErrorsWrapper` call)."""

    __slots__ = ("compile_id", "serial", "breaks", "fallback_breaks", "graphs", "recompile_reasons", "entry")

    def __init__(self, compile_id: str, serial: int) -> None:
        self.compile_id = compile_id
        self.serial = serial
        self.breaks: list[_Break] = []           # from log_graph_break: the text TORCH_LOGS prints
        self.fallback_breaks: list[_Break] = []  # from compile_subgraph(GraphCompileReason), used if no log
        self.graphs: dict[str, GraphView] = {}
        self.recompile_reasons: tuple[str, ...] | None = None
        self.entry: _Entry | None = None


class _Frame:
    __slots__ = ("code", "compiles", "skipped", "origin", "resume_offset", "source", "source_done")

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.compiles: list[_Compile] = []
        self.skipped: str | None = None
        found = compat.resume_origin(code)
        self.origin: CodeType | None = found[0] if found else None
        self.resume_offset: int | None = found[1] if found else None
        self.source: str | None = None
        self.source_done = False

    @property
    def is_resume(self) -> bool:
        return self.origin is not None

    def compile(self, compile_id: str, serial: int) -> _Compile:
        for rec in reversed(self.compiles):
            if rec.compile_id == compile_id and rec.serial == serial:
                return rec
        rec = _Compile(compile_id, serial)
        self.compiles.append(rec)
        return rec


def frame_view(rec: _Frame, guards: bool, resume_globals: dict[str, CodeType], hits_counted: bool) -> CompiledFrameView:
    """The frozen view of one compiled frame's records (`Capture.frames`); reads torch's live cache entries."""
    code = rec.code
    try:
        live = list(compat.cache_entries(code))
    except Exception:  # noqa: BLE001 - no live entries (missing API)
        live = []
    if not rec.source_done:
        rec.source = _source_of(code)
        rec.source_done = True
    entries: list[CacheEntryView] = []
    graph_breaks: list[GraphBreakView] = []
    recompiles: list[RecompileView] = []
    graphs: list[GraphView] = []
    for comp in rec.compiles:
        view = None
        if comp.entry is not None:
            view = entry_view(comp.entry, _live_match(live, comp.entry), guards, resume_globals, hits_counted)
            entries.append(view)
        if comp.recompile_reasons is not None:
            recompiles.append(RecompileView(comp.compile_id, comp.recompile_reasons))
        resumes = view.resume_functions if view is not None else ()
        for brk in comp.breaks or comp.fallback_breaks:
            graph_breaks.append(brk.view(comp.compile_id, resumes))
        used = set(view.graphs) if view is not None else None
        graphs.extend(g for name, g in comp.graphs.items() if used is None or name in used)
    origin = rec.origin
    return CompiledFrameView(
        key=id(code),
        name=code.co_name,
        filename=code.co_filename,
        firstlineno=code.co_firstlineno,
        original=code_view(code, generated=False, is_resume=rec.is_resume),
        source=rec.source,
        is_resume=origin is not None,
        resume_origin=(
            f"{origin.co_name} ({os.path.basename(origin.co_filename)}:{origin.co_firstlineno})"
            if origin is not None else None
        ),
        resume_offset=rec.resume_offset,
        entries=tuple(entries),
        graph_breaks=tuple(graph_breaks),
        recompiles=tuple(recompiles),
        graphs=tuple(graphs),
        skipped=rec.skipped,
    )


def entry_view(entry: _Entry, live: Any, guards: bool, resume_globals: dict[str, CodeType],
               hits_counted: bool) -> CacheEntryView:
    """The frozen view of one cache entry's record (`live`: torch's entry for it, None when dropped)."""
    backend = entry.backend
    if backend is None and live is not None:
        backend = entry.backend = compat.entry_backend_name(live)
    invalidated = live is not None and getattr(live, "code", True) is None
    dropped = live is None and compat.FEATURES.get("cache entries") is None
    names = entry.global_names()
    resumes = tuple(n for n in names if facts.is_resume_global(n))
    resume_codes = [resume_globals.get(n) for n in resumes]
    view = CacheEntryView(
        compile_id=entry.compile_id,
        code=code_view(entry.code, generated=True, compile_id=entry.compile_id,
                       is_resume=entry.frame.is_resume),
        backend=backend,
        hits=entry.hits if hits_counted else -1,
        graphs=tuple(n for n in names if facts.is_graph_global(n)),
        resume_functions=resumes,
        invalidated=invalidated,
        replaced=entry.code is not entry.dynamo_code,
        resume_keys=tuple(None if c is None else id(c) for c in resume_codes),
        dropped=dropped,
    )
    if guards and entry.guard_manager is not None:
        tree, text = _guard_tree(entry.guard_manager, entry.compile_id)
        view = replace(view, guard_tree=tree, guards_text=text)
    return view


def break_behind(frames: Iterable[_Frame], resume_globals: dict[str, CodeType], resume_code: CodeType,
                 caller: GeneratedInfo | None = None) -> tuple[GraphBreakView, str, str] | None:
    """(the graph break, its compile id, the name of the frame that broke) that made the resume function
    `resume_code`: the last break of the compile whose entry the caller frame runs (`caller`: the generated
    code info of the frame below the resume function on the stack), else of any compile whose entry calls
    the resume function. None when no such break was recorded (the compile happened before the capture).

    Reads the capture's own records only (no listing, no guard tree, no torch call): cheap at every stop.
    """
    for rec in frames:
        if caller is not None and rec.code is not caller.original:
            continue
        for comp in rec.compiles:
            entry = comp.entry
            if entry is None or (caller is not None and comp.compile_id != caller.compile_id):
                continue
            resumes = tuple(n for n in entry.global_names() if facts.is_resume_global(n))
            if caller is None and all(resume_globals.get(n) is not resume_code for n in resumes):
                continue
            found = [(c, b) for c in rec.compiles if c.compile_id == comp.compile_id
                     for b in (c.breaks or c.fallback_breaks)]
            if found:
                c, brk = found[-1]
                return brk.view(comp.compile_id, resumes), comp.compile_id, rec.code.co_name
    return None


class GraphBreaks:
    """The graph breaks Dynamo logs (``log_graph_break``) or compiles around (``compile_subgraph``), recorded into
    the capture's compile records: `compile_of(code, compile_id)` gives the record (under `lock`), `error` keeps
    a fault of the recording, `installed()` says whether the capture still records."""

    def __init__(self, lock: Any, compile_of: Callable[[CodeType, str], _Compile],
                 error: Callable[[str, BaseException], None], installed: Callable[[], bool]) -> None:
        self.lock, self.compile_of, self.error, self.installed = lock, compile_of, error, installed
        #: (reason, file, line) of every logged break so far: a later equal one is a duplicate (torch's own
        #: judgement wins where it was made)
        self.break_keys: set[tuple[str, str | None, int | None]] = set()
        #: judges graph breaks duplicates as torch does (`graph_break_dups.DuplicateJudge`)
        self.dups = DuplicateJudge()

    def make_log_graph_break(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def log_graph_break(tx: Any, *args: Any, **kwargs: Any) -> Any:
            if rec.installed():
                try:
                    reason = kwargs.get("reason", args[1] if len(args) > 1 else None)
                    exc = kwargs.get("exc", args[2] if len(args) > 2 else None)
                    if not getattr(exc, "logged", False):
                        rec.on_break(tx, str(reason), getattr(exc, "real_stack", None), fallback=False,
                                     duplicate=rec.dups.judge(tx, exc))
                except Exception as exc_:  # noqa: BLE001
                    rec.error("log_graph_break", exc_)
            return orig(tx, *args, **kwargs)

        return log_graph_break

    def make_compile_subgraph(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def compile_subgraph(output_graph: Any, tx: Any, *args: Any, **kwargs: Any) -> Any:
            if rec.installed():
                try:
                    reason = kwargs.get("reason", args[0] if args else None)
                    if reason is not None and getattr(reason, "graph_break", False):
                        rec.on_break(tx, str(reason.reason), reason.user_stack, fallback=True,
                                     code=compat.output_graph_code(output_graph))
                except Exception as exc:  # noqa: BLE001
                    rec.error("compile_subgraph", exc)
            return orig(output_graph, tx, *args, **kwargs)

        return compile_subgraph

    def on_break(self, tx: Any, reason: str, user_stack: Any, *, fallback: bool,
                  code: CodeType | None = None, duplicate: bool | None = None) -> None:
        compile_id = compat.current_compile_id()
        if compile_id is None:
            return
        if code is None:
            code = compat.output_graph_code(getattr(tx, "output", None)) or getattr(tx, "f_code", None)
        if code is None:
            return
        if not user_stack:
            user_stack = compat.tracing_user_stack()
        filename = lineno = line = None
        if user_stack:
            last = user_stack[-1]
            filename, lineno, line = last.filename, last.lineno, last.line
        brk = _Break(reason, filename, lineno, line)
        brk.torch_duplicate = duplicate
        brk.trace_id = compat.current_trace_id()
        self.add_break(code, compile_id, brk, fallback)

    def add_break(self, code: CodeType, compile_id: str, brk: _Break, fallback: bool) -> None:
        with self.lock:
            comp = self.compile_of(code, compile_id)
            target = comp.fallback_breaks if fallback else comp.breaks
            key = (brk.reason, brk.filename, brk.lineno)
            if any((b.reason, b.filename, b.lineno) == key for b in target):
                return  # the same break seen again after a restart of this compile
            if not fallback:
                brk.duplicate = (brk.torch_duplicate if brk.torch_duplicate is not None
                                 else key in self.break_keys)
                self.break_keys.add(key)
            target.append(brk)


def _live_match(live: list[Any], entry: _Entry) -> Any:
    """torch's cache entry for our record: the one running our code object; else an invalidated one (code None)
    with the same compile id; else None (dropped). Compile ids alone are ambiguous after ``torch._dynamo.reset()``.
    """
    for e in live:
        if getattr(e, "code", None) is entry.code:
            return e
    for e in live:
        if getattr(e, "code", True) is None and str(e.compile_id) == entry.compile_id:
            return e
    return None


def _global_names(code: CodeType | None) -> tuple[str, ...]:
    """Names of ``__compiled_fn_*`` / ``__resume_at_*`` globals `code` loads, in first-use order."""
    if code is None:
        return ()
    import dis

    seen: dict[str, None] = {}
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL" and isinstance(ins.argval, str) and (
            facts.is_graph_global(ins.argval) or facts.is_resume_global(ins.argval)
        ):
            seen.setdefault(ins.argval, None)
    return tuple(seen)


def _source_of(code: CodeType) -> str | None:
    """The source of `code` via `inspect`; for a resume function, the source of the function it resumes."""
    found = compat.resume_origin(code)
    target = found[0] if found else code
    try:
        return inspect.getsource(target)
    except (OSError, TypeError, IndexError):
        return None


def _guard_tree(guard_manager: Any, compile_id: str) -> tuple[Any, str | None]:
    """(GuardTree or None, text) through `dynadbg.core.guards` when it exists; else torch's own rendering."""
    guards_mod: Any
    try:
        from . import guards as guards_mod  # another engineer's module; may not exist yet
    except ImportError:
        guards_mod = None
    if guards_mod is not None and hasattr(guards_mod, "build_guard_tree"):
        try:
            from .format.guards import format_guard_tree

            tree = guards_mod.build_guard_tree(guard_manager, compile_id)
            text = format_guard_tree(tree)
            return tree, text
        except Exception as exc:  # noqa: BLE001 - fall back to torch's text
            text = _torch_guard_text(guard_manager)
            return None, f"(guard tree unavailable: {type(exc).__name__}: {exc})\n{text}"
    return None, _torch_guard_text(guard_manager)


def _torch_guard_text(guard_manager: Any) -> str:
    try:
        return str(guard_manager)
    except Exception as exc:  # noqa: BLE001
        return f"(guards unavailable: {type(exc).__name__}: {exc})"
