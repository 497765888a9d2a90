"""What each recompile decision says it does (`format._DECIDED`, the head of its answer), checked on a real
program: compiles are counted by the program's own backend, not by dynadbg, and which entry served a call by the
entry's hit count."""

from __future__ import annotations

from dynadbg.core.format import _DECIDED, resumed_head
from dynadbg.core.model import ResumeAction
from helpers import drive
from programs import recompiles as progs


def run_deciding(decision: str):
    results: list = []
    compiles: list = []
    run = drive(lambda s: s.start_callable(progs.run_counted, results, compiles),
                [decision, "c", "c"], break_on=("recompile",))
    assert run.result is not None and run.result.status == 0, run.result
    assert results == [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0], [3.0, 3.0]]  # every decision keeps the results right
    (frame,) = [f for f in run.session.compiled_frames() if f.name == "times_n" and f.entries]
    return run, compiles, frame


def test_recompile_says_a_new_entry_is_compiled_for_this_call_and_one_is():
    run, compiles, frame = run_deciding("recompile")
    answer = run.output_of("recompile")
    assert resumed_head(answer.data) == _DECIDED[ResumeAction.RECOMPILE]
    assert answer.output.startswith(_DECIDED[ResumeAction.RECOMPILE])
    first_stop = run.stops[0]
    # the compile ran during the call that stopped (call 2: one call had finished), and made the stop's next entry
    assert compiles[:2] == [0, 1]
    assert first_stop.recompile is not None
    assert [e.compile_id for e in frame.entries][:2] == ["0/0", first_stop.recompile.compile_id]


def test_eager_says_the_call_runs_uncompiled_with_the_entries_unchanged_and_it_does():
    run, compiles, frame = run_deciding("eager")
    answer = run.output_of("eager")
    assert resumed_head(answer.data) == _DECIDED[ResumeAction.EAGER]
    # no compile during call 2; the next compile is n=3's (three calls done), after the second stop's "c"
    assert compiles == [0, 3]
    assert len(run.stops) == 2
    entry_0 = frame.entries[0]
    assert entry_0.compile_id == "0/0"
    # "the cache entries stay as they are": 0/0 is still there and serves call 3 (n=1 again) — calls 1 and 3
    assert entry_0.hits == 2


def test_skip_says_no_more_compiles_and_the_entries_still_serve_and_so_it_is():
    run, compiles, frame = run_deciding("skip")
    answer = run.output_of("skip")
    assert resumed_head(answer.data) == _DECIDED[ResumeAction.SKIP]
    assert compiles == [0]                   # "not compiled again": not for n=2, nor n=3
    assert len(run.stops) == 1               # and no stop asks again
    (entry_0,) = frame.entries
    assert entry_0.hits == 2                 # "its cache entries still serve": 0/0 ran calls 1 and 3


def test_skip_inside_a_debug_block_ends_with_the_block():
    """"while dynadbg runs": after the session that skipped it, a miss compiles again (torch was never told SKIP,
    so nothing outlives the session)."""
    import io

    import torch

    import dynadbg

    compiles: list = []

    def counting_backend(gm, example_inputs):
        compiles.append(1)
        return gm.forward

    cf = torch.compile(progs.times_n, backend=counting_backend, dynamic=False)
    torch._dynamo.reset()
    cf(torch.ones(2), 1)
    with dynadbg.debug(commands=["skip"], break_on=("recompile",), out=io.StringIO()):
        assert cf(torch.ones(2), 2).tolist() == [2.0, 2.0]
        assert cf(torch.ones(2), 3).tolist() == [3.0, 3.0]
    assert len(compiles) == 1
    assert cf(torch.ones(2), 4).tolist() == [4.0, 4.0]
    assert len(compiles) == 2
