"""The coach: follows one lesson while the learner debugs its program, and says when a step is done.

A step is done when the engine's state satisfies the step's condition (`lessons.Condition`): the stop kind, the
role of the current instruction (`Engine.roles`), the last command and its result. `Coach.snapshot` reads that
state through the engine's typed methods; call it where engine calls may block (the plain front end's main
thread, or the TUI's engine-call thread), never on the TUI's UI thread. `Coach.check` is pure.

Front ends call `observe_command` after each command, `observe_exit` when the program ends, then `advance`
with a fresh snapshot; `narration` is the text to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dynadbg.core import commands as cmd
from dynadbg.core.model import CodeRoles, EngineError, Stop

from .lessons import Condition, Lesson, Step
from .progress import Progress


@dataclass(frozen=True)
class EngineState:
    """What a condition is checked against (read by `Coach.snapshot`).

    Attributes:
        stop: the stop kind's value (``"entry"``), None while running or after the end.
        code_name: the selected frame's code name, "" outside a frame.
        index: the current instruction's index, -1 outside a frame.
        opname: the current instruction's opname, "".
        role: the current instruction's role value (``"graph call"``), "" when unknown.
        command: the last command's verb (aliases resolved), None before the first.
        output: its output text.
        error: its error line, or None.
        exited: the program has ended.
    """

    stop: str | None = None
    code_name: str = ""
    index: int = -1
    opname: str = ""
    role: str = ""
    command: str | None = None
    output: str = ""
    error: str | None = None
    exited: bool = False


def check(cond: Condition, state: EngineState) -> bool:
    """Whether `state` satisfies every part of `cond`."""
    if cond.exited is not None and cond.exited != state.exited:
        return False
    if cond.stop is not None and state.stop not in cond.stop:
        return False
    if cond.role is not None and state.role != cond.role:
        return False
    if cond.opname is not None and not state.opname.startswith(cond.opname):
        return False
    if cond.code_contains is not None and cond.code_contains not in state.code_name:
        return False
    if cond.command is not None and (state.command != cond.command or state.error is not None):
        return False
    return cond.output_contains is None or cond.output_contains in state.output


def verb_of(line: str) -> str | None:
    """The command verb of a line (aliases resolved), None for an empty line."""
    parts = cmd.split(line)
    return parts[0] if parts else None


_PLACEHOLDER = re.compile(r"\{(role|instr):([^{}]*)\}")


def resolve_action(engine: object, command: str) -> str:
    """`command` with its ``{role:...}`` / ``{instr:...}`` placeholders replaced by instruction indexes of the
    selected frame's code (first match at or after the current instruction, else from the start). Engine thread.

    Raises:
        LookupError: no instruction matches (the lesson is stale for this torch or Python).
    """

    def replace(match: re.Match[str]) -> str:
        kind, what = match.groups()
        stop = engine.current_stop()
        frame = stop.selected_frame if not isinstance(stop, EngineError) else None
        if frame is None:
            raise LookupError(f"{match.group(0)}: not stopped in a frame")
        instrs = frame.code.instructions
        if kind == "role":
            roles = engine.roles()
            if isinstance(roles, EngineError):
                raise LookupError(f"{match.group(0)}: {roles.message}")
            role, _, opname = what.partition(":")
            hits = [r.index for r in roles.roles if r.role.value == role
                    and instrs[r.index].opname.startswith(opname)]
        else:
            hits = [i.index for i in instrs if what in f"{i.opname} {i.argrepr}"]
        later = [i for i in hits if i >= frame.index]
        if not (later or hits):
            raise LookupError(f"{match.group(0)}: no such instruction in {frame.code.name}")
        return str((later or hits)[0])

    return _PLACEHOLDER.sub(replace, command)


class Coach:
    """Walks the learner through `lesson`; remembers progress in `progress` (None: not kept)."""

    def __init__(self, lesson: Lesson, progress: Progress | None = None) -> None:
        self.lesson = lesson
        self.progress = progress
        self.index = 0
        """The current step's position in `lesson.steps` (== len: the lesson is finished)."""
        self.wrong_moves = 0
        """Moves since the current step began that did not finish it (selects the hint)."""
        self.command: str | None = None
        self.output = ""
        self.error: str | None = None
        self.exited = False
        self.skipped: list[int] = []
        """Numbers of the steps the learner skipped."""
        self.passed: list[int] = []
        """Numbers of the steps the engine's state completed."""

    @property
    def step(self) -> Step | None:
        """The current step, None once every step is done."""
        return self.lesson.steps[self.index] if self.index < len(self.lesson.steps) else None

    @property
    def finished(self) -> bool:
        return self.step is None

    # -- what happened ------------------------------------------------------------------------------------------
    def observe_command(self, line: str, output: str, error: str | None) -> None:
        """The learner ran `line`; its output and error (None when it worked)."""
        self.command = verb_of(line)
        self.output = output
        self.error = error

    def observe_exit(self) -> None:
        self.exited = True

    def snapshot(self, engine: object) -> EngineState:
        """Read the state a condition needs from `engine` (blocking engine calls: not on a UI thread)."""
        if self.exited or getattr(engine, "finished", False) or not getattr(engine, "paused", False):
            return self.state_at(None)
        stop = engine.current_stop()
        if isinstance(stop, EngineError):
            return self.state_at(None)
        frame = stop.selected_frame
        roles = stop.teaching.roles if stop.teaching is not None else None
        if roles is None and frame is not None and frame.code.generated:
            answer = engine.roles()
            roles = None if isinstance(answer, EngineError) else answer
        return self.state_at(stop, roles)

    def state_at(self, stop: Stop | None, roles: CodeRoles | None = None) -> EngineState:
        """The state a condition needs at `stop` (None: running or ended), with its code's `roles` (the stop's own
        `Stop.teaching` when it has them): no engine call."""
        if stop is None or self.exited:
            return EngineState(command=self.command, output=self.output, error=self.error, exited=self.exited)
        frame = stop.selected_frame
        if frame is None:
            return EngineState(stop.kind.value, command=self.command, output=self.output, error=self.error)
        opname = frame.code.instructions[frame.index].opname if 0 <= frame.index < len(frame.code.instructions) \
            else ""
        role = ""
        if frame.code.generated and roles is not None and 0 <= frame.index < len(roles.roles):
            role = roles.roles[frame.index].role.value
        return EngineState(stop.kind.value, frame.code.name, frame.index, opname, role, self.command, self.output,
                           self.error)

    def advance(self, state: EngineState, move: bool = True, looked: bool = False) -> bool:
        """Finish the current step when `state` satisfies its condition (True); else, when `state` follows a
        learner's move (a command, or the stop a command led to), count a wrong move (the next hint shows).
        `looked`: the move was a command that worked and did not resume the program."""
        step = self.step
        if step is None:
            return False
        if check(step.done, state):
            self.passed.append(step.number)
            self._next()
            return True
        # A look around (a command that worked, when the step does not ask for one) is no wrong move; a stop that
        # is not the one wanted, a command that failed, or another command than the one asked for is.
        if move and not (looked and step.done.command is None):
            self.wrong_moves += 1
        return False

    def skip(self) -> None:
        """Skip the current step (always allowed)."""
        if self.step is not None:
            self.skipped.append(self.step.number)
            self._next()

    def _next(self) -> None:
        self.index += 1
        self.wrong_moves = 0
        self.command, self.output, self.error = None, "", None
        if self.progress is not None:
            self.progress.save_step(self.lesson.number, self.index, len(self.lesson.steps))

    # -- what to show -------------------------------------------------------------------------------------------
    @property
    def hint(self) -> str | None:
        """The hint for the current step after a wrong move (the last hint repeats), None before one."""
        step = self.step
        if step is None or not self.wrong_moves or not step.hints:
            return None
        return step.hints[min(self.wrong_moves, len(step.hints)) - 1]

    def heading(self) -> str:
        total = len(self.lesson.steps)
        where = "done" if self.step is None else f"step {self.index + 1} of {total}"
        return f"Lesson {self.lesson.number}: {self.lesson.title} · {where}"

    def narration(self, skip_how: str = "type `lesson skip`") -> str:
        """The current step as plain text: heading, what to do, the hint if any, how to skip."""
        lines = [self.heading()]
        step = self.step
        if step is None:
            lines.append(self.lesson.outro or "Lesson finished.")
            return "\n".join(lines)
        if self.index == 0 and self.lesson.intro:
            lines.append(self.lesson.intro)
        lines.append(step.text)
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        lines.append(f"(stuck? {skip_how} to skip this step)")
        return "\n".join(lines)
