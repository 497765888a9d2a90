"""The trace service: a record of every instruction Dynamo traces, at every inline depth, in every compile.

`TraceRecorder.install()` patches Dynamo's symbolic interpreter by name (`compat.TRACE_PATCH_TARGETS`,
torch-internals §13): ``InstructionTranslatorBase.step`` (one call per traced instruction; inlining translators
inherit it), ``convert_frame.trace_frame`` (one tracing attempt of one frame), ``log_graph_break`` (the reason and
``gb_type`` of a graph break, and from its caller which path it took), ``SpeculationEntry.
fail_and_restart_analysis`` (where a restart re-traces to), ``OutputGraph.compile_subgraph`` (the graph cut) and
``ContinueExecutionCache.lookup`` (the resume function made). `uninstall()` puts each back. A missing target
disables its part with a message (`disabled`); without the step or attempt hook nothing is installed.

Recording, per traced instruction, before Dynamo traces it (so the record holds the operands of an instruction
that breaks the graph: Dynamo pops them before it finds the break):

* **light**, always: the translator (code, depth), the instruction index, its line (read from the instruction:
  the translator's own ``lineno`` is still the previous instruction's), the FX node and guard counts. A tuple of
  five small ints, about 1 µs.
* **full**, while `full` is set (trace stops armed, or ``trace record full``): the symbolic value stack and
  locals as `trace_model.TraceValue` summaries (`trace_read`: no lazy tracker is ever realized), the inlining
  chain, and the nodes and guards the previous instruction added.

Records are keyed by compile id and attempt. Bounds, as the history's: at most `limit` steps and `max_bytes` of
estimated memory; the oldest attempts' steps are dropped first (their summaries stay), the attempt being traced
is kept whole. Reading never changes the compile: the off-vs-on test (tests/core/test_trace_equality.py) checks
that graphs, guards, generated code and program output are byte-identical with recording full and a pause at
every instruction.

A listener (`TraceListener`, the session's trace stops) sees each step while `listener.wants_steps()` holds,
each graph break, each tracing error and each attempt's end, on the thread that compiles; it may pause there
(inside Dynamo's compile lock).
"""

from __future__ import annotations

import bisect
import itertools
import operator
import sys
import threading
from types import FrameType
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Protocol

from . import compat, facts
from . import trace_read
from .runner import QuitProgram
from .trace_map import map_instructions
from .trace_model import (
    BreakPath,
    EmitPlan,
    RewriteKind,
    TraceAttemptView,
    TraceBreak,
    TraceCompileView,
    TraceCut,
    TraceError,
    TraceFrame,
    TraceGuard,
    TraceRestart,
    TraceStep,
    TraceValue,
)

#: steps kept by default, over every attempt (light records are about 0.12 KiB, full ones about 0.5 KiB)
DEFAULT_LIMIT = 200_000
#: memory cap of the kept records by default (bytes, estimated)
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
#: estimated bytes of a light record, and of a full record beyond it (plus 16 per stack slot and local)
LIGHT_BYTES = 120
FULL_BYTES = 400

#: exceptions the recorder lets through untouched: the user ending the program at a stop
_QUIT: tuple[type[BaseException], ...] = (QuitProgram, KeyboardInterrupt)

#: opnames of a code object's own prologue: the first *user* instruction is the first one that is none of them
PROLOGUE_OPNAMES = frozenset({"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP", "RETURN_GENERATOR"})


class TraceListener(Protocol):
    """What the trace stops implement. Every call happens on the compiling thread, inside Dynamo."""

    def wants_steps(self) -> bool:
        """Whether `on_step` should be called (and steps recorded in full). Asked at each attempt's start and
        after `TraceRecorder.refresh`."""

    def wants_full(self) -> bool:
        """Whether steps should be recorded in full without `on_step` (graph-break and error stops armed)."""

    def on_step(self, attempt: "Attempt", ordinal: int, tx: Any) -> None:
        """Dynamo is about to trace step `ordinal` of `attempt` (recorded already); may pause."""

    def on_break(self, attempt: "Attempt", brk: TraceBreak, tx: Any) -> None:
        """A graph break was found (recorded already); may pause."""

    def on_error(self, attempt: "Attempt", error: TraceError, tx: Any) -> None:
        """A tracing error leaves the frame being compiled (recorded already); may pause, then it propagates."""

    def on_attempt_end(self, attempt: "Attempt") -> None:
        """The attempt ended (done, restart or error)."""


class Frame:
    """One translator seen in an attempt: its code, depth, parent frame and Dynamo's instruction list."""

    __slots__ = ("code", "depth", "parent", "instructions", "_mapped", "tx_ref", "index", "chain", "resumable",
                 "outer", "outer_ips", "chain_now", "last_vals",
                 "last_keys", "last_locals", "last_lazy_at", "last_lazy_caches", "last_lazy_states", "last_realized",
                 "last_stack_vts", "last_stack")

    def __init__(self, index: int, tx: Any, parent: int | None) -> None:
        import weakref

        fields = compat.translator_fields(tx)
        self.index = index
        self.code = fields["f_code"]
        self.depth = int(fields.get("inline_depth", 0) or 0)
        self.parent = parent
        # the root's list is replaced by the generated code when its attempt ends: a copy of that one; an inlining
        # translator's list (a fresh clone of Dynamo's cleaned instructions) is never changed: a reference
        instructions = fields["instructions"]
        self.instructions = tuple(instructions) if self.depth == 0 else instructions
        self._mapped: tuple[Any, ...] | None = None
        #: full recording: (frame index, instruction index) of each outer frame while this one runs (an outer
        #: translator waits in its call the whole time), and the last locals and stack recorded here (reused
        #: while the trackers are the same objects)
        self.chain: tuple[tuple[int, int], ...] | None = None
        #: whether this translator or one it is inlined in is an inlined generator's: a generator is resumed by
        #: each ``next`` from wherever its consumer is, so its chain is walked at each step (`Attempt.chain_at`)
        self.resumable = compat.is_generator_translator(tx)  # or its parent's (set by `Attempt.frame_of`)
        #: a resumable frame's outer translators (outermost first), their instruction pointers when its chain
        #: was last walked, and that chain
        self.outer: tuple[Any, ...] = ()
        self.outer_ips: tuple[Any, ...] = ()
        self.chain_now: tuple[tuple[int, int], ...] = ()
        self.last_vals: tuple[Any, ...] = ()
        self.last_keys: tuple[str, ...] = ()
        self.last_locals: tuple[tuple[str, Any], ...] = ()
        #: the positions of the lazy trackers among the last locals, their caches and what each was realized to
        #: then (None: not)
        self.last_lazy_at: tuple[int, ...] = ()
        self.last_lazy_caches: tuple[Any, ...] = ()
        self.last_lazy_states: tuple[Any, ...] = ()
        #: `TraceRecorder.realized` when those states were read (-2: never; never -1, the count while the counting
        #: patch is not installed, so that the step hook's one comparison cannot take an unkept count as unchanged)
        self.last_realized = -2
        self.last_stack_vts: tuple[Any, ...] = ()
        self.last_stack: tuple[Any, ...] = ()
        try:
            self.tx_ref: Any = weakref.ref(tx)
        except TypeError:
            self.tx_ref = lambda: None

    def forget_trackers(self) -> None:
        """Drop the trackers held for reuse (at the attempt's end: nothing of Dynamo's outlives the compile)."""
        self.last_vals = self.last_stack_vts = self.outer = ()
        self.last_lazy_caches = self.last_lazy_states = ()

    def mapped(self, ip: int) -> tuple[int | None, RewriteKind, str | None]:
        """(user dis offset, rewrite kind, user opnames rewritten) of Dynamo's instruction `ip` (computed once)."""
        if self._mapped is None:
            try:
                self._mapped = _MAP_CACHE.get(self.code, self.instructions)
            except Exception:  # noqa: BLE001 - a code the aligner cannot read: no offsets, never a failure
                self._mapped = ((None, RewriteKind.ADDED, None),) * len(self.instructions)
        return self._mapped[ip] if 0 <= ip < len(self._mapped) else (None, RewriteKind.ADDED, None)


