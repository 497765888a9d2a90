"""One step in a REAL terminal (a pty): dynadbg on the real engine beside a bare Textual app, in one run.

Run: ``python benchmarks/bench_tui_terminal.py [--layers 300] [--steps 60] [--sizes 140x45,80x24]``.

It writes the model of `bench_tui_real.py` (`--layers` ``nn.Linear`` layers compiled with ``backend="eager"``;
300 layers: 3,853 generated instructions on Python 3.11 / torch 2.13) to a temporary script and starts
``python -m dynadbg run SCRIPT`` on the slave side of a pseudo-terminal, as a user's terminal would run it (the
TUI, since stdin and stdout are a terminal). A thread reads everything the app writes to the terminal. At the
first stop it presses ``s`` `--steps` times: each step is timed from writing the key to the master side until the
bytes that put the next instruction into the status line (``instr N/M``) have been read, and the bytes the app
wrote for that step are counted (until it has been quiet for `QUIET` seconds). Then the terminal is resized to
the next size (``SIGWINCH``, as a terminal window does) and the same is done again.

The same harness then drives a bare Textual app (one `Static` showing ``instr N``, updated by a key binding):
the floor any Textual app pays for a key, a repaint and the terminal. The figures print side by side with the
ratio, per size. Target (DESIGN.md): dynadbg's p95 ≤ 2× the bare app's.

Figures are wall-clock on this machine, which is shared: compare them as ratios within one run.
"""

from __future__ import annotations

import argparse
import bisect
import fcntl
import os
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

#: Seconds without output after which a step's repaint counts as finished (its bytes are all counted).
QUIET = 0.3
#: The status line's instruction field (dynadbg: ``instr 17/3853``; the bare app: ``instr 17``).
STATUS = re.compile(rb"instr (\d+)")

from bench_tui import DEEP_PROGRAM as PROGRAM  # noqa: E402

BARE = textwrap.dedent(
    """
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Static

    class Bare(App[None]):
        BINDINGS = [("s", "step", "Step"), ("q", "quit", "Quit")]

        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def compose(self) -> ComposeResult:
            yield Static(" ⏸ entry · instr 0 ", id="status")
            yield Footer()

        def action_step(self) -> None:
            self.count += 1
            self.query_one("#status", Static).update(f" ⏸ step · instr {self.count} ")

    Bare().run()
    """
)


