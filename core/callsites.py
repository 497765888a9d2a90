"""Where the user wrote ``torch.compile``: the call sites a printed fix has to name.

A permanent fix goes on the call the user wrote (``cforward = torch.compile(forward)``, ``opt_step =
torch.compile(opt.step)``, ``layer.compile(...)``, ``@torch.compile``), never on a name guessed from the function
that recompiled (a resume function, ``forward``, torch's own ``Adam.step``). `CallSiteLog` records each call of
``torch.compile``, ``nn.Module.compile`` and ``torch._dynamo.optimize`` made from user code while it is installed
(file, line, the call's exact source text, what it wrapped), and keeps the ``torch._dynamo`` context each call
made. Dynamo compiles a frame while a call of what that context returned is on the stack
(`compat.dynamo_context_on_stack`): `note_compile` (run for every compile) ties the compiled code object to the
call site of the innermost such context, so a resume function, a function the compiled one calls, and torch's
own optimizer code all belong to the user's call. Code compiled under no recorded call (a session that attached
after ``torch.compile`` ran) has no call site: `site_for` says None, and the fix says so.

`with_option(site, key, value)` rewrites the call's own text with one more ``options`` entry (or, for
``torch._dynamo.optimize``, a keyword), through `ast`, so the printed fix is the user's call with the change.
Every torch API used here is in `compat` (section "advice").
"""

from __future__ import annotations

import ast
import enum
import linecache
import sys
import threading
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Callable

from . import compat

__all__ = ["CallSite", "CallSiteKind", "CallSiteLog", "with_keyword", "with_option"]


class CallSiteKind(str, enum.Enum):
    """Which API the user called."""

    TORCH_COMPILE = "torch.compile"
    MODULE_COMPILE = "Module.compile"
    OPTIMIZE = "torch._dynamo.optimize"


@dataclass(frozen=True)
class CallSite:
    """One call of ``torch.compile`` / ``nn.Module.compile`` / ``torch._dynamo.optimize`` in user code.

    Attributes:
        number: 1-based, in the order the calls were made.
        kind: which API.
        filename, lineno: where the call is (the line it starts on).
        text: the call's own source text, exactly as written (``"torch.compile(forward, backend='eager')"``;
            for a bare decorator ``@torch.compile`` it is ``"torch.compile"``).
        line: the whole first source line (``"cforward = torch.compile(forward)"``), stripped.
        target: what it wrapped, one line (``"function forward"``, ``"module MLP"``, ``"method Adam.step"``,
            ``"(decorator)"`` until the decorator is applied).
        decorator: the call is a decorator (``@torch.compile`` / ``@torch.compile(...)``).
    """

    number: int
    kind: CallSiteKind
    filename: str
    lineno: int
    text: str
    line: str
    target: str
    decorator: bool = False

    @property
    def where(self) -> str:
        """``"prog.py:12"`` (the file's base name)."""
        return f"{self.filename.rsplit('/', 1)[-1]}:{self.lineno}"


def describe_target(obj: Any) -> str:
    """One line naming what a ``torch.compile`` call wrapped."""
    if obj is None:
        return "(decorator)"
    func = getattr(obj, "__func__", None)
    owner = getattr(obj, "__self__", None)
    if func is not None and owner is not None:
        return f"method {type(owner).__name__}.{getattr(func, '__name__', '?')}"
    try:
        import torch

        if isinstance(obj, torch.nn.Module):
            return f"module {type(obj).__name__}"
    except Exception:  # noqa: BLE001 - no torch: not a module
        pass
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"function {name}" if name else type(obj).__name__


class _Pending:
    """A call site being made: the torch.compile call that is running now on this thread."""

    __slots__ = ("site",)

    def __init__(self, site: CallSite) -> None:
        self.site = site


