"""`dynadbg learn --plain N`: a lesson in line mode (screen readers, CI logs).

The debugger's usual line mode (`dynadbg.plain`), with the lesson's narration printed before each prompt (in full
when the step or its hint changed, else a one-line reminder) and two commands of its own: ``lesson`` shows the
current step again, ``lesson hint`` shows its next hint, ``lesson skip`` skips it. (Plain ``skip`` is the debugger's
recompile-stop choice.)

With ``auto=True`` the driver types each step's ``action`` itself (`dynadbg learn --auto`): a lesson that plays
itself, and the tests' check that every lesson still matches what torch generates. A step whose action does not
bring its condition about ends the run with `LessonRun.failure` naming the lesson and the step.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from dynadbg.core.model import Stop
from dynadbg.core.commands import CommandLine
from dynadbg.core.session import Session
from dynadbg.core.format.glossary import Glossary
from dynadbg.plain import PROMPT, PlainListener, locked_stdout, stop_output
from dynadbg.plain import _next_event as next_event

from .coach import Coach, resolve_action, spoken
from .lessons import Lesson
from .progress import Progress

_JOIN_TIMEOUT_S = 60.0


@dataclass
class LessonRun:
    """How a lesson run ended: the program's status, the steps passed and skipped, and an auto-play failure."""

    status: int = 0
    passed: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failure: str | None = None


def run_lesson_plain(lesson: Lesson, progress: Progress | None = None, *, auto: bool = False,
                     stdin: TextIO | None = None, out: TextIO | None = None) -> LessonRun:
    """Run `lesson` in line mode until its program ends (or the learner quits)."""
    stdin = stdin or sys.stdin
    if out is None:
        with locked_stdout() as out:
            return _drive(lesson, progress, auto, stdin, out)
    return _drive(lesson, progress, auto, stdin, out)


def _drive(lesson: Lesson, progress: Progress | None, auto: bool, stdin: TextIO, out: TextIO) -> LessonRun:
    coach = Coach(lesson, progress)
    run = LessonRun(passed=coach.passed, skipped=coach.skipped)
    listener = PlainListener(out)
    session = Session(listener, break_on=lesson.break_on)
    command_line = CommandLine(session)
    session.start_script(str(lesson.program), [])
    shown: tuple[int, str | None] | None = None   # the step and hint printed last (the first stop prints them)
    played = -1                 # the step whose action auto-play typed last
    pending: list[str] = []     # the rest of that action
    moved = False               # a resuming command ran since the last stop: the next stop is the learner's move
    glossary = Glossary()
    out.write(f"{coach.heading()}: starting the program…\n")
    while True:
        kind, payload = next_event(listener, session, out)
        if kind == "exit":
            coach.observe_exit(payload.status)
            coach.advance(coach.snapshot(session), move=True)
            result = payload
            if result.traceback and not result.quit:
                out.write(result.traceback)
            run.status = result.status
            out.write("\n" + coach.narration() + "\n")
            if not coach.finished and run.failure is None and auto:
                run.failure = _stale(coach, "the program ended first")
            out.flush()
            session.wait(timeout=_JOIN_TIMEOUT_S)
            return run
        assert isinstance(payload, Stop)
        out.write(stop_output(session, payload, glossary))
        if moved:
            coach.advance(coach.snapshot(session), move=True)
        else:
            _advance_said(coach, session, out)
        moved = False
        while True:
            if (coach.index, coach.hint) != shown:
                out.write("\n" + coach.narration() + "\n\n")
                shown = (coach.index, coach.hint)
            elif not coach.finished:
                out.write(f"[{coach.heading()}; `lesson` shows it again]\n")
            out.flush()
            if auto:
                step = coach.step
                if step is None:
                    session.detach()
                    break
                if played != coach.index:
                    played, pending = coach.index, list(step.action)
                if not pending:
                    run.failure = _stale(coach, f"after `{'; '.join(step.action)}`")
                    out.write(f"*** {run.failure}\n")
                    session.detach()
                    break
                try:
                    # one command at a time, resolved at the stop it is typed at (a `c` moves the program on)
                    lines = [resolve_action(session, pending.pop(0))]
                except LookupError as exc:
                    run.failure = _stale(coach, str(exc))
                    out.write(f"*** {run.failure}\n")
                    session.detach()
                    break
            else:
                out.write(PROMPT)
                out.flush()
                line = stdin.readline()
                if not line:
                    out.write("\n")
                    session.detach()
                    break
                lines = [line.strip()]
            resumed = False
            catching: list[str] = []
            for line in lines:
                if auto:
                    out.write(f"{PROMPT}{line}\n")
                if line.split(None, 1)[:1] == ["lesson"]:
                    if line.split()[1:] == ["skip"] and not auto:
                        # the skipped step's action that moves the program is typed for the learner
                        catching = _catch_up_lines(coach, session, out)
                        lines += catching
                    _lesson_command(coach, line, out)
                    shown = (coach.index, coach.hint) if line.split()[1:] in ([], ["hint"]) else shown
                    continue
                if not line:
                    continue
                if catching and line in catching:
                    out.write(f"{PROMPT}{line}\n")
                result = command_line.execute(line)
                if result.output and not (result.resumed and not result.quit):
                    out.write(result.output + "\n")
                if result.error:
                    out.write(f"*** {result.error}\n")
                if not (catching and line in catching):
                    coach.observe_command(line, result.error)
                if result.resumed or result.quit:
                    resumed = True
                    break
            if resumed:
                moved = not catching  # a stop the skip's own command led to is no move of the learner's
                break
            if lines and lines[0].split(None, 1)[:1] != ["lesson"]:
                coach.advance(coach.snapshot(session), move=True, looked=coach.error is None)
            elif lines and lines[0].split() == ["lesson", "skip"] and not coach.finished:
                # the program may already be where the next step wants it (a stop it names), or the skip's own
                # edit did it
                _advance_said(coach, session, out)


