"""The engine methods over the selected frame's values: evaluate, exec, globals, set a local, watches.

`Values` is a group of `Session` (`engine_base.Group`); `Session` names its public methods (see
`dynadbg.core.protocol.Engine` for each one's contract)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from types import CodeType
from typing import Any

from . import compat
from .engine_base import Group, EngineHost, Refused, engine_method, refuse
from .model import (
    EngineError,
    ErrorKind,
    EvalResult,
    ValueSummary,
    WatchValue,
)
from .state import PauseContext
from .values import MAX_REPR, cut, summarize


#: longest `evaluate` text (characters): a tensor's repr is already summarised by torch past 1000 elements
MAX_EVAL_TEXT = 20000


@dataclass
class _Watch:
    number: int
    expr: str
    code: CodeType
    seq: int = -1                   # the stop `value` was computed at
    key: str | None = None          # text or error at stop `seq`
    prev_key: str | None = None     # text or error at the stop before
    value: WatchValue | None = None


class Values(Group):
    """The engine methods over the selected frame's values: evaluate, exec, globals, set a local, watches."""

    def __init__(self, host: EngineHost) -> None:
        super().__init__(host)
        self._watches: list[_Watch] = []
        self._watch_numbers = 0
        #: a statement changed a local of generated code already (the note about it is said once)
        self._local_change_told = False

    @engine_method()
    def evaluate(self, expr: str) -> EvalResult | EngineError:
        if not expr:
            refuse("usage: p EXPR")
        self.host._live_only("p")
        g, ns = self.host.eval_namespace()
        try:
            code = compile(expr, "<p>", "eval")
        except SyntaxError as exc:
            refuse(f"syntax error: {exc.msg}")
        try:
            value = eval(code, g, ns)  # noqa: S307 - the user's own expression in their own program
        except Exception as exc:  # noqa: BLE001
            refuse(f"{type(exc).__name__}: {exc}", ErrorKind.EVAL, raised=exc)
        try:
            text = repr(value)
        except Exception as exc:  # noqa: BLE001
            text = f"<repr failed: {exc}>"
        # the whole value, lines kept (a tensor's values as torch prints them), bounded for huge ones
        if len(text) > MAX_EVAL_TEXT:
            text = text[: MAX_EVAL_TEXT - 1] + "…"
        return EvalResult(text, summarize(value))

    @engine_method()
    def exec_statement(self, stmt: str) -> EvalResult | EngineError:
        if not stmt:
            refuse("usage: !STMT")
        self.host._live_only("!")
        g, ns = self.host.eval_namespace()
        try:
            code = compile(stmt, "<!>", "single")
        except SyntaxError as exc:
            refuse(f"syntax error: {exc.msg}")
        before = dict(ns)
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                exec(code, g, ns)  # noqa: S102 - the user's own statement
        except Exception as exc:  # noqa: BLE001
            refuse(f"{type(exc).__name__}: {exc}", ErrorKind.EVAL, raised=exc)
        changed = self._keep_statement_effects(before, ns)
        first = bool(changed) and not self._local_change_told
        if first:
            self._local_change_told = True
        return EvalResult(buf.getvalue().rstrip("\n"), changed_locals=changed, first_local_change=first)

    def _keep_statement_effects(self, before: dict[str, Any], ns: dict[str, Any]) -> tuple[str, ...]:
        """After ``!STMT``: a frame local it rebound is written back to the frame (as `set` does, and as pdb does
        for ``x = 999``); any other new name becomes a user variable that later stops still see (pdb keeps them
        in the frame's dict). Returns the frame locals it wrote."""
        ctx = self.host._paused()
        st = ctx.frame
        frame = st.frame if st is not None and not ctx.post_mortem else None
        names = (frame.f_code.co_varnames + frame.f_code.co_cellvars + frame.f_code.co_freevars) if frame else ()
        changed: list[str] = []
        f_locals = frame.f_locals if frame is not None else {}  # read once: each read refreshes it from the frame
        for name, value in ns.items():
            if name in ("__stack__", "__builtins__") or (name in before and before[name] is value):
                continue
            if name in names:
                f_locals[name] = value
                changed.append(name)
            else:
                self.host._user_vars[name] = value
        if changed and frame is not None:  # changed names are the frame's own locals: there is a frame
            compat.locals_to_fast(frame)
            self.host._rebuild_stop()
        return tuple(changed)

    @engine_method()
    def global_values(self, pattern: str | None = None) -> tuple[tuple[str, ValueSummary], ...] | EngineError:
        """The selected frame's globals whose name contains `pattern` (case-insensitive; every one when None),
        sorted by name, each summarised (Dynamo's own ``__compiled_fn_*`` / ``__resume_at_*`` globals too)."""
        g, _ns = self.host.eval_namespace()
        needle = (pattern or "").lower()
        rows = [(name, summarize(value)) for name, value in list(g.items())
                if name != "__builtins__" and needle in name.lower()]
        return tuple(sorted(rows))

    @engine_method(anytime=True)
    def set_verbose(self, on: bool | None = None) -> bool:
        """Switch verbose mode (None: toggle); returns the new state. While on, every instruction of generated
        code is printed before it runs (flushed at once, so the last line before a crash names the culprit)."""
        self.host.verbose = (not self.host.verbose) if on is None else bool(on)
        self.host._quiet.clear()
        return self.host.verbose

    @engine_method()
    def set_local(self, name: str, expr: str) -> ValueSummary | EngineError:
        if not name.isidentifier() or not expr:
            refuse("usage: set NAME = EXPR")
        self.host._live_only("set")
        ctx = self.host._paused()
        st = self.host._need_frame()
        frame = st.frame
        code = frame.f_code
        if name not in code.co_varnames + code.co_cellvars + code.co_freevars:
            refuse(f"{name!r} is not a local of {code.co_name}")
        if ctx.post_mortem:
            refuse("the frame has finished (post-mortem): locals cannot change", ErrorKind.NOT_HERE)
        g, ns = self.host.eval_namespace()
        try:
            value = eval(compile(expr, "<set>", "eval"), g, ns)  # noqa: S307
        except SyntaxError as exc:
            refuse(f"syntax error: {exc.msg}")
        except Exception as exc:  # noqa: BLE001
            refuse(f"{type(exc).__name__}: {exc}", ErrorKind.EVAL, raised=exc)
        frame.f_locals[name] = value
        compat.locals_to_fast(frame)
        self.host._rebuild_stop()
        return summarize(value)

    @engine_method(anytime=True)
    def add_watch(self, expr: str) -> WatchValue | EngineError:
        self.host._live_only("a new watch")
        expr = expr.strip()
        if not expr:
            refuse("usage: watch EXPR")
        try:
            code = compile(expr, "<watch>", "eval")
        except SyntaxError as exc:
            refuse(f"syntax error: {exc.msg}")
        self._watch_numbers += 1
        watch = _Watch(self._watch_numbers, expr, code)
        self._watches.append(watch)
        if self.host.ctx is not None:
            self.host._refresh_stop(watches=self.watch_values(self.host.ctx))
        return watch.value or WatchValue(watch.number, expr, evaluated=False)

    @engine_method(anytime=True)
    def remove_watch(self, number: int) -> WatchValue | EngineError:
        for watch in self._watches:
            if watch.number == number:
                self._watches.remove(watch)
                if self.host.ctx is not None:
                    self.host._refresh_stop(watches=self.watch_values(self.host.ctx))
                return watch.value or WatchValue(watch.number, watch.expr, evaluated=False)
        known = ", ".join(str(w.number) for w in self._watches) or "none"
        refuse(f"no watch {number} (watches: {known})")

    @engine_method(anytime=True)
    def watches(self) -> tuple[WatchValue, ...]:
        return tuple(w.value or WatchValue(w.number, w.expr, evaluated=False) for w in self._watches)

    def watch_values(self, ctx: PauseContext) -> tuple[WatchValue, ...]:
        """Every watch evaluated in `ctx`'s selected frame (worker thread; a failing expression gives its error).

        ``changed`` compares with the previous stop's value, so re-evaluating at the same stop (another frame
        selected) keeps comparing with that stop."""
        if not self._watches:
            return ()
        scope: tuple[dict[str, Any], dict[str, Any]] | None
        try:
            scope = self.host.eval_namespace(ctx)
        except Refused:
            scope = None
        seq = self.host.stop_seq
        out = []
        for w in self._watches:
            if w.seq != seq:
                w.prev_key, w.seq = w.key, seq
            if scope is None:
                w.key = None
                w.value = WatchValue(w.number, w.expr, evaluated=False)
                out.append(w.value)
                continue
            error = text = None
            summary = None
            try:
                value = eval(w.code, scope[0], dict(scope[1]))  # noqa: S307 - the user's own expression
                try:
                    text = cut(repr(value), MAX_REPR)
                except Exception as exc:  # noqa: BLE001
                    text = f"<repr failed: {exc}>"
                summary = summarize(value)
            except Exception as exc:  # noqa: BLE001 - a bad watch shows its error; it never stops the program
                error = cut(f"{type(exc).__name__}: {exc}", MAX_REPR)
            w.key = error if error is not None else text
            changed = w.prev_key is not None and w.key != w.prev_key
            w.value = WatchValue(w.number, w.expr, text or "", summary, error, changed)
            out.append(w.value)
        return tuple(out)