class _MapCache:
    """Offset maps per code object (Dynamo's cleaned list of one code is the same every attempt)."""

    def __init__(self) -> None:
        self._maps: dict[int, tuple[Any, tuple[Any, ...]]] = {}

    def get(self, code: Any, instructions: tuple[Any, ...]) -> tuple[Any, ...]:
        hit = self._maps.get(id(code))
        if hit is not None and hit[0] is code and len(hit[1]) == len(instructions):
            return hit[1]
        mapped = map_instructions(code, instructions)
        if len(self._maps) > 2000:
            self._maps.clear()
        self._maps[id(code)] = (code, mapped)
        return mapped


_MAP_CACHE = _MapCache()


class Detail:
    """The full record of one step, as read (`Attempt.details`): stack and locals summaries, the inlining chain
    (frame index, instruction index per outer frame), and what the step added (known at the next step). Built
    when read from what the step hook keeps (`Attempt.full`, `Attempt.full_locals`, `Attempt.added`, the frame's
    `Frame.chain` or `Attempt.chain_at`)."""

    __slots__ = ("stack", "locals", "chain", "new_nodes", "new_guards")

    def __init__(self, stack: tuple[TraceValue, ...], locals_: tuple[tuple[str, TraceValue], ...],
                 chain: tuple[tuple[int, int], ...]) -> None:
        self.stack = stack
        self.locals = locals_
        self.chain = chain
        self.new_nodes: tuple[str, ...] = ()
        self.new_guards: tuple[TraceGuard, ...] = ()


class _Details(Mapping[int, Detail]):
    """`Attempt.details`: the full records by ordinal, each `Detail` made when read."""

    __slots__ = ("_att",)

    def __init__(self, att: "Attempt") -> None:
        self._att = att

    def __getitem__(self, ordinal: int) -> Detail:
        att = self._att
        stack, locals_ = att.full[ordinal], att.full_locals[ordinal]
        detail = Detail(stack, locals_, att.chain_links(ordinal))
        added = att.added.get(ordinal)
        if added is not None:
            detail.new_nodes, detail.new_guards = added
        return detail

    def __contains__(self, ordinal: object) -> bool:
        return ordinal in self._att.full

    def __iter__(self) -> Iterator[int]:
        return iter(self._att.full)

    def __len__(self) -> int:
        return len(self._att.full)


