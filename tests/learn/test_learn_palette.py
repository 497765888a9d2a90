"""`dynadbg learn` is in the debugger's command palette (fake engine: no torch; Python 3.11, as its scenarios)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import pytest  # noqa: E402
from fake_app import make_app, settle  # noqa: E402

# the fake engine's scenarios are real code objects assembled from Python 3.11's opcodes (PRECALL, LOAD_METHOD:
# tests/app/fake_scenarios.py), as the TUI tests it serves run on the 3.11 lanes; so does this one
pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="the fake engine's generated code is Python 3.11 bytecode")


async def test_the_palette_offers_learn_and_lists_the_lessons(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from dynadbg.learn.progress import DATA_DIR_ENV
    from dynadbg.tui.commands import LearnCommand

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        provider = LearnCommand(app.screen)
        hits = [hit async for hit in provider.search("learn")]
        assert hits and "dynadbg learn" in hits[0].text
        hits[0].command()
        await pilot.pause()
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
        assert "run `dynadbg learn`" in log and "3. A graph break" in log
