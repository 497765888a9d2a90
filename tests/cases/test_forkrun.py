"""forkrun.py: a run forked from the fork server is ``python SCRIPT ARGS...`` as the corpus tests read it (status,
stdout, stderr with python's own traceback, working directory, argv, sys.path[0], a fresh interpreter state), and a
run past its timeout is killed. A server preloading nothing: no torch here (the corpus tests check, through their
own assertions, the servers that import it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from forkrun import ForkServer

PROBE = textwrap.dedent("""\
    import os, sys
    print(os.getcwd(), sys.argv, sys.path[0], __name__, sys.modules["__main__"].__dict__ is globals())
    print(os.environ.get("FORKRUN_PROBE"), input.__module__, sys.stdin.read() == "")
    sys.stderr.write("to stderr\\n")
    if sys.argv[1] == "raise":
        raise ValueError("boom")
    if sys.argv[1] == "sleep":
        import time
        time.sleep(60)
    import atexit
    atexit.register(print, "at exit")
    STATE = os.environ.setdefault("FORKRUN_SEEN", "first")
    print(STATE)
    sys.exit(int(sys.argv[1]))
""")


@pytest.fixture(scope="module")
def server():
    s = ForkServer([], env={"FORKRUN_PROBE": "env", "PATH": "/usr/bin:/bin"})
    yield s
    s.close()


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return path


def _fresh(probe: Path, arg: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(probe), arg], capture_output=True, text=True, cwd=str(cwd),
                          env={"FORKRUN_PROBE": "env", "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("arg", ["0", "3", "raise"])
def test_a_forked_run_reads_as_a_fresh_interpreter(server: ForkServer, probe: Path, tmp_path: Path, arg: str) -> None:
    forked = server.run([str(probe), arg], cwd=str(tmp_path), timeout=60)
    fresh = _fresh(probe, arg, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.returncode == {"0": 0, "3": 3, "raise": 1}[arg]


@pytest.mark.parametrize("arg", ["0", "3", "raise"])
def test_a_forked_module_run_reads_as_python_dash_m(server: ForkServer, probe: Path, tmp_path: Path,
                                                    arg: str) -> None:
    """``python -m MODULE ARGS`` (how the CLI tests run ``-m dynadbg``): argv[0] the module's file, sys.path[0] the
    working directory, ``__main__`` the module; status, output and traceback as python's."""
    (tmp_path / "probemod.py").write_text(probe.read_text())
    forked = server.run(["-m", "probemod", arg], cwd=str(tmp_path), timeout=60)
    fresh = subprocess.run([sys.executable, "-m", "probemod", arg], capture_output=True, text=True,
                           cwd=str(tmp_path), env={"FORKRUN_PROBE": "env", "PATH": "/usr/bin:/bin"},
                           stdin=subprocess.DEVNULL)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout)
    assert forked.stderr == fresh.stderr
    assert str(tmp_path / "probemod.py") in forked.stdout


def test_a_module_run_has_a_main_module_of_its_own(server: ForkServer, tmp_path: Path) -> None:
    """The module runs in a fresh ``__main__`` (python -m's is empty), not in the server's (forkrun's) globals."""
    (tmp_path / "names.py").write_text("print(sorted(n for n in globals() if not n.startswith('__')))\n")
    forked = server.run(["-m", "names"], cwd=str(tmp_path), timeout=60)
    assert forked.stdout == "[]\n", forked.stdout + forked.stderr


def test_input_is_the_runs_stdin(server: ForkServer, tmp_path: Path) -> None:
    (tmp_path / "echo.py").write_text("import sys\nprint(sys.stdin.read().upper(), end='')\n")
    assert server.run([str(tmp_path / "echo.py")], cwd=str(tmp_path), timeout=60, input="c\nq\n").stdout == "C\nQ\n"


def test_runs_do_not_share_state(server: ForkServer, probe: Path, tmp_path: Path) -> None:
    for _ in range(2):  # the first run's environment change is not seen by the second
        assert server.run([str(probe), "0"], cwd=str(tmp_path), timeout=60).stdout.splitlines()[-2] == "first"


def test_a_run_past_its_timeout_is_killed(server: ForkServer, probe: Path, tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        server.run([str(probe), "sleep"], cwd=str(tmp_path), timeout=1)
    assert server.run([str(probe), "0"], cwd=str(tmp_path), timeout=60).returncode == 0   # the server goes on


def test_runs_from_different_tests_share_one_server(probe: Path, tmp_path: Path) -> None:
    """pytest's PYTEST_CURRENT_TEST changes with every test: it must not start a server (a torch import, and a
    process held until the session ends) per test."""
    from forkrun import ForkServers

    servers = ForkServers()
    try:
        for name in ("test_a (call)", "test_b (call)"):
            env = {"FORKRUN_PROBE": "env", "PATH": "/usr/bin:/bin", "PYTEST_CURRENT_TEST": name}
            assert servers.run([], env, [str(probe), "0"], cwd=str(tmp_path), timeout=60).returncode == 0
        assert len(servers) == 1
    finally:
        servers.close()


@pytest.mark.slow
@pytest.mark.parametrize("run", ["python -m dynadbg run", "report_driver.py", "recompile_driver.py"])
def test_a_fresh_run_has_imported_every_preloaded_module_when_its_program_starts(run: str, tmp_path: Path) -> None:
    """What a server imports must be what a fresh run has imported anyway before its program's first line (else a
    forked run would differ from a fresh one): checked in a real fresh interpreter for each way the tests run."""
    import json

    from forkrun import DYNADBG_PRELOAD
    from report_runs import REPORT_PRELOAD
    from test_cases_recompile import STOP_PRELOAD

    preload = sorted({"python -m dynadbg run": DYNADBG_PRELOAD, "report_driver.py": REPORT_PRELOAD,
                      "recompile_driver.py": STOP_PRELOAD}[run])
    program = tmp_path / "probe.py"
    program.write_text(f"import json, sys\n"
                       f"print('IMPORTED ' + json.dumps([m for m in {preload!r} if m in sys.modules]))\n")
    here = Path(__file__).resolve().parent
    argv = {"python -m dynadbg run": ["-m", "dynadbg", "run", "--plain", "-c", "c", str(program)],
            "report_driver.py": [str(here / run), str(tmp_path / "r.json"), str(tmp_path / "r.txt"), str(program)],
            "recompile_driver.py": [str(here / run), str(tmp_path / "s.json"), str(program)]}[run]
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("IMPORTED ")), None)
    assert line is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads(line[len("IMPORTED "):]) == preload
