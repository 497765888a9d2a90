"""`D` at a real model's train→eval recompile stop, in the TUI at 80×24 on the real engine: the dialog opens before
anything runs, every `.training` flag of the 4-layer GPT-2 (and the global state) is offered but left out of the
selection with its reason, and accepting that default recompiles and gives the logits of an uncompiled eval() run.

Needs the ``[models]`` extra (``pip install -e ".[models]"``); skipped with that reason without it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="needs the [models] extra: pip install -e '.[models]'")

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "gpt2_train_eval.py")
pytestmark = pytest.mark.slow


async def _until(pilot, condition, timeout: float) -> None:  # noqa: ANN001
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < timeout, f"waited {timeout:g} s for a condition that never held"
        await pilot.pause(0.05)
    await pilot.pause(0.2)


async def test_D_on_gpt2_asks_first_with_the_mode_flags_unselected_and_the_default_keeps_results() -> None:
    from dynadbg.core.model import DropPreview, HeldBackReason, StopKind
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.drop_dialog import DropDialog

    app = DebuggerApp(lambda listener: Session(listener, break_on=("recompile",)),
                      lambda session: session.start_script(PROGRAM, []))
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"), 300)
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.RECOMPILE
        await pilot.press("D")
        await _until(pilot, lambda: isinstance(app.screen, DropDialog), 120)
        dialog = app.screen
        preview = dialog.preview
        assert isinstance(preview, DropPreview)
        flags = [c for c in preview.candidates if c.guard.source.endswith(".training")]
        assert len(flags) == 13  # 12 dropout/attention modules in 4 blocks + the embedding dropout
        assert all(c.held_back is HeldBackReason.MODE_FLAG for c in flags)
        assert preview.selected == ()  # nothing the default would drop: Enter recompiles as torch does
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
        assert "eval max difference" not in log  # asking ran nothing
        await pilot.press("enter")
        await _until(pilot, lambda: app.phase == "exited", 300)
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
        assert "eval max difference from eager: 0.0" in log, log[-2000:]
        assert app.exit_result is not None and app.exit_result.status == 0
        await pilot.press("q")
        await pilot.pause(0.2)
