"""Run ``python SCRIPT ARGS...`` as a fresh interpreter would, without paying torch's import each time: a fork
server (this file, run as a child process) imports the modules a run would import before its program starts, then
forks once per run; the forked child sets up what ``python SCRIPT ARGS...`` has (stdin from /dev/null, stdout
and stderr to files, the working directory, ``sys.argv``, ``sys.path[0]``) and runs the script as ``__main__``;
its exit (status, uncaught exception, atexit, thread joins) is the interpreter's own.

Why this is a fresh process for the corpus tests: the child is a new process (its own torch state, Dynamo caches,
config, counters, modules' globals); what it shares with the server is modules already imported, and only modules
every run imports before its program's first line (``preload``: torch, torch._dynamo and the debugger's modules
the drivers import first; tests/cases/test_forkrun.py checks, in fresh interpreters, that `python -m dynadbg
run` and the corpus drivers have imported every preloaded module by their program's first line). A plain
``python SCRIPT`` run forked from a server that preloaded torch (the corpus's plain runs, `python` on a script)
has torch imported before the script's first line instead of by it: the same for a script that imports torch
before it sets anything torch reads while importing (environment variables such as TORCH_LOGS); the programs run
this way set none. Nothing ran in the server but those imports: no tensor op, no compile, no thread of ours
(checked before every fork), so no thread pool is forked half-way (numpy's OpenBLAS thread, started at import,
has its own fork handlers). The environment (PYTHONHASHSEED, no TORCH_LOGS) is the server's, fixed when it starts.

Saves about 2 s of CPU per run (``import torch`` and ``import torch._dynamo``, 1 s each here).

Client: ``server = ForkServer(preload, env=...)``; ``server.run([script, *args], cwd=..., timeout=...)`` gives a
`subprocess.CompletedProcess` with text stdout/stderr as ``subprocess.run(..., capture_output=True, text=True)``;
thread-safe (runs go side by side, one child each); ``server.close()``.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

# --------------------------------------------------------------------------------------------------------------
# the server (python forkrun.py MODULE...)
# --------------------------------------------------------------------------------------------------------------


def _serve(preload: list[str]) -> dict | None:
    """Import `preload`, then fork a child per request line on stdin; report ``{"id", "pid"}`` at each fork and
    ``{"id", "returncode"}`` at each exit on stdout. Returns the request in a child; None when stdin closes."""
    import importlib

    for name in preload:
        importlib.import_module(name)
    proto = os.dup(1)                       # replies; fd 1 itself is a child's stdout
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    sys.stdout.flush()
    sys.stderr.flush()

    def reply(msg: dict) -> None:
        os.write(proto, (json.dumps(msg) + "\n").encode())

    children: dict[int, int] = {}
    buf = b""
    closed = False
    while not (closed and not children):
        while children:                         # reap
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reply({"id": children.pop(pid), "returncode": os.waitstatus_to_exitcode(status)})
        if closed:
            select.select([], [], [], 0.02)
            continue
        ready, _, _ = select.select([0], [], [], 0.02 if children else None)
        if not ready:
            continue
        data = os.read(0, 65536)
        if not data:
            closed = True
            for pid in children:                # the client went away: its runs are not wanted
                os.kill(pid, 9)
            continue
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = json.loads(line)
            assert threading.active_count() == 1, f"a thread runs in the fork server: {threading.enumerate()}"
            pid = os.fork()
            if pid == 0:
                os.close(proto)
                return req
            children[pid] = req["id"]
            reply({"id": req["id"], "pid": pid})
    return None


def _child(req: dict) -> None:
    """In the forked child: become ``python SCRIPT ARGS...`` (in req's cwd, output to req's files) and run it."""
    import runpy
    import types

    stdin = os.open(req.get("in") or os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for fd, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    os.chdir(req["cwd"])
    here = __file__
    argv = list(req["argv"])
    module = argv[1] if argv[0] == "-m" else None
    script = argv[0]
    if module is not None:                      # python -m MODULE ARGS...: sys.path[0] is the working directory
        sys.argv = [argv[0], *argv[2:]]         # runpy sets argv[0] to the module's file, as -m does
        sys.path[0] = os.getcwd()
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    try:
        if module is not None:
            # what `python -m` itself calls; it runs the module in __main__'s namespace, which here is this file's
            sys.modules["__main__"] = types.ModuleType("__main__")
            runpy._run_module_as_main(module, alter_argv=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise                                   # the interpreter ends with its code, as python's would
    except BaseException as exc:  # noqa: BLE001 - python prints it and exits 1; the traceback starts at the script
        tb = exc.__traceback__
        while tb is not None and (tb.tb_frame.f_code.co_filename != script if module is None
                                  else tb.tb_frame.f_code.co_filename == here):
            tb = tb.tb_next
        exc.__traceback__ = tb or exc.__traceback__
        sys.excepthook(type(exc), exc, exc.__traceback__)
        sys.exit(1)


# --------------------------------------------------------------------------------------------------------------
# the client
# --------------------------------------------------------------------------------------------------------------


class ForkServer:
    """A fork server started with `preload` imported and environment `env` (this process's when None)."""

    def __init__(self, preload: list[str], env: dict[str, str] | None = None) -> None:
        self._dir = tempfile.mkdtemp(prefix="dynadbg-forkrun-")
        self._log = open(Path(self._dir) / "server.log", "w+b")
        self._proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *preload],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env)
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[Future, Future]] = {}   # id -> (pid, returncode)
        self._reader = threading.Thread(target=self._read, name="forkrun reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            msg = json.loads(line)
            with self._lock:
                pid_f, rc_f = self._pending[msg["id"]]
                if "pid" in msg:
                    pid_f.set_result(msg["pid"])
                else:
                    del self._pending[msg["id"]]
                    rc_f.set_result(msg["returncode"])
        with self._lock:                         # the server ended: no run still pending will end
            self._log.seek(0)
            log = self._log.read().decode(errors="replace")[-3000:]
            for pid_f, rc_f in self._pending.values():
                for f in (pid_f, rc_f):
                    if not f.done():
                        f.set_exception(RuntimeError(f"the fork server ended:\n{log}"))
            self._pending.clear()

    def run(self, argv: list[str], cwd: str, timeout: float,
            input: str | None = None) -> subprocess.CompletedProcess[str]:  # noqa: A002 - subprocess.run's name
        """``subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd, timeout=timeout,
        input=input)`` with this server's environment (stdin /dev/null without `input`); argv[0] is the script's
        absolute path, or argv is ``["-m", MODULE, ARGS...]``."""
        assert os.path.isabs(argv[0]) or (argv[0] == "-m" and len(argv) > 1), argv[0]
        pid_f: Future = Future()
        rc_f: Future = Future()
        with self._lock:
            rid = next(self._ids)
            out, err = Path(self._dir) / f"{rid}.out", Path(self._dir) / f"{rid}.err"
            stdin = Path(self._dir) / f"{rid}.in"
            if input is not None:
                stdin.write_text(input)
            self._pending[rid] = (pid_f, rc_f)
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps({"id": rid, "argv": [str(a) for a in argv], "cwd": str(cwd),
                                                "out": str(out), "err": str(err),
                                                "in": str(stdin) if input is not None else None}) + "\n").encode())
            self._proc.stdin.flush()
        try:
            returncode = rc_f.result(timeout=timeout)
        except FutureTimeout:
            try:
                os.kill(pid_f.result(timeout=10), 9)
            except (ProcessLookupError, FutureTimeout):
                pass
            raise subprocess.TimeoutExpired([sys.executable, *argv], timeout) from None
        # decoded as subprocess.run(text=True) does: the locale's encoding, universal newlines
        stdout, stderr = (p.read_text() if p.exists() else "" for p in (out, err))
        for p in (out, err, stdin):
            p.unlink(missing_ok=True)
        return subprocess.CompletedProcess([sys.executable, *argv], returncode, stdout, stderr)

    def close(self) -> None:
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        self._proc.wait(timeout=60)
        self._reader.join(timeout=10)
        self._log.close()
        for p in Path(self._dir).iterdir():
            p.unlink()
        os.rmdir(self._dir)


