"""``dynadbg learn [N] [--plain] [--auto] [--reset] [--list]``: the course's command line."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap

from .lessons import Lesson, LessonError, load_lessons
from .progress import Progress, lesson_list


def add_learn_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lesson", nargs="?", type=int, default=None, metavar="N",
                        help="open lesson N (default: the next unfinished one)")
    parser.add_argument("--plain", action="store_true", help="line mode (screen readers, CI logs)")
    parser.add_argument("--tui", action="store_true", help="the Textual front end even when stdout is not a terminal")
    parser.add_argument("--auto", action="store_true", help="play the lesson by itself: each step's command is "
                        "typed for you (line mode)")
    parser.add_argument("--list", action="store_true", help="list the lessons and your progress, open none")
    parser.add_argument("--reset", action="store_true", help="forget your progress through the lessons")


def cmd_learn(args: argparse.Namespace) -> int:
    """Run `dynadbg learn`; the exit status of the lesson's program (2 for bad input)."""
    try:
        lessons = load_lessons()
    except LessonError as exc:
        sys.stderr.write(f"dynadbg: error: bad lesson file: {exc}\n")
        return 2
    progress = Progress()
    if progress.warning:
        sys.stderr.write(f"dynadbg: {progress.warning}\n")
    if args.reset:
        progress.reset()
        print("dynadbg learn: progress forgotten; the next `dynadbg learn` starts at lesson 1")
        return 0
    numbers = [lesson.number for lesson in lessons]
    listing = ("Lessons (dynadbg learn N opens lesson N; --plain for line mode; --reset forgets progress):\n"
               + lesson_list(lessons, progress))
    print(listing)
    if args.list:
        return 0
    number = args.lesson if args.lesson is not None else progress.next_lesson(numbers)
    if number is None:
        print("You have finished every lesson. `dynadbg learn N` takes one again; `--reset` starts over.")
        return 0
    if number not in numbers:
        sys.stderr.write(f"dynadbg: error: no lesson {number} (choose from {', '.join(map(str, numbers))})\n")
        return 2
    lesson = lessons[numbers.index(number)]
    print(f"\nOpening lesson {lesson.number}: {lesson.title}\n")
    sys.stdout.flush()
    use_tui = not args.plain and not args.auto and (args.tui or (sys.stdout.isatty() and sys.stdin.isatty()))
    if use_tui:
        try:
            from .tui import run_lesson_tui
        except ImportError as exc:
            sys.stderr.write(f"dynadbg: the TUI is not available ({exc}); using --plain\n")
        else:
            # a lesson the learner did not name: the list the TUI covers opens its console log, ending with which
            # lesson was chosen and why (at 80x24 that last row is what shows). A lesson named on the command line
            # opens without it: the list's last entry alone read like a stray row above the lesson
            preface = "" if args.lesson is not None else (
                f"{listing}\nopened lesson {lesson.number}, the next unfinished one; `dynadbg learn N` opens another")
            status = run_lesson_tui(lesson, progress, preface=preface)
            # the list printed above still shows the lesson as it was before: say where it stands now
            # wrapped at the terminal's width: a terminal cut "one" as "on" / "e." at 80 columns
            width = shutil.get_terminal_size((80, 24)).columns
            print(textwrap.fill(_where_now(lesson, progress), width=max(40, width - 1)))
            return status
    from .plain import run_lesson_plain

    run = run_lesson_plain(lesson, progress, auto=args.auto)
    if run.failure:
        sys.stderr.write(f"dynadbg: {run.failure}\n")
        return 1
    return run.status


def _where_now(lesson: Lesson, progress: Progress) -> str:
    """One line after a TUI lesson: finished (and what is next), or the step it stopped at (kept for next time)."""
    if lesson.number in progress.done:
        return f"Lesson {lesson.number} finished (progress saved). `dynadbg learn` opens the next unfinished one."
    at = progress.steps.get(lesson.number, 0)
    return (f"Lesson {lesson.number} left at step {at + 1} of {len(lesson.steps)} (progress saved). "
            f"`dynadbg learn {lesson.number}` starts it again from its first step.")