class Attempt:
    """One tracing attempt of one compile (worker thread while it runs; read by the stops and the queries).

    Attributes:
        compile_id, number: the compile id and attempt number; code: the frame's code object.
        frames: the translators seen (`Frame`), in first-seen order; steps: light records
            ``(frame index, instruction index, line, nodes, guards)`` by ordinal; details: full records by ordinal
            (`Detail`, made when read from `full` and `full_locals`: the stack and the locals by ordinal, kept by the
            step hook in two dicts, no tuple per step; `added`: ``(new nodes, new guards)`` by ordinal, for the steps
            that added any; the chain is the frame's, or `chain_at`'s).
        breaks, cuts: graph breaks and cuts found; restart, error: what ended it; outcome: ``"running"``,
            ``"done"``, ``"restart"``, ``"error"``.
        replay_until: the ordinal a replay after the previous attempt's restart ends at (None: no replay).
        prev: the previous attempt of the same compile, if any.
    """

    def __init__(self, compile_id: str, number: int, code: Any, prev: "Attempt | None") -> None:
        self.compile_id = compile_id
        self.number = number
        self.code = code
        self.frames: list[Frame] = []
        self._by_tx: dict[int, int] = {}
        self.steps: list[tuple[int, int, int | None, int, int]] = []
        self.full: dict[int, tuple[TraceValue, ...]] = {}
        self.full_locals: dict[int, tuple[tuple[str, TraceValue], ...]] = {}
        self.added: dict[int, tuple[tuple[str, ...], tuple[TraceGuard, ...]]] = {}
        #: the inlining chain of a run of a resumable frame (a resumed generator's) where it is not the frame's
        #: `Frame.chain`, by the run's first full record (`chain_links`); those ordinals in order (`chain_keys`)
        self.chain_at: dict[int, tuple[tuple[int, int], ...]] = {}
        self.chain_keys: list[int] = []
        #: ordinals where a run of steps in one frame starts (the step hook: the translator changed), the newest
        #: run's, and the run whose chain the full record has walked (`_chain_resumable`)
        self.run_starts: list[int] = []
        self.run_start = -1
        self.chain_run = -2
        self.breaks: list[TraceBreak] = []
        self.cuts: list[TraceCut] = []
        self.restart: TraceRestart | None = None
        self.error: TraceError | None = None
        self.outcome = "running"
        self.prev = prev
        self.replay_until: int | None = None
        if prev is not None and prev.restart is not None and prev.restart.at_ordinal is not None:
            self.replay_until = prev.restart.at_ordinal
        self.max_depth = 0
        #: `full_bytes` once the attempt has ended
        self._full_bytes: int | None = None
        self.evicted = False
        self._evicted_count = 0
        self.root_tx: Any = None
        self.last_tx: Any = None
        self.last_frame: Frame | None = None
        #: reads (FX nodes, guards) of the output graph (chosen at the first step, `TraceRecorder._counter`)
        self.counts: Callable[[Any], tuple[int, int]] = compat.trace_counts_public
        self.speculation_ip: int | None = None
        self.summaries = trace_read.SummaryCache()
        self.resume_names: list[str] = []
        #: graph calls the cuts of this attempt made (``__compiled_fn_3``)
        self.graphs: list[str] = []
        #: the output graph's (node, guard) counts at the newest full record (`TraceRecorder._counts_moved`)
        self.counts_seen = (-1, -1)
        self.start_seen = False
        self.rewound = False
        self.output: Any = None
        self.pending_graphs: tuple[str, ...] = ()

    @property
    def live_refs(self) -> tuple[int, tuple[Any, ...], dict[str, Any]] | None:
        """(ordinal, stack trackers, the translator's locals dict) of the newest full record, while the attempt
        runs: `fake NAME` and a stop's changed-locals marks read these (at a stop: the frame's stack as recorded
        is its newest)."""
        tx, frame = self.last_tx, self.last_frame
        ordinal = len(self.steps) - 1
        if tx is None or frame is None or ordinal not in self.full:
            return None
        return ordinal, frame.last_stack_vts, vars(tx).get("symbolic_locals") or {}

    @property
    def details(self) -> Mapping[int, Detail]:
        """The full records by ordinal (see the class docstring)."""
        return _Details(self)

    @property
    def full_bytes(self) -> int:
        """Estimated bytes of the full records (the light ones are counted from `steps`): counted when asked, in
        C-level passes over the two dicts (not at each step), kept once the attempt has ended."""
        if self._full_bytes is not None:
            return self._full_bytes
        full, full_locals = self.full, self.full_locals
        n = FULL_BYTES * len(full) + 16 * (sum(map(len, full.values())) + sum(map(len, full_locals.values())))
        if self.outcome != "running":
            self._full_bytes = n
        return n

    @property
    def step_count(self) -> int:
        """Instructions traced in this attempt (also after its records were dropped)."""
        return self._evicted_count if self.evicted else len(self.steps)

    @property
    def nbytes(self) -> int:
        """Estimated bytes its kept records hold."""
        return 0 if self.evicted else LIGHT_BYTES * len(self.steps) + self.full_bytes

    # -- frames ---------------------------------------------------------------------------------------------

    def frame_of(self, tx: Any) -> int:
        fi = self._by_tx.get(id(tx))
        if fi is not None and self.frames[fi].tx_ref() is tx:
            return fi
        parent_tx = compat.translator_fields(tx).get("parent")
        parent = self.frame_of(parent_tx) if parent_tx is not None else None
        fi = len(self.frames)
        frame = Frame(fi, tx, parent)
        if parent is not None and self.frames[parent].resumable:
            frame.resumable = True
        self.frames.append(frame)
        self._by_tx[id(tx)] = fi
        if frame.depth > self.max_depth:
            self.max_depth = frame.depth
        return fi

    # -- reading records ------------------------------------------------------------------------------------

    def replay(self, ordinal: int) -> bool:
        return self.replay_until is not None and ordinal < self.replay_until

    @property
    def replay_skippable(self) -> bool:
        """Whether trace stops skip this attempt's replay: not after a `rewind`, which re-traces to be stepped."""
        return not (self.prev is not None and self.prev.rewound)

    def step(self, ordinal: int) -> TraceStep:
        """The `TraceStep` of record `ordinal` (raises IndexError when it was dropped or never made)."""
        fi, ip, line, nodes, guards = self.steps[ordinal]
        frame = self.frames[fi]
        ins = frame.instructions[ip] if 0 <= ip < len(frame.instructions) else None
        offset, kind, of = frame.mapped(ip)
        code = frame.code
        return TraceStep(ordinal, self.compile_id, self.number, frame.depth, code.co_name, code.co_filename,
                         code.co_firstlineno, line, ip, getattr(ins, "opname", "?"), _argrepr(ins), offset, kind, of,
                         nodes, guards, self.replay(ordinal), ordinal in self.full)

    def chain(self, ordinal: int) -> tuple[TraceFrame, ...]:
        """The inlining chain at `ordinal`, outermost first (from its full record; else the step's frame only)."""
        fi, ip, line, _n, _g = self.steps[ordinal]
        links: tuple[tuple[int, int], ...] = ()
        if ordinal in self.full:
            links = self.chain_links(ordinal)
        out = [self._frame_view(pfi, pip, None) for pfi, pip in links]
        out.append(self._frame_view(fi, ip, line))
        return tuple(out)

    def chain_links(self, ordinal: int) -> tuple[tuple[int, int], ...]:
        """(frame index, instruction index) of each outer frame at full record `ordinal`, outermost first: the
        frame's first chain (`Frame.chain`), or the one a run of a resumable frame had (`chain_at`, kept at the
        run's first full record only: the outer frames wait while the run lasts)."""
        keys = self.chain_keys
        if keys:
            j = bisect.bisect_right(keys, ordinal) - 1
            if j >= 0:
                starts = self.run_starts
                run = starts[bisect.bisect_right(starts, ordinal) - 1]
                if keys[j] >= run:
                    return self.chain_at[keys[j]]
        return self.frames[self.steps[ordinal][0]].chain or ()

    def _frame_view(self, fi: int, ip: int, line: int | None) -> TraceFrame:
        frame = self.frames[fi]
        ins = frame.instructions[ip] if 0 <= ip < len(frame.instructions) else None
        if line is None:
            line = getattr(ins, "starts_line", None)
        code = frame.code
        return TraceFrame(frame.depth, code.co_name, code.co_filename, code.co_firstlineno, line, ip,
                          getattr(ins, "opname", "?"), frame.mapped(ip)[0])

    def view(self) -> TraceAttemptView:
        return TraceAttemptView(self.number, self.step_count, self.max_depth, self.outcome, self.restart,
                                self.error, self.replay_until)

    def last_ordinal_at_depth(self, depth: int, ip: int | None = None) -> int | None:
        """The newest step at inline `depth` (and instruction `ip`, when given)."""
        for ordinal in range(len(self.steps) - 1, -1, -1):
            fi, sip, _l, _n, _g = self.steps[ordinal]
            if self.frames[fi].depth == depth and (ip is None or sip == ip):
                return ordinal
        return None


