"""Make the README's `dynadbg learn` screenshot from the real app: ``python screenshots/make_learn_screenshot.py``.

Runs lesson 3 (a graph break) under the real engine in `dynadbg.learn.tui.LearnApp`, headless at 120x40, types
the learner's commands in the console (``ll``, ``until`` the graph-break CALL, ``explain``, then starts typing
``until``), and writes ``learn-lesson.svg`` next to this file: the narration pane at step 4 of the lesson, its
cursor on the resume call, the console showing what ``explain`` said. Progress goes to a temporary data directory (the user's own is untouched). Shares the
`Driver` of ``make_screenshots.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_screenshots import Driver, finish, quiet_torch, run_driven  # noqa: E402


async def drive(driver: Driver) -> None:
    from dynadbg.learn.coach import resolve_action

    app, pilot = driver.app, driver.pilot
    screen = app.main_screen
    await driver.until(lambda: screen.is_mounted and bool(screen.query("#command")), "the main screen")
    screen.console.input.cursor_blink = False
    await driver.until(lambda: app.stopped, "the entry stop")
    for command in ("ll", "until {role:graph break:CALL}", "explain"):
        line = await asyncio.to_thread(resolve_action, app.session, command)  # engine calls: off the UI thread
        app.submit(line)  # as typed in the console (Enter)
        await driver.until(lambda: app.stopped and not app.engine_busy, f"`{line}`")
    await driver.until(lambda: app.coach.index == 3, "step 4 of the lesson")
    first = screen.bytecode.cursor
    await pilot.press(*"until ")  # the learner goes on: step 4's cursor comes (it waits for a key after explain)
    await driver.until(lambda: screen.bytecode.cursor != first and not app.engine_busy, "step 4's cursor")
    await driver.shoot("learn-lesson")
    await pilot.press("ctrl+q")  # typing goes to the command line in learn: q would be typed there


def main() -> int:
    from dynadbg.core.session import Session
    from dynadbg.learn.lessons import load_lessons
    from dynadbg.learn.progress import DATA_DIR_ENV, Progress
    from dynadbg.learn.tui import LearnApp

    quiet_torch()
    os.environ[DATA_DIR_ENV] = tempfile.mkdtemp(prefix="dynadbg-learn-shot-")
    lesson = next(lesson for lesson in load_lessons() if lesson.number == 3)
    app = LearnApp(lesson, Progress(), lambda listener: Session(listener, break_on=lesson.break_on))
    errors = run_driven(app, drive, HERE, (120, 40), 60.0)
    return finish(app, errors, "make_learn_screenshot")


if __name__ == "__main__":
    raise SystemExit(main())
