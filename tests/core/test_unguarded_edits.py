"""The unguarded-edit check at a debugger stop and on ``--patch`` replay: an instruction edit that makes the
generated code feed the FX graph another object (``LOAD_GLOBAL lin_a`` → ``lin_b``) gets the guards torch built
for the old object rebuilt on the new one, or is refused with the source it would leave unguarded."""

from __future__ import annotations

import torch

from dynadbg.core import patches as P
from dynadbg.core.commands import CommandLine
from dynadbg.core.session import Session
from helpers import QueueListener

torch.manual_seed(0)
lin_a = torch.nn.Linear(4, 4)
lin_b = torch.nn.Linear(4, 4)
lin_c = torch.nn.Linear(4, 4).double()


def reads_lin_a(x):
    return lin_a(x).relu()


def program(out):
    torch._dynamo.reset()
    lin_b.float()
    cf = torch.compile(reads_lin_a, backend="eager")
    x = torch.randn(2, 4)
    out.append(("first", torch.allclose(cf(x), lin_b(x).relu()), torch.allclose(cf(x), lin_a(x).relu())))
    out.append(("second", torch.allclose(cf(x), lin_b(x).relu())))
    lin_b.double()
    # with no guard on G['lin_b'] this call ran the graph traced for float weights and raised inside it
    y = cf(x)
    out.append(("after the dtype change", torch.allclose(y, lin_a(x).relu())))
    lin_b.float()


def drive(start, respond, break_on=("compile",)):
    listener = QueueListener()
    session = Session(listener, break_on=break_on)
    start(session)
    n = 0
    while True:
        kind, payload = listener.events.get(timeout=180)
        if kind == "exit":
            return payload, session, listener.messages
        respond(session, payload, n)
        n += 1
        CommandLine(session).execute("c")


def lin_a_row(stop) -> int:
    return next(i.index for i in stop.frame.code.instructions if i.opname == "LOAD_GLOBAL" and i.argrepr == "lin_a")


def test_edit_at_a_stop_to_an_object_the_graph_was_not_traced_for_is_refused_and_a_fitting_one_is_guarded():
    out: list = []
    said: dict = {}

    def respond(session, stop, n):
        if n == 0:
            row = lin_a_row(stop)
            said["lin_c"] = CommandLine(session).execute(f"edit {row} LOAD_GLOBAL lin_c")
            said["lin_b"] = CommandLine(session).execute(f"edit {row} LOAD_GLOBAL lin_b")
            said["guards"] = CommandLine(session).execute("guards").output

    result, session, messages = drive(lambda s: s.start_callable(program, out), respond)
    assert result.exception is None, result.exception
    refused = said["lin_c"].error
    assert "unguarded source" in refused and "G['lin_c']._parameters['weight']" in refused
    assert "TENSOR_MATCH" in refused and "nothing installed" in refused
    assert said["lin_b"].error is None
    assert "G['lin_b']._parameters['weight']" in said["guards"]
    assert out[0] == ("first", True, False) and out[1] == ("second", True)
    # the dtype change misses the edited entry: Dynamo compiles again, and the patch is not re-applied to that
    # compile, because lin_b no longer fits the graph it was traced for
    assert out[2] == ("after the dtype change", True)
    assert any("not applied" in m and "G['lin_b']._parameters" in m for m in messages), messages


def test_replayed_patch_is_guarded_and_refused_when_the_new_source_does_not_fit(tmp_path):
    path = str(tmp_path / "p.json")
    out: list = []

    def respond(session, stop, n):
        if n == 0:
            CommandLine(session).execute(f"edit {lin_a_row(stop)} LOAD_GLOBAL lin_b")
            assert CommandLine(session).execute(f"patch save {path}").error is None

    drive(lambda s: s.start_callable(program, out), respond)
    specs = P.read_patch_file(path)
    assert not isinstance(specs, P.EditError)

    # replay with lin_b as it was: applied, with guards on G['lin_b']
    replay: list = []
    said: dict = {}

    def start(session):
        session.patch_manager.add_pending(specs)
        session.start_callable(program, replay)

    def look(session, stop, n):
        if n == 0:
            said["guards"] = CommandLine(session).execute("guards").output

    result, _s, messages = drive(start, look)
    assert result.exception is None
    assert replay[0] == ("first", True, False)
    assert "G['lin_b']._parameters['weight']" in said["guards"]
    assert any("patch applied to reads_lin_a" in m for m in messages)

    # replay where lin_b does not fit the graph (another dtype): refused with the source, Dynamo's code runs
    stale: list = []

    def program_double(out):
        lin_b.double()
        try:
            torch._dynamo.reset()
            cf = torch.compile(reads_lin_a, backend="eager")
            x = torch.randn(2, 4)
            out.append(torch.allclose(cf(x), lin_a(x).relu()))
        finally:
            lin_b.float()

    def start2(session):
        session.patch_manager.add_pending(P.read_patch_file(path))
        session.start_callable(program_double, stale)

    result, _s, messages = drive(start2, lambda *a: None, break_on=())
    assert result.exception is None and stale == [True]
    assert any("not applied" in m and "G['lin_b']._parameters['weight']" in m and "TENSOR_MATCH" in m
               for m in messages), messages


class Config:
    def __init__(self, scale, version=1):
        self.scale, self.version = scale, version


class LegacyConfig(Config):
    pass


