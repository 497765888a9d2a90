"""The command line as a user meets it: bad input gets one line and exit 2; a script's status is its own."""

from __future__ import annotations

import subprocess

import pytest
from forkrun import python


def dynadbg(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return python(["-m", "dynadbg", *args], timeout=300,
                  cwd=cwd)


@pytest.mark.parametrize("args, message", [
    (("run", "no_such_script.py"), "no such file: no_such_script.py"),
    (("run", "--bogus", "x.py"), "unrecognized arguments: --bogus"),
    (("run", "--break-on", "entry,nope", "x.py"), "unknown stop kind(s) nope"),
    (("report", "no_such_script.py"), "no such file: no_such_script.py"),
    (("demo", "nope"), "no demo named 'nope'"),
    (("demo", "--break-on", "nope"), "unknown stop kind(s) nope"),
    (("demo", "--commands", "no_such_file.txt"), "cannot read commands file"),
    (("run", "--commands", "no_such_file.txt", __file__), "cannot read commands file"),
    (("rnu", "x.py"), "unknown command 'rnu' (choose from run, report, demo"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    proc = dynadbg(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert proc.stdout == ""


def test_script_that_raises_prints_its_traceback_and_status(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("print('before')\nraise RuntimeError('kaput')\n")
    proc = dynadbg("run", "--plain", str(script))
    assert proc.returncode == 1
    assert "before" in proc.stdout
    assert "RuntimeError: kaput" in proc.stdout
    assert "no frame was compiled by torch.compile" in proc.stdout


def test_exit_status_and_argv_are_the_scripts_own(tmp_path):
    script = tmp_path / "exit.py"
    script.write_text("import sys\nprint(sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n")
    proc = dynadbg("run", "--plain", str(script), "7", "--flag")
    assert proc.returncode == 7
    assert "['7', '--flag']" in proc.stdout


def test_unknown_and_malformed_commands_are_errors(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "f = torch.compile(lambda x: x * 2, backend='eager')\n"
        "print(f(torch.ones(2)).tolist())\n"
    )
    proc = dynadbg("run", "--plain", "-c", "frobnicate; s x; b 99999; l", str(script))
    assert proc.returncode == 0
    out = proc.stdout
    assert "*** unknown command 'frobnicate'" in out
    assert "*** count must be an integer, not 'x'" in out
    assert "*** index 99999 is outside" in out
    assert "[2.0, 2.0]" in out


def test_report_json_is_clean_json_on_stdout(tmp_path):
    import json

    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "f = torch.compile(lambda x, n: x * n, backend='eager')\n"
        "print(f(torch.ones(2), 2).tolist(), f(torch.ones(2), 3).tolist())\n"
    )
    proc = dynadbg("report", "--json", str(script))
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["summary"]["frames"] == 1 and doc["summary"]["recompiles"] == 1
    assert "[2.0, 2.0] [3.0, 3.0]" in proc.stderr  # the program's own output goes to stderr with --json


@pytest.mark.slow
def test_demo_takes_runs_flags(tmp_path):
    """`dynadbg demo` accepts what `run` does: here --break-on graph-break and --commands FILE."""
    commands = tmp_path / "cmds.txt"
    commands.write_text("c\nc\n")
    proc = dynadbg("demo", "--plain", "--break-on", "graph-break", "--commands", str(commands))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("[graph-break]") or "\n[graph-break]  torch_dynamo_resume_in_forward_at_" in \
        proc.stdout
    assert "[entry]" not in proc.stdout  # only the kinds asked for