class CallSiteLog:
    """The call sites of one run, and which one each compiled code object belongs to.

    Args:
        own_dirs: path prefixes of the debugger's own files (their calls are no user call sites).

    Thread safety: the patches and `note_compile` run on the thread that calls or compiles; the records are
    guarded by a lock.
    """

    def __init__(self, own_dirs: tuple[str, ...] = ()) -> None:
        self.own_dirs = own_dirs
        self.installed = False
        self._patches = compat.PatchSet()
        self._lock = threading.Lock()
        self._tls = threading.local()
        self._sites: list[CallSite] = []
        #: id(torch._dynamo context) -> (context kept alive, call site)
        self._contexts: dict[int, tuple[Any, CallSite]] = {}
        #: id(original code) -> (code kept alive, call sites it was compiled under, most recent last)
        self._codes: dict[int, tuple[CodeType, list[CallSite]]] = {}
        self._torch_dir = ""

    # -- install -------------------------------------------------------------------------------------------

    def install(self) -> "CallSiteLog":
        """Patch the three APIs (each that this torch has). Idempotent."""
        if self.installed:
            return self
        self._torch_dir = compat.torch_dir()
        makers: dict[str, Callable[[Any], Any]] = {
            "torch.compile": self._make_torch_compile,
            "Module.compile": self._make_module_compile,
            "torch._dynamo.optimize": self._make_optimize,
        }
        self._patches.wrap(compat.compile_call_targets(), makers)
        self.installed = True
        return self

    def uninstall(self) -> None:
        """Put the three APIs back. The records stay readable."""
        if not self.installed:
            return
        self.installed = False
        self._patches.restore()

    # -- queries -------------------------------------------------------------------------------------------

    def sites(self) -> tuple[CallSite, ...]:
        """Every recorded call site, in call order."""
        with self._lock:
            return tuple(self._sites)

    def site_for(self, code: CodeType | int) -> CallSite | None:
        """The call site `code` (an original code object or its id) was last compiled under, else None."""
        key = code if isinstance(code, int) else id(code)
        with self._lock:
            hit = self._codes.get(key)
            return hit[1][-1] if hit else None

    def sites_for(self, code: CodeType | int) -> tuple[CallSite, ...]:
        """Every call site `code` was compiled under, first first (a function two compiled callers share)."""
        key = code if isinstance(code, int) else id(code)
        with self._lock:
            hit = self._codes.get(key)
            return tuple(dict.fromkeys(hit[1])) if hit else ()

    def site_on_stack(self) -> CallSite | None:
        """The call site whose compiled call is running on this thread now (the innermost), else None: at a
        cache miss, the call that missed (which may not be the one the code was first compiled under)."""
        if not self.installed:
            return None
        try:
            context = compat.dynamo_context_on_stack(sys._getframe(1))  # noqa: SLF001 - the running stack
        except Exception:  # noqa: BLE001
            return None
        return self.site_of_context(context) if context is not None else None

    def site_of_context(self, context: Any) -> CallSite | None:
        with self._lock:
            hit = self._contexts.get(id(context))
            return hit[1] if hit is not None and hit[0] is context else None

    # -- the compile hook ------------------------------------------------------------------------------------

    def note_compile(self, code: CodeType) -> CallSite | None:
        """Dynamo compiles `code` now (on this thread): tie it to the call site whose compiled call is running.
        Returns that site, or None when the call was made by no recorded call site."""
        if not self.installed:
            return None
        try:
            context = compat.dynamo_context_on_stack(sys._getframe(1))  # noqa: SLF001 - the compiling stack
        except Exception:  # noqa: BLE001 - a stack that cannot be read: no site
            return None
        if context is None:
            return None
        site = self.site_of_context(context)
        if site is None:
            return None
        with self._lock:
            hit = self._codes.get(id(code))
            if hit is None or hit[0] is not code:
                self._codes[id(code)] = (code, [site])
            elif hit[1][-1] is not site:
                hit[1].append(site)
        return site

    def note_resume(self, resume: CodeType, origin: CodeType) -> None:
        """A resume function belongs to the call site of the code it resumes (when it compiled elsewhere)."""
        site = self.site_for(origin)
        if site is None:
            return
        with self._lock:
            if id(resume) not in self._codes:
                self._codes[id(resume)] = (resume, [site])

    # -- recording -------------------------------------------------------------------------------------------

    def _user_frame(self, frame: FrameType | None) -> FrameType | None:
        """The first frame from `frame` outwards that is neither torch's nor the debugger's own."""
        f = frame
        while f is not None:
            name = f.f_code.co_filename
            if not name.startswith(self._torch_dir) and not name.startswith(self.own_dirs):
                return f
            f = f.f_back
        return None

    def _record(self, kind: CallSiteKind, frame: FrameType, target: Any) -> CallSite:
        pos = compat.call_positions(frame)
        filename = frame.f_code.co_filename
        lineno = pos[0] if pos else frame.f_lineno
        text = _source_span(filename, pos) if pos else ""
        line = linecache.getline(filename, lineno).strip()
        decorator = _is_decorator(filename, lineno, pos)
        with self._lock:
            site = CallSite(len(self._sites) + 1, kind, filename, lineno, text or line, line,
                            describe_target(target), decorator)
            self._sites.append(site)
        return site

    def _set_target(self, site: CallSite, target: Any) -> CallSite:
        """A decorator's site once the decorator is applied: the record names the function."""
        from dataclasses import replace

        new = replace(site, target=describe_target(target))
        with self._lock:
            self._sites[site.number - 1] = new
            for key, (ctx, s) in list(self._contexts.items()):
                if s is site:
                    self._contexts[key] = (ctx, new)
        return new

    def _attach_context(self, context: Any) -> None:
        pending: _Pending | None = getattr(self._tls, "pending", None)
        if pending is None or context is None:
            return
        with self._lock:
            self._contexts[id(context)] = (context, pending.site)

    def _calling(self, site: CallSite, call: Callable[[], Any]) -> Any:
        prev = getattr(self._tls, "pending", None)
        self._tls.pending = _Pending(site)
        try:
            return call()
        finally:
            self._tls.pending = prev

    def _make_torch_compile(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        log = self

        def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch's name
            if not log.installed or getattr(log._tls, "pending", None) is not None:
                return orig(model, *args, **kwargs)
            frame = log._user_frame(sys._getframe(1))  # noqa: SLF001 - where the call is written
            if frame is None or frame is not sys._getframe(1):  # noqa: SLF001
                return orig(model, *args, **kwargs)     # torch's (or our) own use of torch.compile
            try:
                site = log._record(CallSiteKind.TORCH_COMPILE, frame, model)
            except Exception:  # noqa: BLE001 - recording must never break the program
                return orig(model, *args, **kwargs)
            result = log._calling(site, lambda: orig(model, *args, **kwargs))
            if model is None and callable(result):
                # ``@torch.compile(...)``: torch returns a decorator that calls torch.compile again later
                decorate = result

                def decorator(fn: Any) -> Any:
                    return log._calling(log._set_target(site, fn), lambda: decorate(fn))

                return decorator
            return result

        compile.__wrapped__ = orig  # type: ignore[attr-defined]
        compile.__doc__ = orig.__doc__
        return compile

    def _make_module_compile(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        log = self

        def compile(module: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch's name
            if not log.installed or getattr(log._tls, "pending", None) is not None:
                return orig(module, *args, **kwargs)
            frame = log._user_frame(sys._getframe(1))  # noqa: SLF001 - where the call is written
            if frame is None or frame is not sys._getframe(1):  # noqa: SLF001
                return orig(module, *args, **kwargs)
            try:
                site = log._record(CallSiteKind.MODULE_COMPILE, frame, module)
            except Exception:  # noqa: BLE001
                return orig(module, *args, **kwargs)
            return log._calling(site, lambda: orig(module, *args, **kwargs))

        compile.__wrapped__ = orig  # type: ignore[attr-defined]
        compile.__doc__ = orig.__doc__
        return compile

    def _make_optimize(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        log = self

        def optimize(*args: Any, **kwargs: Any) -> Any:
            context = orig(*args, **kwargs)
            if not log.installed:
                return context
            try:
                if getattr(log._tls, "pending", None) is not None:
                    log._attach_context(context)          # made by a torch.compile / Module.compile we record
                else:
                    frame = log._user_frame(sys._getframe(1))  # noqa: SLF001 - where the call is written
                    if frame is not None and frame is sys._getframe(1):  # noqa: SLF001
                        site = log._record(CallSiteKind.OPTIMIZE, frame, None)
                        with log._lock:
                            log._contexts[id(context)] = (context, site)
            except Exception:  # noqa: BLE001 - recording must never break the program
                pass
            return context

        optimize.__wrapped__ = orig  # type: ignore[attr-defined]
        optimize.__doc__ = orig.__doc__
        return optimize


def _source_span(filename: str, pos: tuple[int, int, int, int]) -> str:
    """The source text between two positions (1-based lines, 0-based UTF-8 byte columns)."""
    line, end_line, col, end_col = pos
    lines = [linecache.getline(filename, n) for n in range(line, end_line + 1)]
    if not lines or not any(lines):
        return ""
    raw = [ln.encode("utf-8") for ln in lines]
    if len(raw) == 1:
        return raw[0][col:end_col].decode("utf-8", "replace")
    parts = [raw[0][col:]] + raw[1:-1] + [raw[-1][:end_col]]
    return b"".join(parts).decode("utf-8", "replace")


def _is_decorator(filename: str, lineno: int, pos: tuple[int, int, int, int] | None) -> bool:
    line = linecache.getline(filename, lineno)
    if pos is None:
        return line.lstrip().startswith("@")
    return line[:pos[2]].strip() == "@"


# --------------------------------------------------------------------------------------------------------------
# The fix, on the user's own call
# --------------------------------------------------------------------------------------------------------------


def _offset(text: str, lineno: int, col: int) -> int:
    """The character offset in `text` of an `ast` position (1-based line, UTF-8 byte column)."""
    lines = text.splitlines(keepends=True)
    before = sum(len(ln) for ln in lines[:lineno - 1])
    return before + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "replace"))


def _parse_call(text: str) -> tuple[str, ast.expr] | None:
    text = text.strip()
    try:
        return text, ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _insert_keyword(text: str, call: ast.Call, piece: str) -> str:
    """`text` (the source of `call`) with ``piece`` (``"name=value"``) as its last argument, the user's own
    spelling kept."""
    close = _offset(text, call.end_lineno or 1, (call.end_col_offset or 1) - 1)   # the call's ")"
    if call.args or call.keywords:
        arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
        last = max(arguments, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
        at = _offset(text, last.end_lineno or 1, last.end_col_offset or 0)
        return text[:at] + f", {piece}" + text[at:]
    return text[:close] + piece + text[close:]


def with_option(site: CallSite, key: str, value_src: str) -> str | None:
    """The site's call with ``options={..., key: value}`` (``torch.compile`` and ``Module.compile``) or the
    keyword ``key=value`` (``torch._dynamo.optimize``, which takes ``guard_filter_fn`` itself), as source text in
    the user's own spelling; None when the call cannot be rewritten (its text does not parse, or it passes
    ``options`` as a name or with ``**``): the caller then says where to add it instead. A bare decorator
    (``@torch.compile``) becomes a call.
    """
    if site.kind is CallSiteKind.OPTIMIZE:
        return with_keyword(site, key, value_src)
    parsed = _parse_call(site.text)
    if parsed is None:
        return None
    text, expr = parsed
    entry = f'"{key}": {value_src}'
    if not isinstance(expr, ast.Call):
        return f"{text}(options={{{entry}}})"
    if any(kw.arg is None for kw in expr.keywords) or passes_mode(site):
        return None
    options = next((kw for kw in expr.keywords if kw.arg == "options"), None)
    if options is None:
        return _insert_keyword(text, expr, f"options={{{entry}}}")
    if not isinstance(options.value, ast.Dict):
        return None
    d = options.value
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and k.value == key:
            start = _offset(text, v.lineno, v.col_offset)
            end = _offset(text, v.end_lineno or v.lineno, v.end_col_offset or v.col_offset)
            return text[:start] + value_src + text[end:]
    close = _offset(text, d.end_lineno or d.lineno, (d.end_col_offset or 1) - 1)   # the dict's "}"
    if d.keys:
        last = d.values[-1]
        at = _offset(text, last.end_lineno or last.lineno, last.end_col_offset or 0)
        return text[:at] + f", {entry}" + text[at:]
    return text[:close] + entry + text[close:]


def passes_mode(site: CallSite) -> bool:
    """The call passes ``mode=`` (not None): ``torch.compile`` then refuses ``options`` ("Either mode or options
    can be specified", torch 2.13)."""
    parsed = _parse_call(site.text)
    if parsed is None or not isinstance(parsed[1], ast.Call):
        return False
    return any(kw.arg == "mode" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
               for kw in parsed[1].keywords)


def with_keyword(site: CallSite, key: str, value_src: str) -> str | None:
    """The site's call with the keyword ``key=value`` added (or its value replaced), in the user's own spelling;
    None when it cannot be rewritten."""
    parsed = _parse_call(site.text)
    if parsed is None:
        return None
    text, expr = parsed
    if not isinstance(expr, ast.Call):
        return f"{text}({key}={value_src})"
    if any(kw.arg is None for kw in expr.keywords):
        return None
    for kw in expr.keywords:
        if kw.arg == key:
            start = _offset(text, kw.value.lineno, kw.value.col_offset)
            end = _offset(text, kw.value.end_lineno or kw.value.lineno, kw.value.end_col_offset or 0)
            return text[:start] + value_src + text[end:]
    return _insert_keyword(text, expr, f"{key}={value_src}")