def scaled(x, cfg):
    return x * cfg.scale


def run_scaled(out):
    torch._dynamo.reset()
    cf = torch.compile(scaled, backend="eager")
    out.append(float(cf(torch.ones(2), Config(2.0))[0]))
    out.append(float(cf(torch.ones(2), LegacyConfig(2.0))[0]))


def test_patch_save_carries_guard_edits_and_replay_rebuilds_them(tmp_path):
    path = str(tmp_path / "guards.json")
    said: dict = {}

    def respond(session, stop, n):
        if n == 0:
            tree = CommandLine(session).execute("guards").data
            from dynadbg.core.guards import iter_leaves

            leaf = next(lf for lf in iter_leaves(tree) if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH")
            said["drop"] = CommandLine(session).execute(f"guard drop {leaf.id}")
            said["add"] = CommandLine(session).execute("guard add L['cfg'].version == 1")      # a real EQUALS_MATCH leaf
            said["expr"] = CommandLine(session).execute("guard add L['cfg'].version < 5")      # an expression guard
            said["save"] = CommandLine(session).execute(f"patch save {path}")

    out: list = []
    drive(lambda s: s.start_callable(run_scaled, out), respond)
    assert said["drop"].error is None and said["add"].error is None and said["save"].error is None
    assert said["expr"].error is None
    (spec,) = P.read_patch_file(path)
    assert spec.ops == () and {(g.kind.value, g.source) for g in spec.guards} == {
        ("drop", "L['cfg']"), ("add", "L['cfg'].version"), ("expr", "L")}
    # a fresh run replays them: the LegacyConfig call reuses the entry (no TYPE_MATCH), the added guards hold
    replay: list = []
    seen: dict = {}

    def start(session):
        session.patch_manager.add_pending(P.read_patch_file(path))
        session.start_callable(run_scaled, replay)

    def look(session, stop, n):
        if n == 0:
            seen["guards"] = CommandLine(session).execute("guards").output

    result, session, messages = drive(start, look)
    assert result.exception is None and replay == [2.0, 2.0]
    assert "DEBUGGER: L['cfg'].version < 5" in seen["guards"]
    assert "EQUALS_MATCH  L['cfg'].version == 1" in seen["guards"], seen["guards"]
    assert "___check_type_id(L['cfg']" not in seen["guards"]
    assert [len(f.entries) for f in session.compiled_frames() if f.name == "scaled"] == [1]
    assert any("patch applied to scaled" in m and m.endswith("(3 guard operation(s))") for m in messages), messages


def test_a_replayed_guard_drop_that_no_longer_fits_is_refused_with_its_reason(tmp_path):
    from dynadbg.core.patchfile import write_patch_file
    from dynadbg.core.toolkit_model import GuardOp, GuardOpKind

    out: list = []
    keys: list = []

    def respond(session, stop, n):
        if n == 0:     # the key of the entry running now: the patch below is made for this very code
            keys.append(session.patch_manager._live_key(scaled.__code__))

    drive(lambda s: s.start_callable(run_scaled, out), respond, break_on=("entry",))
    path = str(tmp_path / "stale.json")
    assert write_patch_file(path, [(keys[0], (), (GuardOp(GuardOpKind.DROP, "L['cfg'].missing", None),), None,
                                    False)]) is None
    replay: list = []

    def start(session):
        session.patch_manager.add_pending(P.read_patch_file(path))
        session.start_callable(run_scaled, replay)

    result, _s, messages = drive(start, lambda *a: None, break_on=())
    assert result.exception is None and replay == [2.0, 2.0]
    assert any("not applied" in m and "L['cfg'].missing" in m and "no guards there" in m for m in messages), messages


def test_an_edit_at_a_frame_stop_is_refused_with_the_reason_the_toolkit_gives():
    """At a stop in generated code (not the compile stop) the edit goes through the toolkit: the same copy made
    from a script is refused for the same source, with the same words."""
    from dynadbg.core import toolkit
    from dynadbg.core.format.toolkit import problem_text

    out: list = []
    said: dict = {}

    def program_refuse(out):
        torch._dynamo.reset()
        cf = torch.compile(reads_lin_a, backend="eager")
        cf(torch.randn(2, 4))
        entry = next(e for e in toolkit.entries(reads_lin_a) if e.kind is toolkit.EntryKind.CACHE)
        row = next(i.index for i in entry.code.instructions if i.opname == "LOAD_GLOBAL" and i.argrepr == "lin_a")
        try:
            entry.copy().edit(row, "LOAD_GLOBAL", "lin_c").install("front")
            out.append(None)
        except toolkit.Refused as exc:
            out.append([problem_text(p) for p in exc.validation.problems])
        out.append(len(toolkit.entries(reads_lin_a)))

    def respond(session, stop, n):
        if n == 0:
            said["lin_c"] = CommandLine(session).execute(f"edit {lin_a_row(stop)} LOAD_GLOBAL lin_c")

    result, _session, _messages = drive(lambda s: s.start_callable(program_refuse, out), respond, ("entry",))
    assert result.exception is None, result.exception
    refused = said["lin_c"].error
    assert "unguarded source" in refused and "G['lin_c']._parameters['weight']" in refused
    assert "nothing installed" in refused
    reasons = out[0]
    assert reasons and all(reason in refused for reason in reasons), (reasons, refused)
    assert out[1] == 1     # neither installed anything: Dynamo's one entry
