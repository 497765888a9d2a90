"""Dynamo hooks → records of every compiled frame: cache entries, FX graphs, graph breaks, resume functions,
recompile reasons, skip reasons and hit counts.

`Capture.install()` patches a handful of Dynamo internals (all of them named in `compat.CAPTURE_PATCH_TARGETS`;
torch-internals §4, §5, §11) and `uninstall()` puts every one of them back. The patches only record: they keep
raw objects (code objects, strings, guard managers) and never build listings, so the compile-time cost stays a
few dict operations per compile plus the text of each FX graph. Listings, sources and guard trees are built when
a snapshot is asked for (`frames()`).

Two hooks can hand control to the caller (the session pauses there):

* ``on_compiled(CompileEvent)`` — Dynamo has the final generated code and the built guards of one compile and is
  about to hand them to C++ (patched ``convert_frame.wrap_guarded_code``). The callback may replace
  ``event.code`` / ``event.guard_manager``; the replacement is what this very call runs. It runs inside Dynamo's
  compile lock.
* ``on_cache_miss(CacheMissEvent) -> action`` — a code object that already has cache entries missed all of them
  (patched ``CatchErrorsWrapper.__call__``, before the compile lock). The action says whether to recompile, run
  this call eagerly, or stop compiling that code.

Everything is keyed by code-object identity (never by name: two resume functions can share a ``co_name``). The
capture keeps every original and generated code object it saw alive, so ``id()`` keys are never reused.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from dataclasses import replace
from types import CodeType, FunctionType
from typing import Any, Callable

from . import compat, facts, values
from .callsites import CallSiteLog
from .filter_entries import FilterEntryLog
from .capture_records import GraphBreaks, _Compile, _Entry, _Frame, break_behind, frame_view
from .events import CacheMissEvent, CompileEvent, EagerFallbackEvent
from .model import CompiledFrameView, GeneratedInfo, GraphBreakView, GraphView

#: Values ``on_cache_miss`` may return (None means "recompile").
CACHE_MISS_ACTIONS: tuple[str, ...] = ("recompile", "eager", "skip")

#: Skip reasons that follow a compile attempt: such a frame is listed by `Capture.frames()` even with no entry.
_ATTEMPT_SKIP_PREFIXES: tuple[str, ...] = (
    "an error was suppressed during compilation",
    "Dynamo decided to skip the frame while tracing",
    "compilation failed with a custom frame execution strategy",
    "export mode produced an empty graph",
    "dynadbg:",
)


#: dynadbg's callbacks run under Dynamo's frame hook; Dynamo's skips of their frames are noise, not records.
_OWN_DIRS: tuple[str, ...] = compat.own_source_paths()


# --------------------------------------------------------------------------------------------------------------
# Events handed to the callbacks
# --------------------------------------------------------------------------------------------------------------


#: A frame line of a recorded stack trace: ``File "/path/prog.py", line 25, in forward``.
_TRACE_LINE = re.compile(r'File "([^"]*)", line (\d+)')
_TORCH_DIR = f"{os.sep}torch{os.sep}"


def node_lines(graph: Any) -> tuple[tuple[str, int | None], ...]:
    """(node name, user source line) of each node of an FX graph, in graph order: the innermost frame outside
    torch's own files in ``node.meta["stack_trace"]`` (FX's public node metadata, set by Dynamo while tracing;
    a call into ``nn.Linear`` records torch's frames below the user's), None without one."""
    out = []
    for node in graph.nodes:
        trace = node.meta.get("stack_trace") if isinstance(getattr(node, "meta", None), dict) else None
        frames = _TRACE_LINE.findall(trace) if isinstance(trace, str) else []
        user = [int(line) for file, line in frames if _TORCH_DIR not in file]
        out.append((str(node.name), user[-1] if user else None))
    return tuple(out)


# --------------------------------------------------------------------------------------------------------------
# Internal records (mutable, owned by the capture)
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# Capture
# --------------------------------------------------------------------------------------------------------------


class Capture:
    """Records every frame Dynamo compiles while installed, and optionally stops at compiles and cache misses.

    Args:
        on_compiled: called with a `CompileEvent` after each successful compile, before the code first runs;
            may block. Replacements it makes on the event apply to this very call.
        on_cache_miss: called with a `CacheMissEvent` when a code object that already has cache entries misses
            them all; may block (it runs before Dynamo's compile lock). Returns None or ``"recompile"`` (compile
            as usual), ``"eager"`` (run this call without compiling; later calls may compile) or ``"skip"`` (stop
            compiling this code object; existing entries still serve calls that match them).
        count_hits: install a bytecode-debugger callback that calls `note_call` for every generated-code call
            (and then the callback that was installed before, if any). Leave False when the session owns that
            callback: it then calls `note_call` itself.

    Thread safety: the hooks run on whatever thread compiles (the program's worker thread); records are guarded
    by a lock; `note_call` takes no lock (one int increment). Call `frames()` on the worker thread: it reads
    torch's cache entries.
    """

    def __init__(
        self,
        on_compiled: Callable[[CompileEvent], None] | None = None,
        on_cache_miss: Callable[[CacheMissEvent], str | None] | None = None,
        *,
        count_hits: bool = False,
    ) -> None:
        self.on_compiled = on_compiled
        self.on_cache_miss = on_cache_miss
        #: called with an `EagerFallbackEvent` when a frame runs eagerly after a graph break with no resume
        #: function (before it runs, outside the compile lock; may block), or None
        self.on_eager_fallback: Callable[[EagerFallbackEvent], None] | None = None
        #: called with the code object before torch's frame callback converts (traces, compiles or skips) a frame,
        #: and with ``None`` after it returned, on the thread that called the frame; or None. Compiles nest (a
        #: frame called while another is traced), so a receiver keeps a stack.
        self.on_convert: Callable[[CodeType | None], None] | None = None
        self.count_hits = count_hits
        #: True when hit counts are meaningful: `count_hits` was given, or the owner of the debugger callback
        #: calls `note_call` (detected from the first counted call; setting this says so up front). Until then
        #: entries report ``hits=-1``.
        self.hits_counted = count_hits
        self.installed = False
        #: Messages for hooks that could not be installed (missing on this torch) — shown by front ends.
        self.disabled: list[str] = []
        #: Errors raised inside the recording code (never propagated into Dynamo): for diagnosis.
        self.errors: list[str] = []
        self._patches = compat.PatchSet()
        self._prev_debugger_callback: Any = None
        self._callback_installed = False
        self._lock = threading.RLock()
        self._tls = threading.local()
        self._serials = itertools.count(1)
        #: code objects that hit the recompile limit (id → code): torch runs them RUN_ONLY from then on; the
        #: capture keeps answering their misses itself so each one is seen (`CacheMissEvent.after_limit`)
        self._run_only: dict[int, CodeType] = {}
        #: code objects the user chose ``skip`` for (id → code): while the capture is installed their later misses
        #: are answered by the capture, each call run uncompiled (`_uncompiled`), so their existing cache entries
        #: still serve the calls they match (torch's own SKIP would run every call of the code uncompiled)
        self._skipped_here: dict[int, CodeType] = {}
        self._frames: dict[int, _Frame] = {}          # id(original code) -> record, first-seen order
        self._generated: dict[int, _Entry] = {}       # id(generated code) -> entry (Dynamo's and replacements)
        self._skips: dict[int, tuple[CodeType, str]] = {}  # frames skipped before any compile attempt
        self._pending_graph: dict[str, GraphView] = {}     # compile id -> graph waiting for its global name
        self._resume_globals: dict[str, CodeType] = {}     # "__resume_at_76_3" -> resume code
        #: the user's torch.compile call sites and the code each compile ran under (`callsites.CallSiteLog`)
        self.callsites = CallSiteLog(_OWN_DIRS)
        #: the GuardFilterEntry records of every compile (`filter_entries.FilterEntryLog`)
        self.filter_entries = FilterEntryLog(on_build=self.callsites.note_compile)
        #: the graph breaks of every compile, recorded into the compile records (`capture_records.GraphBreaks`)
        self._breaks = GraphBreaks(self._lock, self._compile, self._error, lambda: self.installed)

    # ---------------------------------------------------------------------------------------------------------
    # install / uninstall
    # ---------------------------------------------------------------------------------------------------------

    def install(self) -> "Capture":
        """Patch Dynamo. Idempotent. Missing hook targets are listed in `disabled`, never raised."""
        if self.installed:
            return self
        targets = compat.capture_targets()
        handlers: dict[str, Callable[[Any], Any]] = {
            "capture: compile stop": self._make_wrap_guarded_code,
            "capture: recompile stop": self._make_catch_errors_call,
            "capture: recompile reasons": self._make_recompile_reasons,
            "capture: graphs": self._make_call_user_compiler,
            "capture: graph names": self._make_install_global_unsafe,
            "capture: graph break log": self._breaks.make_log_graph_break,
            "capture: graph breaks": self._breaks.make_compile_subgraph,
        }
        self.callsites.install()
        self.filter_entries.install()
        self.disabled = [msg for name, msg in compat.FEATURES.items() if msg and name.startswith("capture:")]
        self._patches.wrap(targets, handlers)
        if self.count_hits and compat.FEATURES.get("debugger callback", "x") is None:
            note = self._safe_note_call
            prev = self._prev_debugger_callback = compat.set_debugger_callback(note)
            if prev is not None:
                def chained(code: CodeType) -> None:  # keep whoever was there first working
                    note(code)
                    try:
                        prev(code)
                    except Exception as exc:  # noqa: BLE001 - nothing may escape into torch's C++
                        self._error("previous debugger callback", exc)

                compat.set_debugger_callback(chained)
            self._callback_installed = True
        self.installed = True
        return self

    def uninstall(self) -> None:
        """Restore every patched attribute and the debugger callback. Records stay readable."""
        if not self.installed:
            return
        self.installed = False
        self._patches.restore()
        self.filter_entries.uninstall()
        self.callsites.uninstall()
        if self._callback_installed:
            compat.set_debugger_callback(self._prev_debugger_callback)
            self._prev_debugger_callback = None
            self._callback_installed = False

    def __enter__(self) -> "Capture":
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ---------------------------------------------------------------------------------------------------------
    # queries
    # ---------------------------------------------------------------------------------------------------------

    @property
    def hit_records(self) -> dict[int, Any]:
        """id(generated code) -> its record, whose ``hits`` counts calls: the session's debugger callback counts
        there itself (`note_call` without the call, on the path every compiled call takes)."""
        return self._generated

    def note_call(self, code: CodeType) -> None:
        """Count one call of generated code (O(1); the session's debugger callback calls it for every call)."""
        entry = self._generated.get(id(code))
        if entry is not None:
            entry.hits += 1

    def _safe_note_call(self, code: CodeType) -> None:
        """`note_call` as torch's debugger callback: nothing may escape into torch's C++ (aborts on 3.13)."""
        try:
            self.note_call(code)
        except Exception as exc:  # noqa: BLE001
            self._error("debugger callback", exc)

    def advise(self, record: Any, f_locals: dict[str, Any] | None = None) -> Any:
        """The `advice.RecompileAdvice` of a `model.RecompileRecord` from this capture's call sites and guard
        filter entries (`advice.advise`)."""
        from .advice import advise

        return advise(record, self, f_locals)

    def is_generated(self, code: CodeType) -> bool:
        """True for a generated code object this capture recorded (Dynamo's, or a replacement)."""
        return id(code) in self._generated

    def generated_info(self, code: CodeType) -> GeneratedInfo | None:
        """(original code, compile id, original is a resume function) for generated `code`, else None."""
        entry = self._generated.get(id(code))
        if entry is None:
            return None
        return GeneratedInfo(entry.frame.code, entry.compile_id, entry.frame.is_resume)

    def original_of(self, code: CodeType) -> CodeType | None:
        """The original code object generated `code` was compiled from, or None."""
        entry = self._generated.get(id(code))
        return None if entry is None else entry.frame.code

    def resume_origin_of(self, code: CodeType) -> tuple[CodeType, int | None] | None:
        """For a recorded resume function's code: (user's original code, resume offset or None)."""
        frame = self._frames.get(id(code))
        if frame is None or frame.origin is None:
            return None
        return frame.origin, frame.resume_offset

    def resume_global(self, name: str) -> CodeType | None:
        """The resume function code installed under the global `name` (``"__resume_at_76_3"``), if seen."""
        return self._resume_globals.get(name)

    def resume_globals_of(self, code: CodeType) -> tuple[str, ...]:
        """The ``__resume_at_*`` globals the capture saw installed for the resume function `code`, sorted."""
        with self._lock:
            return tuple(sorted(name for name, c in self._resume_globals.items() if c is code))

    def break_behind(self, resume_code: CodeType,
                     caller: GeneratedInfo | None = None) -> tuple[GraphBreakView, str, str] | None:
        """(the graph break, its compile id, the name of the frame that broke) that made the resume function
        `resume_code` (`capture_records.break_behind`), or None when no such break was recorded."""
        with self._lock:
            return break_behind(self._frames.values(), self._resume_globals, resume_code, caller)

    def adopt(self, code: CodeType) -> bool:
        """Record the compiles of generated `code` made before this capture was installed (a session that
        attached late: ``set_trace()``, ``debug()`` after the first call): every live cache entry of its original
        code becomes a recorded entry (no graphs, graph breaks or recompile reasons: those were not seen).
        Returns False when `code` is not Dynamo-generated code with live entries."""
        original = compat.dynamo_original_of(code)
        if original is None:
            return False
        entries = compat.cache_entries(original)
        with self._lock:
            frame = self._frame(original)
            known = {id(e.code) for e in self._generated.values()}
            for entry in reversed(entries):  # torch lists newest first; record oldest first
                compile_id, guard_manager, entry_code = compat.cache_entry_fields(entry)
                if entry_code is None or id(entry_code) in known:
                    continue
                comp = frame.compile(compile_id, self._serial())
                comp.entry = _Entry(frame, compile_id, entry_code, guard_manager)
                self._generated[id(entry_code)] = comp.entry
        return id(code) in self._generated

    def register_generated(self, new_code: CodeType, like: CodeType) -> None:
        """Make `new_code` count as the same cache entry as generated `like` (an edit installed later, e.g. by
        ``_load_precompile_entry``). Hits of `new_code` are added to that entry."""
        with self._lock:
            entry = self._generated.get(id(like))
            if entry is None:
                raise KeyError(f"{like.co_name} is not generated code this capture recorded")
            self._generated[id(new_code)] = entry
            entry.code = new_code

    @property
    def version(self) -> tuple[int, int, int, int]:
        """Grows whenever a record is added (a compiled frame, a cache entry, a resume function, a graph): what
        was read from `frames` before is still true while it stays the same (`snapshot.codegen_facts` caches on
        it; `frames` itself costs tens of ms on a big model)."""
        with self._lock:
            return (len(self._frames), len(self._generated), len(self._resume_globals), len(self._pending_graph))

    def frames(self, *, guards: bool = False) -> list[CompiledFrameView]:
        """Snapshot of every compiled frame, in first-compile order; entries oldest first.

        Frames that Dynamo tried to compile but gave up on (a graph break it could not resume from, the
        recompile limit) and resume functions Dynamo skipped are included with ``skipped`` set; frames skipped
        before any compile attempt (no tensors, torch's own files) are in `skipped_frames()` instead.

        Args:
            guards: also build each live entry's guard tree (`dynadbg.core.guards`, when it exists) and its text.
                Costs time on big trees; off by default.
        """
        with self._lock:
            records = list(self._frames.values())
            if not self.hits_counted and any(e.hits for e in self._generated.values()):
                self.hits_counted = True
        return [frame_view(rec, guards, self._resume_globals, self.hits_counted) for rec in records]

    def skipped_frames(self) -> list[tuple[str, str, int, str]]:
        """(name, filename, firstlineno, reason) of frames Dynamo skipped without a compile attempt."""
        with self._lock:
            items = list(self._skips.values())
        return [(c.co_name, c.co_filename, c.co_firstlineno, reason) for c, reason in items]

    # ---------------------------------------------------------------------------------------------------------
    # snapshot building
    # ---------------------------------------------------------------------------------------------------------


    # ---------------------------------------------------------------------------------------------------------
    # record helpers (called from the hooks; never raise into Dynamo)
    # ---------------------------------------------------------------------------------------------------------

    def _serial(self) -> int:
        return getattr(self._tls, "serial", 0)

    def _frame(self, code: CodeType) -> _Frame:
        rec = self._frames.get(id(code))
        if rec is None:
            rec = self._frames[id(code)] = _Frame(code)
            self._skips.pop(id(code), None)
        return rec

    def _compile(self, code: CodeType, compile_id: str) -> _Compile:
        return self._frame(code).compile(compile_id, self._serial())

    def _error(self, where: str, exc: BaseException) -> None:
        if len(self.errors) < 100:
            self.errors.append(f"{where}: {type(exc).__name__}: {exc}")


    def _record_skip(self, code: CodeType, reason: str) -> None:
        if reason.startswith(compat.BORING_SKIP_PREFIXES) or code.co_filename.startswith(_OWN_DIRS):
            return
        with self._lock:
            rec = self._frames.get(id(code))
            if rec is None and (
                reason.startswith(_ATTEMPT_SKIP_PREFIXES) or compat.resume_origin(code) is not None
            ):
                rec = self._frame(code)
            if rec is not None:
                rec.skipped = reason
            elif id(code) not in self._skips and len(self._skips) < 10_000:
                self._skips[id(code)] = (code, reason)

    # ---------------------------------------------------------------------------------------------------------
    # the patches (each factory gets the original and returns the replacement)
    # ---------------------------------------------------------------------------------------------------------

    def _make_wrap_guarded_code(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        cap = self

        def wrap_guarded_code(guarded_code: Any) -> Any:
            if not cap.installed:
                return orig(guarded_code)
            dynamo_code = guarded_code.code
            original = compat.dynamo_original_of(dynamo_code) or getattr(cap._tls, "code", None)
            if original is None:
                return orig(guarded_code)
            compile_id = str(guarded_code.compile_id)
            try:
                with cap._lock:
                    frame = cap._frame(original)
                    comp = frame.compile(compile_id, cap._serial())
                    entry = comp.entry = _Entry(frame, compile_id, dynamo_code, guarded_code.guard_manager)
                    cap._generated[id(dynamo_code)] = entry
            except Exception as exc:  # noqa: BLE001 - a recording fault must not break the user's compile
                cap._error("wrap_guarded_code", exc)
                return orig(guarded_code)
            if cap.on_compiled is not None:
                event = CompileEvent(original, dynamo_code, compile_id, guarded_code.guard_manager, guarded_code,
                                     frame.is_resume)
                try:
                    cap.on_compiled(event)
                except BaseException:
                    with cap._lock:
                        comp.entry = None
                        cap._generated.pop(id(dynamo_code), None)
                    raise
                if event.code is not dynamo_code:
                    guarded_code.code = event.code
                    compat.register_replacement_code(dynamo_code, event.code, original)
                    with cap._lock:
                        entry.code = event.code
                        cap._generated[id(event.code)] = entry
                if event.guard_manager is not guarded_code.guard_manager:
                    guarded_code.guard_manager = event.guard_manager
                    entry.guard_manager = event.guard_manager
            return orig(guarded_code)

        return wrap_guarded_code

    def _make_catch_errors_call(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        cap = self

        def __call__(wrapper: Any, frame: Any, *args: Any, **kwargs: Any) -> Any:
            # torch 2.13: (frame, cache_entry, frame_state), positional, from C++
            if not cap.installed:
                return orig(wrapper, frame, *args, **kwargs)
            code: CodeType = frame.f_code
            if cap._skipped_here.get(id(code)) is code:
                # skipped by the user: a later miss runs uncompiled, the entries still serve what they match
                return cap._uncompiled(code, "eager")
            if id(code) in cap._run_only and cap._run_only[id(code)] is code:
                answer = cap._miss_after_limit(frame, code, wrapper)
                if answer is not None:
                    return answer
            if cap.on_cache_miss is not None:
                try:
                    action = cap._cache_miss(frame, code, wrapper)
                except Exception as exc:  # noqa: BLE001 - a debugger fault must not break the compile
                    cap._error("cache miss", exc)
                    action = None
                if action is not None:
                    if action == "skip":
                        cap._record_skip(code, "dynadbg: compiling stopped for this code by the debugger")
                    return cap._uncompiled(code, action)
            tls = cap._tls
            prev_serial, prev_code = getattr(tls, "serial", 0), getattr(tls, "code", None)
            tls.serial, tls.code = next(cap._serials), code
            converting = cap.on_convert
            if converting is not None:
                try:
                    converting(code)
                except Exception as exc:  # noqa: BLE001 - a progress report must never break the compile
                    cap._error("on_convert", exc)
                    converting = None
            try:
                result = orig(wrapper, frame, *args, **kwargs)
                try:
                    if cap.on_cache_miss is not None and compat.is_run_only_for_code(result):
                        # the recompile limit was hit: torch would answer later misses in C++ unseen; answer
                        # them the same way here instead, so the timeline holds every miss
                        cap._run_only[id(code)] = code
                        result = compat.for_this_call_only(result)
                    if getattr(result, "guarded_code", None) is not None:
                        cap._set_backend(code, tls.serial, wrapper)
                    else:
                        reason = getattr(result, "skip_reason", None)
                        if reason:
                            cap._record_skip(code, reason)
                            fallback = cap._eager_fallback(frame, code, tls.serial, reason)
                            if fallback is not None and cap.on_eager_fallback is not None:
                                cap.on_eager_fallback(fallback)
                except Exception as exc:  # noqa: BLE001 - recording must never break the program
                    cap._error("CatchErrorsWrapper.__call__", exc)
                return result
            finally:
                tls.serial, tls.code = prev_serial, prev_code
                if converting is not None:
                    try:
                        converting(None)
                    except Exception as exc:  # noqa: BLE001
                        cap._error("on_convert", exc)

        return __call__

    def _uncompiled(self, code: CodeType, action: str) -> Any:
        """What the hook returns to run this call uncompiled (``eager``, ``skip``). A skip answers the code's later
        misses here, each run uncompiled, so its existing cache entries go on serving the calls they match (torch's
        SKIP, ``ConvertFrameReturn()``, would run every later call uncompiled, entries unused: checked on torch
        2.13 with the generated code's calls counted). Inside a ``fullgraph=True`` call torch raises "found no
        compiled frames" when no compiled frame ran under the default stance; the call is counted as torch counts
        one under ``eager_on_recompile`` (`compat.count_uncompiled_call_as_compiled`)."""
        compat.count_uncompiled_call_as_compiled()
        if action == "skip":
            with self._lock:
                self._skipped_here[id(code)] = code
            action = "eager"
        return compat.convert_frame_return(action)

    def _eager_fallback(self, frame: Any, code: CodeType, serial: int, reason: str) -> EagerFallbackEvent | None:
        """The event of a frame that runs eagerly after a graph break (no resume function runs for it), else
        None: the breaks logged during this compile of `code`, or, when `code` is a resume function Dynamo
        skipped, the breaks of the compile of its origin that made it."""
        with self._lock:
            rec = self._frames.get(id(code))
            comps = [c for c in (rec.compiles if rec is not None else ()) if c.serial == serial]
            brks = [b for c in comps for b in (c.breaks or c.fallback_breaks)]
            cid = comps[-1].compile_id if comps else ""
            origin = rec.origin if rec is not None else None
        if brks:
            views = tuple(b.view(cid, ()) for b in brks)
            return EagerFallbackEvent(code, dict(frame.f_locals), reason, views)
        if origin is None:
            return None
        # a resume function Dynamo skipped: the break of the origin's compile that references it
        for view in reversed(self.frames()):
            if view.key != id(origin):
                continue
            for entry in reversed(view.entries):
                if id(code) in entry.resume_keys:
                    made = tuple(b for b in view.graph_breaks if b.compile_id == entry.compile_id)
                    if made:
                        return EagerFallbackEvent(code, dict(frame.f_locals), reason, made, origin)
        return None

    def _miss_after_limit(self, frame: Any, code: CodeType, wrapper: Any) -> Any:
        """A miss of a code object past its recompile limit: report it (``after_limit=True``; the hook's answer
        is not asked for) and run the call as torch's RUN_ONLY does. None when the code has no entries any
        more (``torch._dynamo.reset()`` / ``reset_code``): torch compiles it again, so the capture forgets it."""
        try:
            entries = compat.cache_entries(code)
        except Exception:  # noqa: BLE001
            entries = []
        if not entries:
            self._run_only.pop(id(code), None)
            return None
        if self.on_cache_miss is not None:
            event = CacheMissEvent(code, dict(frame.f_locals), entries, compat.innermost_backend(wrapper), wrapper,
                                   after_limit=True, capture=self)
            try:
                self.on_cache_miss(event)
            except Exception as exc:  # noqa: BLE001 - recording must never break the program
                self._error("on_cache_miss (after the recompile limit)", exc)
        return compat.run_only_once()

    def _cache_miss(self, frame: Any, code: CodeType, wrapper: Any = None) -> str | None:
        try:
            entries = compat.cache_entries(code)
        except Exception as exc:  # noqa: BLE001
            self._error("cache entries", exc)
            return None
        if not entries:
            return None  # first time Dynamo sees this code: not a recompile
        backend = compat.innermost_backend(wrapper) if wrapper is not None else None
        event = CacheMissEvent(code, dict(frame.f_locals), entries, backend, wrapper, capture=self,
                               closure=getattr(frame, "closure", None))
        action = self.on_cache_miss(event) if self.on_cache_miss is not None else None
        if action is None or action == "recompile":
            return None
        if action not in CACHE_MISS_ACTIONS:
            raise ValueError(f"on_cache_miss returned {action!r}; expected one of {CACHE_MISS_ACTIONS} or None")
        return action

    def _set_backend(self, code: CodeType, serial: int, wrapper: Any) -> None:
        rec = self._frames.get(id(code))
        if rec is None:
            return
        for comp in reversed(rec.compiles):
            if comp.serial == serial and comp.entry is not None:
                if comp.entry.backend is None:
                    comp.entry.backend = compat.backend_name_of(wrapper)
                return

    def _make_recompile_reasons(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        cap = self

        def get_and_maybe_log_recompilation_reasons(cache_entries: Any, frame: Any, *args: Any,
                                                    **kwargs: Any) -> Any:
            reasons = orig(cache_entries, frame, *args, **kwargs)
            if cap.installed:
                try:
                    compile_id = compat.current_compile_id()
                    if compile_id is not None:
                        with cap._lock:
                            cap._compile(frame.f_code, compile_id).recompile_reasons = tuple(
                                str(r) for r in reasons
                            )
                except Exception as exc:  # noqa: BLE001
                    cap._error("recompile reasons", exc)
            return reasons

        return get_and_maybe_log_recompilation_reasons

    def _make_call_user_compiler(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        cap = self

        def call_user_compiler(output_graph: Any, gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
            result = orig(output_graph, gm, example_inputs, *args, **kwargs)
            if cap.installed:
                try:
                    compile_id = compat.current_compile_id()
                    if compile_id is not None:  # None: a specialization compiled at run time
                        graph = gm.graph
                        placeholders, outputs = compat.fx_signature(gm)
                        view = GraphView(
                            name="", compile_id=compile_id, code=str(gm.code), graph_text=str(graph),
                            node_count=len(graph.nodes), node_lines=node_lines(graph),
                            placeholders=placeholders, outputs=outputs, code_lines=compat.fx_code_lines(gm),
                        )
                        with cap._lock:
                            cap._pending_graph[compile_id] = view
                except Exception as exc:  # noqa: BLE001
                    cap._error("call_user_compiler", exc)
            return result

        return call_user_compiler

    def _make_install_global_unsafe(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        cap = self

        def install_global_unsafe(output_graph: Any, name: str, value: Any, *args: Any, **kwargs: Any) -> Any:
            result = orig(output_graph, name, value, *args, **kwargs)
            if cap.installed and isinstance(name, str):
                try:
                    if facts.is_graph_global(name):
                        compile_id = compat.current_compile_id()
                        code = compat.output_graph_code(output_graph)
                        if compile_id is not None:
                            values.label_graph(value, name, str(compile_id))
                        if compile_id is not None and code is not None:
                            with cap._lock:
                                pending = cap._pending_graph.pop(compile_id, None)
                                if pending is not None:
                                    cap._compile(code, compile_id).graphs[name] = replace(pending, name=name)
                    elif facts.is_resume_global(name):
                        resume = _resume_code_of(value)
                        if resume is not None:
                            cap._resume_globals[name] = resume
                except Exception as exc:  # noqa: BLE001
                    cap._error("install_global_unsafe", exc)
            return result

        return install_global_unsafe


# --------------------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------------------


def _resume_code_of(value: Any) -> CodeType | None:
    """The resume code behind an installed ``__resume_at_*`` global: a function, or a closure factory that
    captured the code (``install_resume_function_global`` for code with free variables)."""
    code = getattr(value, "__code__", None)
    if isinstance(value, FunctionType) and isinstance(code, CodeType) and facts.is_resume_name(code.co_name):
        return code
    for cell in getattr(value, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:
            continue
        if isinstance(content, CodeType):
            return content
    return None


