"""What the capture hands the engine when Dynamo compiles, misses the cache, or gives a frame up: plain event
objects (`CompileEvent`, `CacheMissEvent`, `EagerFallbackEvent`), made by `dynadbg.core.capture` inside torch's
hooks and read by the session and its services.

A low module (it imports only `model`): `state.PauseContext` holds these events, and the services type them,
without importing the capture.
"""

from __future__ import annotations

from types import CodeType
from typing import Any

from .model import GraphBreakView


class CompileEvent:
    """One finished compile, seen just before Dynamo hands it to C++ (a plain, mutable object).

    Attributes:
        original_code: the code object Dynamo compiled (the user's function, or a resume function).
        code: the generated code this call will run. Assign another code object to replace it for this call
            (and for the cache entry); the arg/cell/free-var layout must match `original_code` — Dynamo does not
            check a replacement made here.
        dynamo_code: Dynamo's own generated code (read-only; kept alive by the capture, since Dynamo deletes the
            ``__compiled_fn_*`` globals when it is collected).
        compile_id: ``"0/1"``.
        guard_manager: the built ``GuardManagerWrapper``. Assign another wrapper to replace it for this entry.
        guarded_code: torch's ``GuardedCode`` (``.code``, ``.guard_manager``, ``.compile_id``, ...).
        frame_name: ``co_qualname`` of `original_code`.
        is_resume: True when `original_code` is a resume function.
    """

    __slots__ = (
        "original_code", "code", "dynamo_code", "compile_id", "guard_manager", "guarded_code", "frame_name",
        "is_resume",
    )

    def __init__(self, original_code: CodeType, code: CodeType, compile_id: str, guard_manager: Any,
                 guarded_code: Any, is_resume: bool) -> None:
        self.original_code = original_code
        self.code = code
        self.dynamo_code = code
        self.compile_id = compile_id
        self.guard_manager = guard_manager
        self.guarded_code = guarded_code
        self.frame_name = getattr(original_code, "co_qualname", original_code.co_name)
        self.is_resume = is_resume

    @property
    def original(self) -> CodeType:
        """Alias of `original_code`."""
        return self.original_code

    @property
    def replaced(self) -> bool:
        """True when the callback replaced `code`."""
        return self.code is not self.dynamo_code

    def __repr__(self) -> str:
        return f"<CompileEvent {self.compile_id} {self.frame_name}>"


class CacheMissEvent:
    """A call missed every cache entry of a code object that already has some (a recompile is next).

    Attributes:
        code: the original code object (user function or resume function).
        f_locals: ``dict(frame.f_locals)`` — what the guards are checked against; includes free variables.
        cache_entries: torch's ``_CacheEntry`` objects, newest first (``compile_id``, ``guard_manager``, ``code``).
        compile_ids: their compile ids as text, newest first.
        frame_name: ``co_qualname`` of `code`.
        backend: the backend object this call would compile with (``compat.innermost_backend`` of the callback
            that missed; torch skips an entry whose ``backend`` differs: BACKEND_MATCH), None when unknown.
        callback: torch's callback that missed (``CatchErrorsWrapper``): what this ``torch.compile`` region
            fixed, e.g. its own ``recompile_limit`` (``compat.callback_compile_options``); None when unknown.
        after_limit: the code already hit its recompile limit: torch will not compile, the call runs its
            entries or eagerly whatever the hook answers (the hook is told, for the record, and should not stop).
        capture: the `Capture` that saw the miss, or None.
        closure: the frame's closure cells (``frame.closure``), None when unknown.
    """

    __slots__ = ("code", "f_locals", "cache_entries", "compile_ids", "frame_name", "backend", "callback",
                 "after_limit", "capture", "closure")

    def __init__(self, code: CodeType, f_locals: dict[str, Any], cache_entries: list[Any],
                 backend: Any = None, callback: Any = None, *, after_limit: bool = False,
                 capture: Any = None, closure: Any = None) -> None:
        #: the frame's closure cells (``frame.closure``; part of the key of torch's automatic-dynamic size
        #: record, `compat.recorded_sizes`), None when unknown
        self.closure = closure
        self.after_limit = after_limit
        #: the capture that saw the miss: its call sites and guard filter entries (`advice.advise`)
        self.capture = capture
        self.code = code
        self.f_locals = f_locals
        self.cache_entries = cache_entries
        self.backend = backend
        self.callback = callback
        self.compile_ids = tuple(str(e.compile_id) for e in cache_entries)
        self.frame_name = getattr(code, "co_qualname", code.co_name)

    @property
    def entries(self) -> list[Any]:
        """Alias of `cache_entries`."""
        return self.cache_entries

    def __repr__(self) -> str:
        return f"<CacheMissEvent {self.frame_name} entries={list(self.compile_ids)}>"


class EagerFallbackEvent:
    """Dynamo gave up on a frame after a graph break, and the frame runs eagerly with no resume function: a break
    in a ``try`` block or a generator ("falling back to eager"), or a resume function Dynamo skipped.

    Attributes:
        code: the code object that runs eagerly (the frame, or the skipped resume function).
        f_locals: its inputs (``dict(frame.f_locals)``).
        skip_reason: torch's reason for not compiling it.
        breaks: the graph breaks behind it (`model.GraphBreakView`, oldest first): the ones logged while
            compiling this frame, or, for a skipped resume function, those of the compile that made it.
        resume_of: for a skipped resume function, the original code it resumes, else None.
    """

    __slots__ = ("code", "f_locals", "skip_reason", "breaks", "resume_of")

    def __init__(self, code: CodeType, f_locals: dict[str, Any], skip_reason: str,
                 breaks: tuple[GraphBreakView, ...], resume_of: CodeType | None = None) -> None:
        self.code = code
        self.f_locals = f_locals
        self.skip_reason = skip_reason
        self.breaks = breaks
        self.resume_of = resume_of

    def __repr__(self) -> str:
        return f"<EagerFallbackEvent {self.code.co_name} breaks={len(self.breaks)}>"