def _argrepr(ins: Any) -> str:
    if ins is None:
        return ""
    text = getattr(ins, "argrepr", None)
    if text:
        return str(text)
    argval = getattr(ins, "argval", None)
    if argval is None:
        return ""
    try:
        shown = repr(argval) if isinstance(argval, str) and getattr(ins, "opname", "") == "LOAD_CONST" else str(argval)
    except Exception:  # noqa: BLE001
        shown = type(argval).__name__
    return shown if len(shown) <= 60 else shown[:59] + "…"


class CompileRecord:
    """Every attempt of one compile id, in order."""

    __slots__ = ("compile_id", "code", "attempts")

    def __init__(self, compile_id: str, code: Any) -> None:
        self.compile_id = compile_id
        self.code = code
        self.attempts: list[Attempt] = []

    def view(self) -> TraceCompileView:
        breaks = tuple(b for a in self.attempts for b in a.breaks)
        cuts = tuple(c for a in self.attempts for c in a.cuts)
        steps = sum(a.step_count for a in self.attempts)
        evicted = sum(a.step_count for a in self.attempts if a.evicted)
        code = self.code
        return TraceCompileView(self.compile_id, code.co_name, code.co_filename, code.co_firstlineno,
                                tuple(a.view() for a in self.attempts), breaks, cuts, steps, evicted)


