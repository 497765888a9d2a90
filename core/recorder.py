"""Record what Dynamo does inside a region of a running program, with no stops: the engine of ``dynadbg report``
(`Capture` + `recompile.RecompileLog` + `guard_cost.GuardCostLog`) around a ``with`` block instead of a script.

    with Recorder() as rec:
        model(x)
    rec.recompile_count(), rec.graph_break_count()     # cheap counts
    result = rec.result()                               # a report.ReportResult: .text(), .json()

The pytest plugin records each test this way; ``dynadbg run --rank`` records the ranks that do not stop. Hooks are
installed on `install`/``__enter__`` and all restored on `uninstall`/``__exit__``, however the block ends.
"""

from __future__ import annotations

from typing import Any, Callable

from . import compat
from .capture import Capture
from .guard_cost import GuardCostLog
from .recompile import RecompileLog, RecompileRecord
from .report import ReportResult
from .runner import ExitResult

__all__ = ["Recorder"]


class _CaptureWithoutGraphs(Capture):
    """A `Capture` that leaves Dynamo's graph hand-off alone: no FX graph text per compile (the largest part of
    the capture's compile-time cost). Recompiles, graph breaks, entries and guards are recorded as usual."""

    def _make_call_user_compiler(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        return orig

    def _make_install_global_unsafe(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        return orig


class Recorder:
    """Records every compile, cache miss (recompile) and graph break while installed.

    Args:
        count_hits: count the calls each cache entry serves (a bytecode-debugger callback for the region; leave
            it off when only recompiles and graph breaks matter, the callback costs a Python call per call).
        guard_cost: keep torch's guard-eval latency of each compile (`guard_cost.GuardCostLog`).
        graphs: record each compile's FX graph (its text costs compile time; the pytest plugin leaves it off
            unless it writes reports).

    Thread safety: the hooks record on whichever thread compiles; call `result` on the thread that ran the
    region (it reads torch's cache entries).
    """

    def __init__(self, *, count_hits: bool = False, guard_cost: bool = True, graphs: bool = True) -> None:
        compat.load()
        self.log = RecompileLog()
        capture_type = Capture if graphs else _CaptureWithoutGraphs
        self.capture = capture_type(on_compiled=self.log.on_compiled, on_cache_miss=self.log.on_cache_miss,
                                     count_hits=count_hits)
        self.costs = GuardCostLog() if guard_cost else None
        self.installed = False

    def install(self) -> "Recorder":
        if not self.installed:
            self.capture.install()
            if self.costs is not None:
                self.costs.install()
            self.installed = True
        return self

    def uninstall(self) -> None:
        if self.installed:
            if self.costs is not None:
                self.costs.uninstall()
            self.capture.uninstall()
            self.installed = False

    def __enter__(self) -> "Recorder":
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ---------------------------------------------------------------------------------------------------------
    # queries
    # ---------------------------------------------------------------------------------------------------------

    def misses(self) -> tuple[RecompileRecord, ...]:
        """Every cache miss of code that already had entries, analysed when it happened (in order)."""
        return self.log.records()

    def recompile_count(self) -> int:
        """Recompiles in the region: cache misses of code that already had entries (a miss that hit the
        recompile limit counts too: the code then runs eagerly, which a budget should catch as well)."""
        return len(self.log.records())

    def graph_break_count(self) -> int:
        """Graph breaks recorded in the region (one per break Dynamo logged, duplicates included)."""
        return sum(len(f.graph_breaks) for f in self.capture.frames(guards=False))

    def result(self, exit: ExitResult | None = None, *, guards: bool = True) -> ReportResult:
        """The region as a `report.ReportResult` (``.text()`` is the summary, ``.text(full=True)`` the whole text
        report, ``.json()`` the ``report --json`` document). `exit` defaults to a normal end (status 0)."""
        return ReportResult(
            exit=exit or ExitResult(0),
            frames=tuple(self.capture.frames(guards=guards)),
            skipped_frames=tuple(self.capture.skipped_frames()),
            disabled=tuple(self.capture.disabled)
            + ((self.costs.disabled,) if self.costs and self.costs.disabled else ()),
            errors=tuple(self.capture.errors),
            recompile_records=self.misses(),
            guard_costs=self.costs.costs() if self.costs is not None else None,
        )

    def frames(self, *, guards: bool = False) -> list[Any]:
        """`Capture.frames` of the region."""
        return self.capture.frames(guards=guards)
