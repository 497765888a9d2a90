"""Where the learner is in each lesson, kept across runs in the user's data directory.

The file is ``<user data dir>/learn.json`` (`platformdirs.user_data_dir("dynadbg")`; ``$DYNADBG_DATA_DIR``
overrides the directory, as the tests do): ``{"steps": {"3": 2}, "done": [1, 2]}`` — the next step of each
lesson begun, and the lessons finished. An unreadable or malformed file counts as no progress (a warning says
so); it is replaced on the next save.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lessons import Lesson

#: Environment variable naming the data directory instead of the platform's.
DATA_DIR_ENV = "DYNADBG_DATA_DIR"


def data_dir() -> Path:
    """The directory dynadbg keeps its data in (not created here)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    try:
        from platformdirs import user_data_dir
    except ImportError:  # a minimal fallback where platformdirs is missing: the XDG default
        return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "dynadbg"
    return Path(user_data_dir("dynadbg", appauthor=False))


class Progress:
    """The learner's progress, loaded from and saved to `path` (default: ``data_dir() / "learn.json"``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "learn.json"
        self.steps: dict[int, int] = {}
        self.done: set[int] = set()
        self.warning: str | None = None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.steps = {int(k): int(v) for k, v in data.get("steps", {}).items()}
            self.done = {int(n) for n in data.get("done", [])}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            self.warning = f"ignoring unreadable progress file {self.path} ({exc})"

    def save_step(self, lesson: int, next_step: int, total: int) -> None:
        """Lesson `lesson` is at step index `next_step` (== `total`: finished). Writes the file."""
        if next_step >= total:
            self.done.add(lesson)
            self.steps.pop(lesson, None)
        else:
            self.steps[lesson] = next_step
        self.save()

    def save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = {"steps": {str(k): v for k, v in sorted(self.steps.items())}, "done": sorted(self.done)}
            self.path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            self.warning = f"cannot save progress to {self.path}: {exc.strerror}"

    def reset(self) -> None:
        """Forget everything (`dynadbg learn --reset`)."""
        self.steps.clear()
        self.done.clear()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def next_lesson(self, numbers: list[int]) -> int | None:
        """The first lesson of `numbers` not finished, None when all are."""
        return next((n for n in numbers if n not in self.done), None)


def lesson_list(lessons: list[Lesson], progress: Progress, width: int | None = None) -> str:
    """One entry per lesson: ``[x]`` finished, ``[k/n]`` begun, ``[ ]`` not begun; an entry longer than `width`
    columns (default: the terminal's, `shutil.get_terminal_size`) goes on under its title, at a word break."""
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    lines = []
    for lesson in lessons:
        total = len(lesson.steps)
        mark = ("x" if lesson.number in progress.done
                else f"{progress.steps[lesson.number]}/{total}" if lesson.number in progress.steps else " ")
        head = f"  [{mark}] {lesson.number}. "
        count = f"({total}\u00a0steps)"  # kept on one row (textwrap breaks at ASCII whitespace only)
        lines.append(textwrap.fill(f"{head}{lesson.title}  {count}", max(width - 1, 40),
                                   subsequent_indent=" " * len(head), break_on_hyphens=False).replace("\u00a0", " "))
    return "\n".join(lines)
