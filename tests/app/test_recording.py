"""The fake engine's recording (`record_fake`) is what the real engine answers today: re-made and compared, so it
cannot drift silently. Re-make it with ``.venv/bin/python tests/app/record_fake.py`` when this fails on purpose."""

from __future__ import annotations

import subprocess
import sys

import pytest
import record_fake


@pytest.mark.slow
def test_the_recording_matches_what_the_real_engine_answers_today() -> None:
    """A few seconds: one real run of ``tests/programs/module_int_counter.py`` to its first recompile stop, in a
    fresh interpreter (compile ids and Dynamo's counters are per process)."""
    done = subprocess.run([sys.executable, record_fake.__file__, "--stdout"], capture_output=True, text=True,
                          timeout=300, cwd=record_fake.ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == record_fake.RECORDING.read_text(encoding="utf-8"), (
        "the real engine answers otherwise than the recording: re-make it (tests/app/record_fake.py) and check the "
        "TUI tests that use it")


def test_the_recording_loads_as_model_values() -> None:
    from dynadbg.core.model import GuardTree, Stop, StopKind

    recording = record_fake.load()
    stop = recording["stop"]
    assert isinstance(stop, Stop) and stop.kind is StopKind.RECOMPILE and stop.recompile is not None
    assert all(isinstance(t, GuardTree) for t in recording["guard_trees"]) and recording["guard_trees"]
    # the failing guard is the module's int counter, as the program's docstring says
    assert [leaf.source for leaf in stop.recompile.entries[0].failing] == ["L['self'].counter"]