class Terminal:
    """A program on the slave side of a pty; everything it writes is read on a thread, timestamped."""

    def __init__(self, argv: list[str], size: tuple[int, int], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.resize(size, slave)
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
                                     close_fds=True)
        os.close(slave)
        self._lock = threading.Condition()
        self._data = bytearray()
        self._ends: list[int] = []
        self._times: list[float] = []
        self._last = time.perf_counter()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def resize(self, size: tuple[int, int], fd: int | None = None) -> None:
        cols, rows = size
        fcntl.ioctl(self.master if fd is None else fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        if fd is None:
            os.killpg(self.proc.pid, signal.SIGWINCH)

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                chunk = b""
            now = time.perf_counter()
            with self._lock:
                if not chunk:
                    self._data += b"\0EOF"
                    self._lock.notify_all()
                    return
                self._data += chunk
                self._ends.append(len(self._data))
                self._times.append(now)
                self._last = now
                self._lock.notify_all()

    @property
    def mark(self) -> int:
        with self._lock:
            return len(self._data)

    def wait_for(self, since: int, pattern: re.Pattern[bytes], accept, timeout: float) -> tuple[float, int]:  # noqa: ANN001
        """Wait until output after offset `since` matches `pattern` with `accept(match)`; (time, number)."""
        deadline = time.perf_counter() + timeout
        with self._lock:
            while True:
                for m in pattern.finditer(self._data, since):
                    if accept(m):
                        # when the chunk that completed the match was read
                        return self._times[bisect.bisect_left(self._ends, m.end())], int(m.group(1))
                if self._data.endswith(b"\0EOF"):
                    raise SystemExit("the program ended:\n" + self._data[-3000:].decode(errors="replace"))
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise SystemExit("timed out; last output:\n" + self._data[-3000:].decode(errors="replace"))
                self._lock.wait(min(left, 0.5))

    def quiet(self, seconds: float, timeout: float = 30.0) -> None:
        """Wait until nothing was written for `seconds`."""
        deadline = time.perf_counter() + timeout
        with self._lock:
            while time.perf_counter() < deadline:
                idle = time.perf_counter() - self._last
                if idle >= seconds:
                    return
                self._lock.wait(seconds - idle)

    @property
    def last_time(self) -> float:
        """When the last bytes were read."""
        with self._lock:
            return self._last

    def last_number(self) -> int | None:
        with self._lock:
            found = list(STATUS.finditer(self._data))
        return int(found[-1].group(1)) if found else None

    def press(self, key: bytes) -> float:
        t0 = time.perf_counter()
        os.write(self.master, key)
        return t0

    def close(self) -> None:
        try:
            os.write(self.master, b"q")
            self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def measure(term: Terminal, steps: int) -> tuple[list[float], list[int], list[float]]:
    """`steps` presses of ``s``: (seconds to the next instruction in the status line, bytes written per step,
    seconds to the last byte the step wrote: its whole repaint)."""
    times: list[float] = []
    sizes: list[int] = []
    whole: list[float] = []
    term.quiet(QUIET * 2)
    for _ in range(steps):
        before = term.last_number()
        mark = term.mark
        t0 = term.press(b"s")
        t1, _n = term.wait_for(mark, STATUS, lambda m, b=before: b is None or int(m.group(1)) != b, 60)
        times.append(t1 - t0)
        term.quiet(QUIET)
        sizes.append(term.mark - mark)
        whole.append(term.last_time - t0)
    return times, sizes, whole


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run(argv: list[str], sizes: list[tuple[int, int]], steps: int, ready, env: dict[str, str]):  # noqa: ANN001, ANN201
    """Start `argv` in a pty of the first size, wait for `ready`, then measure at each size in turn."""
    term = Terminal(argv, sizes[0], env)
    results = {}
    try:
        ready(term)
        for size in sizes:
            if size != sizes[0]:
                term.resize(size)
                term.quiet(1.0)
            results[size] = measure(term, steps)
    finally:
        term.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=300)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--sizes", default="140x45,80x24")
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TEXTUAL")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor")

    def first_stop(term: Terminal) -> None:
        term.wait_for(0, re.compile(rb"instr (\d+)/(\d+)"), lambda m: True, 900)

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "deep.py"
        script.write_text(PROGRAM.format(layers=args.layers))
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        real = run([sys.executable, "-m", "dynadbg", "run", str(script)], sizes, args.steps, first_stop, env)
        floor = run([sys.executable, str(bare)], sizes, args.steps,
                    lambda term: term.wait_for(0, STATUS, lambda m: True, 60), env)
    print(f"one step in a pty, keypress → the status line shows the next instruction; {args.layers}-layer "
          f"nn.Linear model (backend eager), {args.steps} steps per size, real engine")
    print(f"{'size':>7}  {'app':<8} {'p50 ms':>7} {'p95 ms':>7} {'bytes/step p50':>15} {'p95':>8}   "
          f"{'whole repaint p50':>17} {'p95':>7}")
    for size in sizes:
        rows = (("dynadbg", real[size]), ("bare", floor[size]))
        for name, (times, counts, whole) in rows:
            print(f"{size[0]:>3}x{size[1]:<3}  {name:<8} {statistics.median(times) * 1000:7.1f} "
                  f"{pct(times, 0.95) * 1000:7.1f} {statistics.median(counts):15,.0f} {pct(counts, 0.95):8,.0f}   "
                  f"{statistics.median(whole) * 1000:17.1f} {pct(whole, 0.95) * 1000:7.1f}")
        (rt, rb, rw), (bt, bb, bw) = real[size], floor[size]
        print(f"{'':>7}  ratio    {statistics.median(rt) / statistics.median(bt):6.1f}x "
              f"{pct(rt, 0.95) / pct(bt, 0.95):6.1f}x {statistics.median(rb) / statistics.median(bb):14.1f}x "
              f"{'':>8}   {statistics.median(rw) / statistics.median(bw):16.1f}x {pct(rw, 0.95) / pct(bw, 0.95):6.1f}x"
              f"   (target: p95 ratio <= 2x)")
    print("(p50/p95: keypress → the status line shows the next instruction; whole repaint: keypress → the last byte"
          " of the step's screen update)")

if __name__ == "__main__":
    main()
