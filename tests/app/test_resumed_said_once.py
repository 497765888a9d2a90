"""What a recompile decision did is said once, on the real engine: after ``drop`` at a recompile stop the
constant-folding warning and the ``guard_filter_fn`` each appear once in the TUI's console (key ``D``) and in
line mode's output.

The engine's `Resumed` carries the decision as data (the guards dropped, the warnings, the permanent fix) and
each front end writes it once from that data; these tests read what a user reads after the decision, up to the
end of the program.
"""

from __future__ import annotations

import textwrap

import pytest
from fake_app import no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from waiting import until
from forkrun import python

pytestmark = pytest.mark.slow

#: An nn.Module int attribute bumped in forward: every call fails ``L['self'].counter == N`` (a value guard on a
#: constant Dynamo folded into the graph), so ``drop`` at the first recompile stop warns about constant folding.
COUNTER = textwrap.dedent(
    """
    import torch

    class Stepper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 0

        def forward(self, x):
            self.counter += 1
            return x * self.counter

    m = Stepper()
    cm = torch.compile(m, backend="eager")
    for _ in range(3):
        print("out", cm(torch.ones(2)).tolist())
    """
)

#: What marks the constant-folding warning and the permanent guard filter in the text.
WARNING = "is a constant to Dynamo"
FILTER = "guard_filter_fn"


def _log(app) -> str:  # noqa: ANN001
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


async def _until(pilot, condition, timeout: float = 120.0) -> None:  # noqa: ANN001
    await until(pilot, condition, timeout, poll=lambda: pilot.pause(0.05))  # fails the test when it never holds


async def test_tui_drop_at_a_recompile_stop_says_the_warning_and_the_filter_once(tmp_path) -> None:  # noqa: ANN001
    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    script = tmp_path / "counter.py"
    script.write_text(COUNTER)
    app = DebuggerApp(lambda listener: Session(listener, break_on=("recompile",)),
                      lambda session: session.start_script(str(script), []))
    async with app.run_test(size=(160, 50)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.RECOMPILE
        before = len(app.main_screen.console.log_widget.lines)
        await pilot.press("D")
        # drop asks first: its dialog shows the default selection; Enter accepts it
        from dynadbg.tui.drop_dialog import DropDialog

        await _until(pilot, lambda: isinstance(app.screen, DropDialog), 60)
        await pilot.press("enter")
        # the dropped entry serves the next call: no further recompile stop, the program ends
        await _until(pilot, lambda: app.phase == "exited", 120)
        after = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines[before:])
        assert "> drop" in after, after
        assert after.count(WARNING) == 1, after
        assert after.count(FILTER) == 1, after
        assert "WARNING: WARNING" not in after
        await pilot.press("q")
        await pilot.pause(0.2)


def test_line_mode_drop_at_a_recompile_stop_says_the_warning_and_the_filter_once(tmp_path) -> None:  # noqa: ANN001
    script = tmp_path / "counter.py"
    script.write_text(COUNTER)
    proc = python(["-m", "dynadbg", "run", "--plain", "--break-on", "recompile",
                  "-c", "drop", str(script)], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    after = out[out.index("(dynadbg) drop"):]
    assert after.count(WARNING) == 1, after
    assert after.count(FILTER) == 1, after
    assert "compiled 0/1 without" in after  # what the filter left out of the new entry is still said
