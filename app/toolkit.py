"""``dynadbg.toolkit``: script Dynamo's cache entries — read them, copy one with changed guards and code,
install the copy beside or instead of the original, re-bind compiled code to other modules or weights.

Use it from a plain script, on the program's own thread, with or without a debugging session::

    from dynadbg import toolkit

    cf = torch.compile(f, backend="eager")
    cf(x)
    entry = toolkit.entries(f)[0]                  # frozen records: compile id, code, guard tree, backend, ...
    entry.check(x2).failing                        # which guards reject this call (side-effect free)
    handle = (entry.copy()
              .drop_guard("L['flag']")             # drop a guard (or a whole manager)
              .add_guard("L['x']", "TENSOR_MATCH") # a real C++ leaf, built from the live object
              .inputs(x, True)
              .install(mode="next"))               # validated first: refused with the reason, or force=True
    handle.hits, handle.entry, handle.remove()
    toolkit.rebind(model_fn, {"lin_a": lin_b})    # run the compiled code on lin_b, no recompile

Every function is documented where it is defined (`dynadbg.core.toolkit`); README "Scripting cache entries"
lists each one with the torch APIs it rests on and the torch versions it was verified on. Importing this module
starts noting the call that compiled each later entry (`Entry.call_site`).
"""

from __future__ import annotations

from dynadbg.core import compat as _compat
from dynadbg.core.toolkit import (
    Draft,
    Entry,
    Handle,
    Refused,
    ToolkitError,
    check_entry,
    entries,
    installed,
    load,
    rebind,
    record_call_sites,
    remove_all,
    save,
    stop_recording_call_sites,
)
from dynadbg.core.toolkit_model import (
    AddedGuard,
    CallSite,
    CheckResult,
    EntryKind,
    GuardOp,
    GuardOpKind,
    InstallMode,
    InstalledView,
    Problem,
    ProblemKind,
    RebindResult,
    Validation,
)
from dynadbg.core.format.toolkit import entry_line, problem_text, rebind_text, refusal_text, validation_text

__all__ = [
    "AddedGuard", "CallSite", "CheckResult", "Draft", "Entry", "EntryKind", "GuardOp", "GuardOpKind", "Handle",
    "InstallMode", "InstalledView", "Problem", "ProblemKind", "RebindResult", "Refused", "ToolkitError",
    "Validation", "check_entry", "entries", "entry_line", "installed", "load", "problem_text", "rebind",
    "rebind_text", "record_call_sites", "refusal_text", "remove_all", "save", "stop_recording_call_sites",
    "validation_text",
]

_compat.load()
record_call_sites()
