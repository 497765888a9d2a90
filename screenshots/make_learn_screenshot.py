"""Make the README's `dynadbg learn` screenshot from the real app: ``python screenshots/make_learn_screenshot.py``.

Runs lesson 3 (a graph break) under the real engine in `dynadbg.learn.tui.LearnApp`, headless at 120x40, types
the learner's commands in the console (``ll``, ``until`` the graph-break CALL, ``explain``), and writes
``learn-lesson.svg`` next to this file: the narration pane at step 4 of the lesson, the console showing what
``explain`` said. Progress goes to a temporary data directory (the user's own is untouched). Shares the
`Driver` of ``make_screenshots.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_screenshots import Driver  # noqa: E402


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
    await driver.shoot("learn-lesson")
    await pilot.press("q")


def main() -> int:
    from dynadbg.core.session import Session
    from dynadbg.learn.lessons import load_lessons
    from dynadbg.learn.progress import DATA_DIR_ENV, Progress
    from dynadbg.learn.tui import LearnApp

    os.environ.setdefault("TORCH_LOGS", "-dynamo")
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    os.environ[DATA_DIR_ENV] = tempfile.mkdtemp(prefix="dynadbg-learn-shot-")
    lesson = next(lesson for lesson in load_lessons() if lesson.number == 3)
    app = LearnApp(lesson, Progress(), lambda listener: Session(listener, break_on=lesson.break_on))
    errors: list[BaseException] = []
    written: list[Path] = []

    async def auto_pilot(pilot: Any) -> None:
        driver = Driver(pilot, HERE, 60.0)
        driver.written = written
        try:
            await drive(driver)
        except BaseException as exc:  # noqa: BLE001 - reported after the app closed
            errors.append(exc)
            app.session.quit()
            app.exit(1)

    app.run(headless=True, size=(120, 40), auto_pilot=auto_pilot)
    for path in written:
        print(path)
    app.session.wait(timeout=10)
    if errors:
        print(f"make_learn_screenshot: {type(errors[0]).__name__}: {errors[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
