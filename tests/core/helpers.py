"""Drive a real `Session` from the test thread with a list of commands, recording every stop (like test_bdb)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from dynadbg.core.commands import CommandLine
from dynadbg.core.listeners import QueueListener
from dynadbg.core.model import CommandResult, Stop
from dynadbg.core.runner import ExitResult
from dynadbg.core.session import Session


def cases_dir() -> Path | None:
    """The shared real-program cases (../shared/cases beside the checkout), or $DYNADBG_CASES."""
    root = Path(__file__).resolve().parents[2]
    env = os.environ.get("DYNADBG_CASES")
    for cand in ([Path(env)] if env else []) + [root.parent / "shared" / "cases"]:
        if cand.is_dir():
            return cand
    return None


@dataclass
class Run:
    stops: list[Stop] = field(default_factory=list)
    outputs: list[tuple[str, CommandResult]] = field(default_factory=list)
    result: ExitResult | None = None
    session: Session | None = None
    messages: list[str] = field(default_factory=list)
    #: the command language over `session` (what the scripted lines run on)
    commands: CommandLine | None = None

    def output_of(self, command: str) -> CommandResult:
        return next(r for c, r in self.outputs if c == command)


def scripted(commands: Iterable[str]) -> Callable[["Run", Stop], str | None]:
    """An `answer` for `drive_answering` that gives the commands in order, then None (detach)."""
    pending = list(commands)
    return lambda run, stop: pending.pop(0) if pending else None


def drive_answering(
    start: Callable[[Session], None],
    answer: Callable[[Run, Stop], str | None],
    *,
    break_on: Iterable[str] = ("entry",),
    timeout: float = 120.0,
    check_depth: bool = False,
    **session_options: Any,
) -> Run:
    """Start a program; at each prompt `answer(run, stop)` gives the next command (None: detach), so a command may
    depend on what an earlier stop showed. A stop is answered until a command resumes the program.
    `session_options`: more `Session` arguments (e.g. ``on_traced``)."""
    listener = QueueListener()
    session = Session(listener, break_on=break_on, check_depth=check_depth, **session_options)
    run = Run(session=session, messages=listener.messages, commands=CommandLine(session))
    start(session)
    while True:
        kind, payload = listener.events.get(timeout=timeout)
        if kind == "exit":
            run.result = payload
            return run
        run.stops.append(payload)
        while True:
            line = answer(run, payload)
            if line is None:
                session.detach()
                break
            res = run.commands.execute(line)
            run.outputs.append((line, res))
            if res.resumed or res.quit:
                break


def drive(
    start: Callable[[Session], None],
    commands: Iterable[str],
    *,
    break_on: Iterable[str] = ("entry",),
    timeout: float = 120.0,
    check_depth: bool = False,
    **session_options: Any,
) -> Run:
    """Start a program, answer each stop with the next commands until one resumes; detach when they run out."""
    return drive_answering(start, scripted(commands), break_on=break_on, timeout=timeout, check_depth=check_depth,
                           **session_options)


def stop_row(stop: Stop) -> tuple[str, str, int, str, tuple[str, ...]]:
    """(kind, code name, index, opname, stack type names) of a stop, for table comparisons."""
    f = stop.frame
    assert f is not None
    opname = f.code.instructions[f.index].opname if f.index >= 0 else ""
    return (stop.kind.value, f.code.name, f.index, opname, tuple(v.type_name for v in f.stack))


def builtin_filter_type() -> str:
    """The ``GuardFilterEntry.guard_type`` torch gives the identity guard of a builtin function passed as an
    argument (``op`` in tests/programs/builtin_function_arg.py), read from this torch's own filter entries:
    ``BUILTIN_MATCH`` on torch 2.13/2.14, ``ID_MATCH`` on 2.15."""
    import operator

    import torch

    seen: list[str] = []

    def record(entries):
        seen.extend(e.guard_type for e in entries if e.name == "op")
        return [True] * len(entries)

    def apply(x, op):
        return op(x, 2) + 1

    torch._dynamo.reset()
    torch.compile(apply, backend="eager", options={"guard_filter_fn": record})(torch.ones(3), operator.add)
    torch._dynamo.reset()
    return next(t for t in seen if t != "TYPE_MATCH")