class ForkServers:
    """Fork servers by (preload, environment), each started the first time a run needs it; `close` ends them all.
    Thread-safe."""

    def __init__(self) -> None:
        self._servers: dict[tuple, ForkServer] = {}
        self._lock = threading.Lock()

    def run(self, preload: list[str], env: dict[str, str], argv: list[str], cwd: str, timeout: float,
            input: str | None = None) -> subprocess.CompletedProcess[str]:  # noqa: A002 - subprocess.run's name
        """`ForkServer.run` on the server with `preload` imported and environment `env` (less pytest's
        ``PYTEST_CURRENT_TEST``, which changes with every test: kept, each test's runs would start a server of their
        own, each importing torch and ended only with the session)."""
        env = {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}
        key = (tuple(preload), tuple(sorted(env.items())))
        with self._lock:
            server = self._servers.get(key)
            if server is None:
                server = self._servers[key] = ForkServer(list(preload), env)
        return server.run(argv, cwd, timeout, input)

    def __len__(self) -> int:
        with self._lock:
            return len(self._servers)

    def close(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.close()



# --------------------------------------------------------------------------------------------------------------
# one set of servers for the whole test session
# --------------------------------------------------------------------------------------------------------------

SERVERS = ForkServers()
"""The session's fork servers (the corpus fixture `fork_servers` and `python`); tests/conftest.py closes them when
the session ends."""

#: what ``python -m dynadbg ...`` has imported before the program's first line, and so may come from the server
DYNADBG_PRELOAD = ["torch", "torch._dynamo"]


def python(args: list[str], *, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
           timeout: float = 300, input: str | None = None,  # noqa: A002 - subprocess.run's name
           preload: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
    timeout=timeout, input=input)`` (stdin from /dev/null without `input`) run as a fork of a server that imported `preload` (default: torch,
    which ``python -m dynadbg`` imports before it runs a program). `args`: ``["-m", MODULE, ...]`` or
    ``[SCRIPT, ...]`` (a relative script is taken from `cwd`). For tests that read a run's output, status and
    files; a test about the interpreter's start itself (its warnings, what it imports first) runs python."""
    args = [str(a) for a in args]
    where = os.fspath(cwd) if cwd is not None else os.getcwd()
    if args[0] != "-m" and not os.path.isabs(args[0]):
        args[0] = os.path.join(where, args[0])
    return SERVERS.run(DYNADBG_PRELOAD if preload is None else preload,
                       dict(os.environ if env is None else env), args, cwd=where, timeout=timeout, input=input)


if __name__ == "__main__":
    _request = _serve(sys.argv[1:])
    if _request is None:                         # the server's end: it only imported modules, nothing to finalize;
        sys.stderr.flush()                       # an interpreter's exit with torch imported takes ~0.8 s of CPU
        os._exit(0)
    del _serve
    _child(_request)
