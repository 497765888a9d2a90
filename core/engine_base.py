"""What the engine's method groups share: the worker-thread wrapper `engine_method`, `refuse`, the `EngineHost` they
compose into (the session's shared state, declared once), and `delegate`, which puts a group's method on the facade.

`Session` (the `dynadbg.core.protocol.Engine` facade) is composed of groups by job (`engine_decisions`,
`engine_queries`, `engine_edits`, ...). Each group is a `Group` holding the session as its `host`; its public
methods are wrapped by `engine_method` exactly as the facade's own, and the facade names them with `delegate`, so
callers see one object with one method set.
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Concatenate, Generic, NoReturn, ParamSpec, Protocol, TypeVar, overload

from .model import EngineError, ErrorKind, FrameView, GeneratedInfo, HistoryView, Resumed, Stop

if TYPE_CHECKING:
    from .decisions import GuardDropper
    from .guard_edits import GuardEditor
    from .history import History, HistoryCursor
    from .patches import PatchManager
    from .recompile import RecompileLog
    from .stack import FrameState
    from .state import Breakpoint, Mode, PauseContext

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")


class Refused(Exception):
    """Raised inside an engine method to return its `EngineError` (caught by `engine_method`)."""

    def __init__(self, error: EngineError) -> None:
        super().__init__(error.message)
        self.error = error


def refuse(message: str, kind: ErrorKind = ErrorKind.USAGE, *, raised: BaseException | None = None) -> NoReturn:
    """Return `EngineError(message, kind)` from the engine method running (`raised`: the user's code raised it)."""
    raise Refused(EngineError(message, kind, type(raised).__name__ if raised is not None else None))


def engine_method(*, anytime: bool = False) -> Callable[[F], F]:
    """Run the method on the worker thread (see `dynadbg.core.engine`); `anytime`: also while the program runs.

    The flag stays on the method (``method.anytime``): it is also what the command language reads to know which
    verbs work while the program runs (`dynadbg.core.verbs.runs_anytime`). The wrapped method's owner (the facade
    or a `Group`) provides ``_on_worker(call, anytime)``."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            def call() -> Any:
                try:
                    return fn(self, *args, **kwargs)
                except Refused as exc:
                    return exc.error

            return self._on_worker(call, anytime)

        method.anytime = anytime  # type: ignore[attr-defined]
        return method  # type: ignore[return-value]

    return wrap


def anytime(fn: F) -> F:
    """Mark a facade method that runs on the caller's thread (`quit`, `interrupt`) as working at any time, as
    ``engine_method(anytime=True)`` marks the others: the command language reads the flag (`verbs.runs_anytime`)."""
    fn.anytime = True  # type: ignore[attr-defined]
    return fn


class EngineHost(Protocol):
    """The session state and helpers the method groups read and write (all on the worker thread).

    `Session` provides every one; a group names here what it uses, so nothing is borrowed undeclared."""

    ctx: "PauseContext | None"
    mode: "Mode"
    count: int
    breakpoints: "dict[int, dict[int, Breakpoint]]"
    capture: Any
    guard_costs: Any
    recompiles: "RecompileLog"
    stop_seq: int
    _resumed: Resumed | None
    _quiet: set[int]
    _user_vars: dict[str, Any]
    verbose: bool
    generated: dict[int, CodeType]
    history: "History"
    history_cursor: "HistoryCursor"
    compile_hooks: list[Callable[[Any], None]]

    def _on_worker(self, call: Callable[[], Any], anytime: bool) -> Any: ...  # noqa: D102
    def _paused(self) -> "PauseContext": ...  # noqa: D102
    def _need_frame(self) -> "FrameState": ...  # noqa: D102
    def _current_code(self) -> CodeType | None: ...  # noqa: D102
    def _original(self) -> CodeType | None: ...  # noqa: D102
    def _leave_history(self) -> bool: ...  # noqa: D102
    def _live_only(self, what: str) -> None: ...  # noqa: D102
    def _history_shown(self, present: Stop) -> HistoryView | None: ...  # noqa: D102
    def _selected_view(self) -> FrameView | None: ...  # noqa: D102
    def _rebuild_stop(self) -> None: ...  # noqa: D102
    def _refresh_stop(self, **changes: Any) -> None: ...  # noqa: D102
    def eval_namespace(self, ctx: "PauseContext | None" = None) -> tuple[dict[str, Any], dict[str, Any]]: ...  # noqa: D102
    def generated_info(self, code: CodeType) -> GeneratedInfo | None: ...  # noqa: D102
    def message(self, text: str) -> None: ...  # noqa: D102
    @property
    def patch_manager(self) -> "PatchManager": ...  # noqa: D102
    @property
    def guard_editor(self) -> "GuardEditor": ...  # noqa: D102
    @property
    def guard_dropper(self) -> "GuardDropper": ...  # noqa: D102


class Group:
    """One group of engine methods, composed into the session (`host`); its `engine_method`s run as the facade's."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host

    def _on_worker(self, call: Callable[[], Any], anytime: bool) -> Any:
        return self.host._on_worker(call, anytime)


class delegate(Generic[P, R]):  # noqa: N801 - used like a decorator-made method, lowercase like `property`
    """A facade attribute that is a group's method: ``decide = delegate("_decisions", Decisions.decide)`` makes
    ``session.decide`` the bound ``session._decisions.decide`` (its `engine_method` flag and signature included);
    on the class it is the group's function."""

    def __init__(self, group: str, fn: Callable[Concatenate[Any, P], R]) -> None:
        self.group, self.fn = group, fn

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Callable[Concatenate[Any, P], R]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self.fn
        return getattr(getattr(obj, self.group), self.fn.__name__)
