"""Line-mode details a first-time user met: where a not-started frame is, new locals marked, tracebacks that
start in the user's code, the recompile stop's choices each with its own permanent code and torch's hint once."""

from __future__ import annotations

from pathlib import Path

import torch

from helpers import drive
from forkrun import python

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def _plain(commands: str, script: Path, *flags: str) -> str:
    proc = python(["-m", "dynadbg", "run", "--plain", *flags, "-c", commands, str(script)],
                  timeout=300)
    return proc.stdout


def test_bt_at_a_recompile_stop_names_the_function_and_its_line():
    out = _plain("bt; q", PROGRAMS / "module_int_counter.py", "--break-on", "recompile")
    line = next(ln for ln in out.splitlines() if ln.startswith("> #0"))
    assert "forward" in line and "not started" in line and "module_int_counter.py:" in line
    assert "None" not in line


def test_recompile_choices_give_eager_and_skip_their_own_code_and_the_hint_once():
    out = _plain("q", PROGRAMS / "module_int_counter.py", "--break-on", "recompile")
    # eager (this call uncompiled, later calls may compile): a force_eager block first, eager_on_recompile (which
    # compiles nothing more at all) as the wider form; each with its one description (`stances.SNIPPETS`)
    assert "eager permanently: with torch.compiler.set_stance(\"force_eager\"): ..." in out
    assert "or: torch.compiler.set_stance(\"eager_on_recompile\")   # from here on torch compiles nothing" in out
    skip = next(ln for ln in out.splitlines() if ln.strip().startswith("skip permanently:"))
    # on the user's own torch.compile call (module_int_counter.py: cm = torch.compile(m, backend="eager"))
    assert "eager_on_recompile" not in skip and "torch.compile(m, backend=\"eager\", recompile_limit=1)" in skip
    stop = out.split("(dynadbg)")[0]
    assert stop.count("allow_unspec_int_on_nn_module = True, or convert") == 1  # torch's HINT once


def test_a_local_bound_since_the_last_stop_is_marked_changed():
    from programs import simple

    torch._dynamo.reset()
    run = drive(lambda s: s.start_callable(simple.run_graph_break, [], ((3.0, 2),)), ["s"] * 12,
                break_on=("entry",))
    seen_first = {n for n, _ in run.stops[0].frame.locals}
    later = [s for s in run.stops[1:] if s.frame is not None]
    new_names = [(s, n) for s in later for n, _ in s.frame.locals if n not in seen_first]
    checked = 0
    for stop, name in new_names:
        prev = run.stops[run.stops.index(stop) - 1]
        same = prev.frame is not None and prev.frame.code.name == stop.frame.code.name
        if same and name not in {n for n, _ in prev.frame.locals}:
            assert name in stop.frame.changed, (name, stop.frame.changed)
            checked += 1
    assert checked, "the program bound no local between two stops of one frame"


def test_traceback_of_a_raising_script_starts_in_the_script(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise ValueError('boom')\n\nf()\n")
    proc = python(["-m", "dynadbg", "run", "--plain", str(script)],
                  timeout=120)
    assert proc.returncode == 1
    text = proc.stdout + proc.stderr
    assert "ValueError: boom" in text and "boom.py" in text
    assert "runpy" not in text and "runner.py" not in text and "session.py" not in text


def test_dynamic_refuses_an_input_no_failing_guard_checks():
    out = _plain("dynamic x 0; eager; q", PROGRAMS / "module_int_counter.py", "--break-on", "recompile")
    assert "no failing guard checks x (failing: self.counter)" in out
    assert "mark_dynamic(x, 0)" not in out
