"""Multi-rank jobs: `torchrun -m dynadbg report --out DIR`, `diff --ranks`, and `run --rank R` (2 CPU ranks, gloo)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynadbg.cli import main

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "rank_program.py"
pytestmark = pytest.mark.slow


def torchrun(*args: str) -> subprocess.CompletedProcess:
    torch = pytest.importorskip("torch")
    if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "dynadbg", *args, str(PROGRAM)],
        capture_output=True, text=True, timeout=400, env=env, cwd=HERE,
    )


def test_report_per_rank_and_diff_ranks_names_the_code_object_and_guard(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ranks"
    proc = torchrun("report", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["rank0.json", "rank1.json"]
    rank1 = json.loads((out / "rank1.json").read_text())
    assert rank1["rank"] == 1 and rank1["world_size"] == 2
    assert rank1["summary"]["recompiles"] == 1
    assert json.loads((out / "rank0.json").read_text())["summary"]["recompiles"] == 0

    status = main(["diff", "--ranks", str(out)])
    text = capsys.readouterr().out
    assert status == 1
    assert "step (rank_program.py)  differs in: entries, recompiles, guards" in text
    assert "rank 1 recompiled: failing guard [0/0] L['k'] == 1" in text
    assert "expected 1, actual 2" in text

    assert main(["diff", "--ranks", str(out), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    (row,) = data["diverging"]
    assert row["name"] == "step"
    assert row["per_rank"]["0"]["recompiles"] == 0 and row["per_rank"]["1"]["recompiles"] == 1


def test_run_debugs_one_rank_while_the_other_records(tmp_path: Path) -> None:
    out = tmp_path / "ranks"
    proc = torchrun("run", "--plain", "--rank", "1", "--break-on", "recompile", "-c", "guards fail; c",
                    "--out", str(out))
    text = proc.stdout
    assert proc.returncode == 0, text + proc.stderr
    assert text.count("(dynadbg) guards fail") == 1          # only rank 1 stopped
    assert "step is about to recompile" in text
    assert "expected 1, actual 2" in text
    assert "rank 0: total 4.0" in text and "rank 1: total 4.0" in text
    assert sorted(p.name for p in out.iterdir()) == ["rank0.json", "rank1.json"]


def test_diff_ranks_needs_two_reports(tmp_path: Path, capsys) -> None:
    assert main(["diff", "--ranks", str(tmp_path)]) == 2
    assert "need two or more" in capsys.readouterr().err