class TraceRecorder:
    """Records Dynamo's tracing while installed (see the module docstring).

    Args:
        limit: most steps kept over all attempts (the attempt being traced is always kept whole).
        max_bytes: most estimated bytes kept.
        full: record every step in full (``trace record full``), not only while the listener wants steps.

    Thread safety: Dynamo traces one frame at a time per process (its compile lock); the hooks run on the
    thread that compiles and keep the running attempt per thread.
    """

    def __init__(self, *, limit: int = DEFAULT_LIMIT, max_bytes: int = DEFAULT_MAX_BYTES, full: bool = False) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self._full = full
        self.listener: TraceListener | None = None
        #: what each traced instruction gets: 0 a light record, 1 a full one, 2 a full one and the listener's
        #: `on_step` (`refresh` recomputes it: at each attempt's start and when the listener's state changes)
        self.level = 1 if full else 0
        self.installed = False
        self.available = False
        #: messages for the parts of the trace hooks this torch lacks
        self.disabled: list[str] = []
        #: errors inside the recording code (never raised into Dynamo): for diagnosis
        self.errors: list[str] = []
        self.compiles: dict[str, CompileRecord] = {}
        self.evicted_steps = 0
        self._patches = compat.PatchSet()
        self._tls = threading.local()
        self._lock = threading.RLock()
        #: lazy trackers realized since install (`_make_realize`); -1 while that hook is not installed
        self.realized = -1
        self._realized_next = 0
        #: whether ``==`` between trackers is identity on this torch (`compat.trackers_equal_by_identity`): the
        #: step hook then compares the locals as tuples, in C
        self.eq_is_identity = False

    @property
    def realized_mark(self) -> int:
        """What a frame keeps as the count its lazy states were read at (`Frame.last_realized`): the count, or -2
        while it is not kept (never equal to the -1 of `realized` then, so the states are read at each step)."""
        return self.realized if self.realized >= 0 else -2

    @property
    def full(self) -> bool:
        """``trace record full``: every step recorded in full, stops armed or not."""
        return self._full

    @full.setter
    def full(self, on: bool) -> None:
        self._full = on
        self.refresh()

    def refresh(self) -> None:
        """Recompute `level` from `full` and the listener (`TraceListener.wants_steps` / ``wants_full``)."""
        listener = self.listener
        steps = listener is not None and listener.wants_steps()
        full = self._full or steps or (listener is not None and listener.wants_full())
        self.level = 2 if steps else (1 if full else 0)

    # ---------------------------------------------------------------------------------------------------------
    # install / uninstall
    # ---------------------------------------------------------------------------------------------------------

    def install(self) -> "TraceRecorder":
        """Patch Dynamo. Idempotent; missing targets go to `disabled`, never raised."""
        if self.installed:
            return self
        targets = compat.trace_targets()
        self.disabled = [msg for name, msg in compat.FEATURES.items() if msg and name.startswith("trace:")]
        if any(targets.get(name) is None for name in compat.TRACE_ESSENTIAL) or compat.FEATURES.get("trace: readers"):
            self.available = False
            self.installed = True
            return self
        makers: dict[str, Callable[[Any], Any]] = {
            "trace: steps": self._make_step,
            "trace: attempts": self._make_trace_frame,
            "trace: graph breaks": self._make_log_graph_break,
            "trace: restarts": self._make_fail_and_restart,
            "trace: graph cuts": self._make_compile_subgraph,
            "trace: resume functions": self._make_lookup,
            "trace: lazy realizations": self._make_realize,
        }
        self._patches.wrap(targets, makers)
        self.eq_is_identity = compat.trackers_equal_by_identity()
        if targets.get("trace: lazy realizations") is not None:
            self.realized = self._realized_next  # never a count a frame read before an uninstall
        self.available = True
        self.installed = True
        return self

    def uninstall(self) -> None:
        """Restore every patched attribute. Records stay readable."""
        if not self.installed:
            return
        self.installed = False
        self._patches.restore()
        self._realized_next, self.realized = max(self.realized, self._realized_next) + 1, -1

    # ---------------------------------------------------------------------------------------------------------
    # queries (any thread; the records of a running attempt grow on the compiling thread)
    # ---------------------------------------------------------------------------------------------------------

    @property
    def current(self) -> Attempt | None:
        """The attempt being traced on this thread, if any."""
        return getattr(self._tls, "attempt", None)

    def compile_views(self) -> tuple[TraceCompileView, ...]:
        with self._lock:
            return tuple(rec.view() for rec in self.compiles.values())

    def compile_view(self, compile_id: str) -> TraceCompileView | None:
        """The recorded trace of one compile, None when none was recorded."""
        with self._lock:
            rec = self.compiles.get(compile_id)
            return rec.view() if rec is not None else None

    def attempts_of(self, compile_id: str) -> list[Attempt]:
        rec = self.compiles.get(compile_id)
        return list(rec.attempts) if rec is not None else []

    @property
    def total_steps(self) -> int:
        """Steps kept now, over every attempt."""
        with self._lock:
            return sum(len(a.steps) for rec in self.compiles.values() for a in rec.attempts)

    @property
    def nbytes(self) -> int:
        """Estimated bytes of the records kept now."""
        with self._lock:
            return sum(a.nbytes for rec in self.compiles.values() for a in rec.attempts)

    def _error(self, where: str, exc: BaseException) -> None:
        if len(self.errors) < 100:
            self.errors.append(f"{where}: {type(exc).__name__}: {exc}")

    # ---------------------------------------------------------------------------------------------------------
    # bounds
    # ---------------------------------------------------------------------------------------------------------

    def set_bounds(self, limit: int | None = None, max_bytes: int | None = None) -> None:
        if limit is not None:
            self.limit = limit
        if max_bytes is not None:
            self.max_bytes = max_bytes
        self._evict()

    def _evict(self) -> None:
        """Drop the steps of the oldest finished attempts while over a bound (their summaries stay)."""
        with self._lock:
            total, nbytes = self.total_steps, self.nbytes
            if total <= self.limit and nbytes <= self.max_bytes:
                return
            for rec in self.compiles.values():
                for att in rec.attempts:
                    if att.outcome == "running" or att.evicted:
                        continue
                    total -= len(att.steps)
                    nbytes -= att.nbytes
                    self.evicted_steps += len(att.steps)
                    att._evicted_count = len(att.steps)  # noqa: SLF001 - the recorder owns its attempts
                    att.steps = []
                    att.full = {}
                    att.full_locals = {}
                    att.added = {}
                    att.chain_at = {}
                    att.chain_keys = []
                    att.run_starts = []
                    att.frames = []
                    att.evicted = True
                    if total <= self.limit and nbytes <= self.max_bytes:
                        return

    # ---------------------------------------------------------------------------------------------------------
    # attempts
    # ---------------------------------------------------------------------------------------------------------

    def _begin(self, code: Any) -> Attempt:
        self.refresh()
        cid, number = compat.trace_compile_state()
        cid = cid or "?"
        with self._lock:
            rec = self.compiles.get(cid)
            if rec is None:
                rec = self.compiles[cid] = CompileRecord(cid, code)
            prev = rec.attempts[-1] if rec.attempts else None
            att = Attempt(cid, number, code, prev)
            rec.attempts.append(att)
        return att

    def _end(self, att: Attempt) -> None:
        # what the last instruction added (the return's output node, the cut) belongs to it
        self._attribute_added(att, None)
        # nothing of Dynamo's outlives the compile (an output graph holds its FX graph, fake tensors and shape env:
        # kept, they were freed at the recording's eviction, not at the compile's end)
        att.root_tx = att.output = None
        att.last_tx = None
        att.last_frame = None
        att.summaries.clear()
        for frame in att.frames:
            frame.forget_trackers()
        listener = self.listener
        if listener is not None:
            try:
                listener.on_attempt_end(att)
            except Exception as exc:  # noqa: BLE001
                self._error("on_attempt_end", exc)
        self._evict()

    def _attribute_added(self, att: Attempt, tx: Any) -> None:
        """Give the nodes and guards added since the last recorded step to that step's full record."""
        if not att.steps:
            return
        last = len(att.steps) - 1
        if last not in att.full or last in att.added:
            return
        output = compat.output_graph_of(tx) if tx is not None else getattr(att, "output", None)
        if output is None:
            return
        _fi, _ip, _line, nodes, guards = att.steps[last]
        try:
            now_nodes = len(compat.fx_graph_of(output).nodes)
            now_guards = len(compat.guards_of(output))
        except Exception:  # noqa: BLE001
            return
        _record_added(att, last, output, now_nodes - nodes, now_guards - guards)

    # ---------------------------------------------------------------------------------------------------------
    # the patches
    # ---------------------------------------------------------------------------------------------------------

    def _make_trace_frame(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def trace_frame(code: Any, *args: Any, **kwargs: Any) -> Any:
            if not rec.installed:
                return orig(code, *args, **kwargs)
            try:
                att = rec._begin(code)
            except Exception as exc:  # noqa: BLE001
                rec._error("trace_frame", exc)
                return orig(code, *args, **kwargs)
            outer = getattr(rec._tls, "attempt", None)
            rec._tls.attempt = att
            try:
                result = orig(code, *args, **kwargs)
                att.outcome = "done"
                return result
            except BaseException as exc:
                try:
                    if compat.is_restart(exc):
                        rec._on_restart(att, exc)
                    elif att.outcome == "running":
                        att.outcome = "error"
                        if att.error is None:
                            att.error = rec._error_of(exc, None)
                except Exception as exc_:  # noqa: BLE001
                    rec._error("trace_frame", exc_)
                raise
            finally:
                rec._tls.attempt = outer
                try:
                    rec._end(att)
                except Exception as exc:  # noqa: BLE001
                    rec._error("trace_frame end", exc)

        return trace_frame

    def _on_restart(self, att: Attempt, exc: BaseException) -> None:
        att.outcome = "restart"
        at: int | None = getattr(exc, "dynadbg_at", None)  # a rewind: the re-trace repeats this attempt up to there
        if at is None and att.speculation_ip is not None:
            at = att.last_ordinal_at_depth(0, att.speculation_ip)
        if at is None:
            at = att.last_ordinal_at_depth(0)
        line = att.steps[at][2] if at is not None and at < len(att.steps) else None
        reason = compat.restart_reason(exc).strip().splitlines()
        att.restart = TraceRestart(att.compile_id, att.number, reason[0] if reason else "", at, line)

    def _error_of(self, exc: BaseException, tx: Any) -> TraceError:
        gb_type, msg, _hints, skip = compat.break_exception_fields(exc)
        lines = [ln for ln in msg.splitlines() if ln.strip()]
        message = "\n".join(lines[:6])
        return TraceError(type(exc).__name__, message, gb_type, compat.fullgraph_of(tx) if tx is not None else False,
                          skip)

    def _make_step(self, orig: Callable[[Any], bool]) -> Callable[[Any], bool]:
        rec = self
        tls = self._tls

        def step(tx: Any) -> bool:
            att = getattr(tls, "attempt", None)
            if att is None:
                return orig(tx)
            ip = tx.instruction_pointer
            if ip is None:
                return orig(tx)
            try:
                if tx is att.last_tx:  # most steps follow one in the same translator
                    frame = att.last_frame
                else:
                    frame = att.frames[att.frame_of(tx)]
                    att.last_tx, att.last_frame = tx, frame
                    att.run_start = len(att.steps)
                    att.run_starts.append(att.run_start)
                    if frame.depth == 0 and att.root_tx is None:
                        att.root_tx = tx
                        att.output = tx.output
                        att.counts = rec._counter(att.output)
                steps = att.steps
                ordinal = len(steps)
                nodes, guards = att.counts(tx.output)
                steps.append((frame.index, ip, frame.instructions[ip].starts_line, nodes, guards))
                level = rec.level
                if level:
                    rec._full_record(att, ordinal, tx, frame, nodes, guards)
                    if level > 1:
                        rec.listener.on_step(att, ordinal, tx)  # type: ignore[union-attr]
            except BaseException as exc:
                if not isinstance(exc, Exception) or isinstance(exc, _QUIT) or getattr(exc, "dynadbg_rewind", False):
                    raise  # the user quit while paused here, or asked for a rewind (a restart)
                rec._error("step", exc)  # recording must never break the compile
            try:
                return orig(tx)
            except BaseException as exc:
                if compat.translator_fields(tx).get("parent") is None:
                    rec._step_failed(att, tx, exc)
                raise

        return step

    @staticmethod
    def _counter(output: Any) -> Callable[[Any], tuple[int, int]]:
        """The node and guard counter for this attempt: the fast one when it agrees with the public one here."""
        try:
            if compat.trace_counts_fast(output) == compat.trace_counts_public(output):
                return compat.trace_counts_fast
        except Exception:  # noqa: BLE001 - a field renamed on this torch: the public properties
            pass
        return compat.trace_counts_public

    def _full_record(self, att: Attempt, ordinal: int, tx: Any, frame: Frame, nodes: int, guards: int) -> None:
        # one call per traced instruction (a transformer block's compile: 2,361): every interpreter instruction
        # here counts, since the cost is the interpreter's, ~20 ns each (`bench_trace.py --opcodes`: 186 opcode
        # events of this body a step before 2026-12-05, 115 after; 336 and 267 with what it calls). The stack and
        # locals are compared as tuples, in C (`eq_is_identity`). No object is made beyond the record's tuples (the
        # `Detail` of a step is made when read, `Attempt.details`).
        if (nodes, guards) != att.counts_seen:
            _counts_moved(self, att, ordinal, tx, nodes, guards)
        if not self.eq_is_identity:
            return _record_by_is(self, att, ordinal, vars(tx), frame)
        # the stack changes at its top only: the summaries of the slots below are the last record's (the
        # translator's own attributes, read directly: it is no tracker, and has no __getattr__)
        stack_vts = tuple(tx.stack)
        last = frame.last_stack_vts
        if stack_vts == last:
            stack = frame.last_stack  # no change: no new tuple either
        else:
            k = len(last)
            if stack_vts[:k] == last:  # pushes only
                stack = frame.last_stack + tuple(map(att.summaries.summary, stack_vts[k:]))
            elif last[:len(stack_vts)] == stack_vts:  # pops only
                stack = frame.last_stack[:len(stack_vts)]
            else:
                same = 0
                while stack_vts[same] is last[same]:  # stops before the shorter one's end: a slot differs
                    same += 1
                stack = frame.last_stack[:same] + tuple(map(att.summaries.summary, stack_vts[same:]))
            frame.last_stack_vts = stack_vts
            frame.last_stack = stack
        att.full[ordinal] = stack
        loc = tx.symbolic_locals
        vals = tuple(loc.values())
        if vals == frame.last_vals and (self.realized == frame.last_realized or not frame.last_lazy_caches
                                        or _lazy_unchanged(self, frame)):
            att.full_locals[ordinal] = frame.last_locals  # the same trackers, the lazy ones as they were
        else:
            att.full_locals[ordinal] = _new_locals(att, frame, loc, vals)
            frame.last_realized = self.realized_mark
        if frame.chain is None:
            frame.chain = _chain(att, frame, vars(tx))
        elif frame.resumable and att.chain_run != att.run_start:
            _chain_resumable(att, ordinal, frame)

    def _step_failed(self, att: Attempt, tx: Any, exc: BaseException) -> None:
        """An exception leaves the root translator's step: a restart, or a tracing error that ends the attempt."""
        if compat.is_restart(exc) or isinstance(exc, _QUIT):
            return
        try:
            self._attribute_added(att, tx)
            error = self._error_of(exc, tx)
            att.error = error
            att.outcome = "error"
            listener = self.listener
            if listener is not None:
                listener.on_error(att, error, tx)
        except _QUIT:
            raise
        except Exception as exc_:  # noqa: BLE001
            self._error("step error", exc_)

    def _make_realize(self, orig: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """Count lazy trackers realized (`realized`): while the count stays, the lazy locals a full record saw
        are as they were, and the step hook skips reading their states (~0.5 us a step, 1.2 ms of a 120 ms
        transformer-block compile, measured 2026-12-05)."""
        rec = self

        def realize(cache: Any) -> Any:
            try:
                return orig(cache)
            finally:
                rec.realized += 1

        return realize

    def _make_log_graph_break(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def log_graph_break(tx: Any, *args: Any, **kwargs: Any) -> Any:
            exc = kwargs.get("exc", args[2] if len(args) > 2 else None)
            first = not getattr(exc, "logged", False)
            try:
                # which graph-break path called: the first caller that is not a dynadbg wrapper (the capture's
                # patch of the same method may sit between)
                frame: FrameType | None = sys._getframe(1)  # noqa: SLF001
                while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("dynadbg"):
                    frame = frame.f_back
                path = compat.graph_break_path(compat.code_qualname(frame.f_code)) if frame is not None else "other"
            except Exception:  # noqa: BLE001
                path = "other"
            result = orig(tx, *args, **kwargs)
            att = rec.current
            if first and att is not None and rec.installed:
                try:
                    reason = kwargs.get("reason", args[1] if len(args) > 1 else "")
                    brk = rec._break(att, tx, str(reason), exc, path)
                    att.breaks.append(brk)
                    listener = rec.listener
                    if listener is not None:
                        listener.on_break(att, brk, tx)
                except _QUIT:
                    raise
                except Exception as exc_:  # noqa: BLE001
                    rec._error("log_graph_break", exc_)
            return result

        return log_graph_break

    def _break(self, att: Attempt, tx: Any, reason: str, exc: Any, path_name: str) -> TraceBreak:
        self._attribute_added(att, tx)
        gb_type, _msg, hints, _skip = compat.break_exception_fields(exc)
        path = BreakPath(path_name) if path_name in BreakPath._value2member_map_ else BreakPath.OTHER
        last = len(att.steps) - 1 if att.steps else None
        step = att.step(last) if last is not None else None
        detail = att.details.get(last) if last is not None else None
        chain = att.chain(last) if last is not None else ()
        filename = line = None
        stack = getattr(exc, "real_stack", None)
        if stack:
            try:
                filename, line = stack[-1].filename, stack[-1].lineno
            except Exception:  # noqa: BLE001
                filename = line = None
        if filename is None and step is not None:
            filename, line = step.filename, step.line
        # the instruction at depth 0 is what runs eagerly (for a break inside an inlined call: the whole call)
        root_ordinal = att.last_ordinal_at_depth(0)
        root = att.step(root_ordinal) if root_ordinal is not None else None
        output = compat.output_graph_of(tx)
        try:
            nodes = len(compat.fx_graph_of(output).nodes) if output is not None else 0
        except Exception:  # noqa: BLE001
            nodes = 0
        restart = path in (BreakPath.CALL, BreakPath.STEP)
        eager = f"{root.opname} {root.argrepr}".strip() if root is not None and path is not BreakPath.FRAME else None
        if path is BreakPath.STEP:
            eager = None
        resume = root.code_name if root is not None and path in (BreakPath.CALL, BreakPath.JUMP) else None
        returns = False
        if resume is not None and root is not None and path is BreakPath.CALL and root_ordinal is not None:
            # Dynamo makes no resume function for a frame whose next instruction is RETURN_VALUE: the code it
            # generates returns the eager call's result itself (create_call_resume_at, torch 2.13-2.15)
            instructions = att.frames[att.steps[root_ordinal][0]].instructions
            nxt = instructions[root.index + 1] if root.index + 1 < len(instructions) else None
            if getattr(nxt, "opname", None) == "RETURN_VALUE":
                resume, returns = None, True
        callee = None
        if eager is not None and root_ordinal is not None and root is not None and root.opname in ("CALL", "PRECALL"):
            root_detail = att.details.get(root_ordinal)
            ins = att.frames[att.steps[root_ordinal][0]].instructions[root.index]
            n = (getattr(ins, "arg", 0) or 0) + 2
            if root_detail is not None and len(root_detail.stack) >= n:
                lower, upper = root_detail.stack[-n], root_detail.stack[-n + 1]
                callee = (lower if lower.kind.value != "null" else upper).text
        plan = EmitPlan(restart, nodes, eager, root.line if root is not None else None, resume,
                        root.line if resume and root is not None else None, rest_eager=path is BreakPath.STEP,
                        eager_callee=callee, returns=returns)
        head, _notes = facts.parse_break_reason(reason)
        return TraceBreak(att.compile_id, att.number, path, head, gb_type, hints, step,
                          detail.stack if detail is not None else None, chain, plan, filename, line)

    def _make_fail_and_restart(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def fail_and_restart_analysis(entry: Any, *args: Any, **kwargs: Any) -> Any:
            att = rec.current
            if att is not None:
                try:
                    _f, _l, ip = compat.speculation_fields(entry)
                    att.speculation_ip = ip
                except Exception as exc:  # noqa: BLE001
                    rec._error("fail_and_restart_analysis", exc)
            return orig(entry, *args, **kwargs)

        return fail_and_restart_analysis

    def _make_compile_subgraph(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def compile_subgraph(output: Any, tx: Any, *args: Any, **kwargs: Any) -> Any:
            att = rec.current
            before: set[str] = set()
            cut: TraceCut | None = None
            if att is not None:
                try:
                    reason = kwargs.get("reason", args[0] if args else None)
                    text = str(getattr(reason, "reason", reason))
                    nodes = len(compat.fx_graph_of(output).nodes)
                    line = att.steps[-1][2] if att.steps else None
                    cut = TraceCut(att.compile_id, att.number, text.splitlines()[0] if text else "", nodes,
                                   bool(getattr(reason, "graph_break", False)), line)
                    before = compat.compiled_graph_globals(output)
                except Exception as exc:  # noqa: BLE001
                    rec._error("compile_subgraph", exc)
            result = orig(output, tx, *args, **kwargs)
            if att is not None and cut is not None:
                try:
                    att.cuts.append(cut)
                    made = tuple(sorted(compat.compiled_graph_globals(output) - before))
                    att.graphs.extend(made)
                    if made and att.breaks:
                        rec._update_plan(att, graph_names=made)
                    elif made and att.prev is not None and att.prev.breaks:
                        att.pending_graphs = made
                except Exception as exc:  # noqa: BLE001
                    rec._error("compile_subgraph", exc)
            return result

        return compile_subgraph

    def _update_plan(self, att: Attempt, **changes: Any) -> None:
        """Fill in what a break's plan could not know at the break (names made on the cut), on the attempt that
        found it or the previous one (a restart's re-trace makes them)."""
        import dataclasses

        for owner in (att, att.prev):
            if owner is None or not owner.breaks:
                continue
            brk = owner.breaks[-1]
            plan = brk.plan
            kept = {k: v for k, v in changes.items() if not getattr(plan, k)}
            if kept:
                owner.breaks[-1] = dataclasses.replace(brk, plan=dataclasses.replace(plan, **kept))
            return

    def _make_lookup(self, orig: Any) -> Any:
        rec = self
        func = orig.__func__ if isinstance(orig, classmethod) else orig

        def lookup(cls: Any, *args: Any, **kwargs: Any) -> Any:
            result = func(cls, *args, **kwargs)
            att = rec.current
            if att is not None:
                try:
                    name = getattr(result, "co_name", None)
                    if name:
                        att.resume_names.append(str(name))
                        pending = att.pending_graphs
                        rec._update_plan(att, resume_name=str(name),
                                         **({"graph_names": pending} if pending else {}))
                except Exception as exc:  # noqa: BLE001
                    rec._error("resume lookup", exc)
            return result

        return classmethod(lookup) if isinstance(orig, classmethod) else lookup


def _record_by_is(rec: TraceRecorder, att: Attempt, ordinal: int, fields: dict[str, Any], frame: Frame) -> None:
    """`TraceRecorder._full_record`'s comparisons made by ``is``, item by item: where a tracker class defines
    ``__eq__``."""
    live = fields["stack"]
    last = frame.last_stack_vts
    if len(live) == len(last) and all(map(_IS, live, last)):
        stack = frame.last_stack
    else:
        stack_vts = tuple(live)
        if all(map(_IS, stack_vts, last)):  # pushes only or pops only
            if len(stack_vts) < len(last):
                stack = frame.last_stack[:len(stack_vts)]
            else:
                stack = frame.last_stack + tuple(map(att.summaries.summary, stack_vts[len(last):]))
        else:
            same = 0
            while stack_vts[same] is last[same]:
                same += 1
            stack = frame.last_stack[:same] + tuple(map(att.summaries.summary, stack_vts[same:]))
        frame.last_stack_vts, frame.last_stack = stack_vts, stack
    att.full[ordinal] = stack
    loc = fields.get("symbolic_locals") or {}
    vals = tuple(loc.values())
    before = frame.last_vals
    if (len(vals) == len(before) and all(map(_IS, vals, before))
            and (rec.realized == frame.last_realized or not frame.last_lazy_caches
                 or _lazy_unchanged(rec, frame))):
        att.full_locals[ordinal] = frame.last_locals
    else:
        att.full_locals[ordinal] = _new_locals(att, frame, loc, vals)
        frame.last_realized = rec.realized_mark
    if frame.chain is None:
        frame.chain = _chain(att, frame, fields)
    elif frame.resumable and att.chain_run != att.run_start:
        _chain_resumable(att, ordinal, frame)


def _lazy_unchanged(rec: TraceRecorder, frame: Frame) -> bool:
    """Whether the frame's lazy locals are realized to what they were at its last record (read after a lazy
    tracker somewhere was realized: `realized` moved); the count is taken as read."""
    if compat.lazy_unchanged(frame.last_lazy_caches, frame.last_lazy_states):
        frame.last_realized = rec.realized_mark
        return True
    return False


def _chain_resumable(att: Attempt, ordinal: int, frame: Frame) -> None:
    """The first full record of a run of a resumable frame (an inlined generator's, resumed by each ``next`` from
    wherever its consumer is): its chain walked again, kept where it is not the frame's first (`chain_links`
    reads it for every step of the run: the outer frames wait while it lasts)."""
    att.chain_run = att.run_start
    _rechain(frame)
    if frame.chain_now is not frame.chain:
        att.chain_at[ordinal] = frame.chain_now
        att.chain_keys.append(ordinal)


def _counts_moved(rec: TraceRecorder, att: Attempt, ordinal: int, tx: Any, nodes: int, guards: int) -> None:
    """The output graph's node or guard count is not what the last full record saw: what the previous
    instruction added goes to its record, now that it is done."""
    att.counts_seen = (nodes, guards)
    if ordinal and ordinal - 1 in att.full:
        prev = att.steps[ordinal - 1]
        if nodes > prev[3] or guards > prev[4]:
            _record_added(att, ordinal - 1, tx.output, nodes - prev[3], guards - prev[4])


def _record_added(att: Attempt, ordinal: int, output: Any, nodes: int, guards: int) -> None:
    """Record the newest `nodes` FX nodes and `guards` guards as what step `ordinal` added (each part replaced
    only when its count is positive)."""
    new_nodes, new_guards = att.added.get(ordinal, ((), ()))
    if nodes > 0:
        new_nodes = trace_read.newest_node_names(output, nodes)
    if guards > 0:
        new_guards = trace_read.newest_guards(output, guards)
    if new_nodes or new_guards:
        att.added[ordinal] = (new_nodes, new_guards)


def _new_locals(att: Attempt, frame: Frame, loc: dict[str, Any], vals: tuple[Any, ...]
                ) -> tuple[tuple[str, TraceValue], ...]:
    """The locals' summaries when a local's tracker or a lazy local's state changed: each local's summary
    reused while its tracker is the one summarised last time and was not lazy then (a store changes one local;
    a frame such as multi_head_attention_forward has sixty); summaries made in the locals' order."""
    summary = att.summaries.summary
    before = frame.last_vals
    keys = tuple(loc)
    old_lazy = frame.last_lazy_at
    if keys == frame.last_keys:
        # the same names in the same order (what a store to a local that exists does): only the changed
        # positions and the lazy ones of last time are summarised again
        changed = tuple(itertools.compress(range(len(vals)), map(operator.is_not, vals, before)))
        redo = sorted(set(changed).union(old_lazy)) if old_lazy else changed
        out = list(frame.last_locals)
        for i in redo:
            out[i] = (keys[i], summary(vals[i]))
        locals_ = tuple(out)
        if old_lazy or any(map(compat.is_lazy_tracker, (vals[i] for i in changed))):
            frame.last_lazy_at, frame.last_lazy_caches = compat.lazy_caches(vals)
    else:
        previous = {name: (vt, v) for (name, v), vt in zip(frame.last_locals, before)}
        stale = {id(before[i]) for i in old_lazy}
        out = []
        for name, vt in loc.items():
            hit = previous.get(name)
            out.append((name, hit[1] if hit is not None and hit[0] is vt and id(vt) not in stale
                        else summary(vt)))
        locals_ = tuple(out)
        frame.last_lazy_at, frame.last_lazy_caches = compat.lazy_caches(vals)
    frame.last_vals, frame.last_keys, frame.last_locals = vals, keys, locals_
    frame.last_lazy_states = compat.lazy_realized(frame.last_lazy_caches)
    return locals_


def _chain(att: Attempt, frame: Frame, fields: dict[str, Any]) -> tuple[tuple[int, int], ...]:
    """(frame index, instruction index) of each outer frame of `frame`, outermost first (an outer translator
    waits in its call while `frame` runs: computed once per frame)."""
    if frame.depth == 0:
        return ()
    links = []
    outer = []
    p = fields.get("parent")
    while p is not None:
        pip = p.instruction_pointer
        links.append((att.frame_of(p), (pip - 1) if pip else 0))
        outer.append(p)
        p = vars(p).get("parent")
    chain = tuple(reversed(links))
    if frame.resumable:
        frame.outer = tuple(reversed(outer))
        frame.outer_ips = tuple(map(_IP, frame.outer))
        frame.chain_now = chain
    return chain


_IP = operator.attrgetter("instruction_pointer")
_IS = operator.is_


def _rechain(frame: Frame) -> None:
    """A resumable frame's chain now (`Frame.resumable`: its outer translators are the same ones, where one of
    them is may have moved since the frame last ran): `Frame.chain_now`, the frame's first chain when equal."""
    ips = tuple(map(_IP, frame.outer))
    if ips != frame.outer_ips:
        frame.outer_ips = ips
        chain = tuple((fi, (ip - 1) if ip else 0) for (fi, _old), ip in zip(frame.chain_now, ips))
        frame.chain_now = frame.chain if chain == frame.chain else chain