def _advance_said(coach: Coach, session: Session, out: TextIO) -> None:
    """`Coach.advance` at a stop the learner's move did not lead to (the first one, a skip's); a step it finds done
    by where the program is (`Coach.caught_up`) is said, as the TUI says it."""
    step, caught = coach.step, len(coach.caught_up)
    coach.advance(coach.snapshot(session), move=False)
    if len(coach.caught_up) > caught and step is not None:
        out.write(f"step {step.number} is done too: the program is already where its `{step.action[0]}` leads "
                  f"(`lesson {step.number}` shows its text)\n")


def _catch_up_lines(coach: Coach, session: Session, out: TextIO) -> list[str]:
    """The lines `lesson skip` types for the learner (`Coach.catch_up`), resolved at the current stop; says so."""
    step = coach.step
    commands = coach.catch_up(coach.snapshot(session)) if step is not None else ()
    lines = []
    for command in commands:
        try:
            lines.append(resolve_action(session, command, forward=True))
        except LookupError as exc:
            out.write(f"*** could not type `{spoken(command)}` for you ({exc}): the next step may describe "
                      f"another stop than this one; `lesson skip` skips it too\n")
            return []
    if lines:
        out.write(f"skipped step {step.number}: typing its `{'; '.join(lines)}` for you, so that the program is "
                  f"where the next step expects it\n")
    return lines


def _lesson_command(coach: Coach, line: str, out: TextIO) -> None:
    arg = line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else ""
    if arg == "skip":
        coach.skip()
    elif arg == "hint":
        hint = coach.ask_hint()
        out.write(f"Hint: {hint}\n" if hint else "*** this step has no hint: `lesson skip` skips it\n")
    elif arg.isdigit() and coach.step_text(int(arg)) is not None:
        out.write(coach.step_text(int(arg)) + "\n")
    elif arg:
        out.write(f"*** usage: lesson (show the step again) | lesson hint | lesson skip | lesson N (step N's "
                  f"text, 1-{len(coach.lesson.steps)})\n")
    else:
        out.write("\n" + coach.narration() + "\n\n")


def _stale(coach: Coach, what: str) -> str:
    step = coach.step
    assert step is not None
    return (f"lesson {coach.lesson.number} ({coach.lesson.path.name}) step {step.number}: {what}, the step is "
            f"not done (it needs: {step.done.describe()})")
