"""The engine methods that read the paused frame's code: its instruction roles, an instruction's explanation, the
value stack's provenance, the listing, the original code and the source.

`CodeQueries` is a group of `Session` (`engine_base.Group`); `Session` names its public methods (see
`dynadbg.core.protocol.Engine` for each one's contract)."""

from __future__ import annotations

import inspect
import linecache
from types import CodeType
from typing import Any

from .disasm import code_view
from .engine_base import Group, engine_method, refuse
from .model import (
    CodeRoles,
    CodeView,
    EngineError,
    ErrorKind,
    Explanation,
    Provenance,
    ValueSummary,
)
from . import explain as _explain
from . import provenance as _provenance
from . import roles as _roles


def _unknown_stack(stack: tuple[ValueSummary, ...]) -> bool:
    return len(stack) == 1 and stack[0].unknown


class CodeQueries(Group):
    """The engine methods that read the paused frame's code (roles, explanation, provenance, listing, source)."""

    def _teach_target(self) -> tuple[CodeType, Any]:
        """(code object, its `FrameView` or None) of the selected frame, or the compile stop's new code; while
        history is shown, the recorded stop's code and frame (its recorded value stack)."""
        present = self.host._paused().stop
        shown = self.host._history_shown(present) if present is not None else None
        if shown is not None and shown.entry is not None:
            fv = shown.stop.selected_frame
            code = self.host.generated.get(fv.code.key) if fv is not None else None
            if code is None:
                refuse("the recorded stop's code is no longer known", ErrorKind.NOT_HERE)
            return code, fv
        code = self.host._current_code()
        if code is None:
            refuse("no generated code here", ErrorKind.NOT_HERE)
        return code, self.host._selected_view()

    def _facts(self, code: CodeType) -> "_roles.CodegenFacts | None":
        # what the capture recorded for this compile (graph signatures, resume functions); without a capture
        # the roles are read from the code's shape alone
        if self.host.capture is None:
            return None
        try:
            from .snapshot import codegen_facts

            return codegen_facts(self.host.capture, code)  # cached: reading the capture costs tens of ms per call
        except Exception as exc:  # noqa: BLE001 - a capture fault costs the capture-based roles, not the listing
            self.host.message(f"roles: the capture's records could not be read ({type(exc).__name__}: {exc})")
            return None

    @engine_method()
    def roles(self) -> CodeRoles | EngineError:
        code, _fv = self._teach_target()
        return _roles.code_roles(code, self._facts(code))

    @engine_method()
    def explain(self, index: int | None = None) -> Explanation | EngineError:
        code, fv = self._teach_target()
        here = fv.index if fv is not None else -1
        if index is None:
            if here < 0:
                refuse("no current instruction here: give an index (`explain IDX`)")
            index = here
        n = len(_roles.flow_of(code)[0])
        if not 0 <= index < n:
            refuse(f"index {index} is outside 0..{n - 1}")
        # the live values only describe the stack before the instruction the frame is stopped at, and only in the
        # frame that runs: a caller suspended in a call (`below_call`) holds the slots under the call's operands
        live = (fv.stack if fv is not None and index == here and not fv.below_call and not _unknown_stack(fv.stack)
                else None)
        return _explain.explain(code, index, live, facts=self._facts(code))

    @engine_method()
    def stack_provenance(self) -> Provenance | EngineError:
        code, fv = self._teach_target()
        if fv is None or fv.index < 0:
            refuse("no value stack at this stop", ErrorKind.NOT_HERE)
        facts = self._facts(code)
        return _provenance.provenance(code, fv.index, facts=facts, roles=_roles.code_roles(code, facts))

    @engine_method()
    def listing(self) -> CodeView | EngineError:
        fv = self.host._selected_view()
        if fv is None:
            refuse("nothing to list here", ErrorKind.NOT_HERE)
        return fv.code

    @engine_method()
    def original_code(self) -> CodeView | EngineError:
        orig = self.host._original()
        if orig is None:
            refuse("the original code of this frame is not known", ErrorKind.NOT_HERE)
        return code_view(orig, generated=False)

    @engine_method()
    def source(self, whole_file: bool = False) -> tuple[str, int, tuple[str, ...]] | EngineError:
        code = self.host._original() or self.host._current_code()
        trace = getattr(self.host._paused().stop, "trace", None)
        if code is None and trace is not None and whole_file:
            # a trace stop: no frame runs; the file is the one of the code Dynamo traces (an inlined callee's)
            lines = linecache.getlines(trace.step.filename)
            if lines:
                return trace.step.filename, 1, tuple(line.rstrip("\n") for line in lines)
        if code is None:
            refuse("no source here", ErrorKind.NOT_HERE)
        if whole_file:
            lines = linecache.getlines(code.co_filename)
            if not lines:
                refuse(f"{code.co_filename} cannot be read", ErrorKind.NOT_HERE)
            return code.co_filename, 1, tuple(line.rstrip("\n") for line in lines)
        try:
            lines, start = inspect.getsourcelines(code)
        except (OSError, TypeError):
            lines = [linecache.getline(code.co_filename, code.co_firstlineno)]
            start = code.co_firstlineno
            if not lines[0]:
                refuse(f"source of {code.co_name} is not available", ErrorKind.NOT_HERE)
        return code.co_filename, start, tuple(line.rstrip() for line in lines)
