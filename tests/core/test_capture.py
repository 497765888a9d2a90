"""Capture on tiny compiled functions: records (frames, entries, graphs, graph breaks, resume functions,
recompile reasons, hits), the two stop hooks and their same-call effects, and install/uninstall hygiene."""

from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")

from dynadbg.core import compat  # noqa: E402
from dynadbg.core.capture import CacheMissEvent, Capture, CompileEvent  # noqa: E402
from dynadbg.core.report import NO_FRAMES, format_report, report_json, run_report  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_dynamo():
    compat.load()
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def capture():
    cap = Capture(count_hits=True).install()
    try:
        yield cap
    finally:
        cap.uninstall()


def frame_named(cap: Capture, name: str):
    found = [f for f in cap.frames() if f.name == name]
    assert len(found) == 1, [f.name for f in cap.frames()]
    return found[0]


# ------------------------------------------------------------------------------------------------------------
# records
# ------------------------------------------------------------------------------------------------------------


def gb_fn(x):
    y = x.sin() + 1
    print("graph break here")
    return y * 2


def test_graph_break_makes_a_resume_function_with_its_origin(capture, capsys):
    torch.compile(gb_fn, backend="eager")(torch.ones(3))
    frames = capture.frames()
    main = frames[0]
    assert main.name == "gb_fn" and not main.is_resume and main.resume_origin is None
    assert len(main.entries) == 1
    entry = main.entries[0]
    assert entry.backend == "eager"
    assert len(entry.resume_functions) == 1 and entry.resume_functions[0].startswith("__resume_at_")

    (brk,) = main.graph_breaks
    assert brk.compile_id == entry.compile_id
    assert "Failed to trace builtin operator" in brk.summary and brk.notes  # torch's reason, parsed once
    assert brk.filename == __file__ and brk.user_line == 'print("graph break here")'
    assert brk.lineno == gb_fn.__code__.co_firstlineno + 2
    assert brk.resume_functions == entry.resume_functions and not brk.duplicate

    resume = [f for f in frames if f.is_resume]
    assert len(resume) == 1
    (r,) = resume
    assert r.name == f"torch_dynamo_resume_in_gb_fn_at_{brk.lineno}"
    assert r.resume_origin.startswith("gb_fn (test_capture.py:")
    assert isinstance(r.resume_offset, int) and r.resume_offset > 0
    assert entry.resume_keys == (r.key,)
    assert len(r.entries) == 1 and not r.graph_breaks
    # the resume function's source is its origin's
    assert r.source is not None and "def gb_fn" in r.source
    assert capsys.readouterr().out == "graph break here\n"


def test_resume_functions_keyed_by_identity_not_name(capture):
    def gate(a, b):
        y = a / (a.abs() + 1)
        if b.sum() < 0:
            b = -b
        return y * b

    cg = torch.compile(gate, backend="eager")
    a = torch.randn(4)
    for b in (torch.ones(4), -torch.ones(4)):
        assert torch.allclose(cg(a, b), gate(a, b))
    resumes = [f for f in capture.frames() if f.is_resume]
    # both branches resume in a function with the same co_name, but they are distinct code objects
    assert len(resumes) == 2
    assert resumes[0].name == resumes[1].name
    assert resumes[0].key != resumes[1].key
    assert resumes[0].resume_offset != resumes[1].resume_offset
    main = frame_named(capture, "gate")
    (brk,) = main.graph_breaks
    assert brk.summary == "Data-dependent branching"
    assert set(main.entries[0].resume_keys) == {r.key for r in resumes}


def test_recompile_reasons_as_torch_gives_them(capture):
    def scale(x, n):
        return x * n

    cf = torch.compile(scale, backend="eager", dynamic=False)
    cf(torch.ones(2), 1)
    cf(torch.ones(2), 2)
    frame = frame_named(capture, "scale")
    old, new = (e.compile_id for e in frame.entries)
    (rec,) = frame.recompiles
    assert rec.compile_id == new
    (reason,) = rec.reasons
    assert reason.startswith(f"{old}: n == 1")
    assert "User stack trace" in reason  # torch's full string, kept as is


def test_fx_graph_is_captured_per_compiled_fn(capture):
    def g(x):
        return torch.cos(x) * 3

    torch.compile(g, backend="eager")(torch.ones(2))
    frame = frame_named(capture, "g")
    (graph,) = frame.graphs
    (entry,) = frame.entries
    assert graph.name in entry.graphs and graph.name.startswith("__compiled_fn")
    assert graph.compile_id == entry.compile_id
    assert "torch.cos" in graph.code and "def forward" in graph.code
    assert "call_function" in graph.graph_text
    assert graph.node_count >= 4


def test_hit_counts_per_entry(capture):
    def h(x, n):
        return x + n

    ch = torch.compile(h, backend="eager", dynamic=False)
    for n in (1, 1, 1, 2, 2):
        ch(torch.ones(2), n)
    hits = {e.compile_id: e.hits for e in frame_named(capture, "h").entries}
    assert sorted(hits.values()) == [2, 3]


def test_hits_unknown_without_counting():
    cap = Capture().install()
    try:
        def k(x):
            return x - 1

        torch.compile(k, backend="eager")(torch.ones(2))
        (entry,) = frame_named(cap, "k").entries
        assert entry.hits == -1
        # the session calls note_call from its own debugger callback: counts become known from the first call
        code = torch._dynamo.eval_frame._debug_get_cache_entry_list(k.__code__)[0].code
        cap.note_call(code)
        cap.note_call(code)
        assert frame_named(cap, "k").entries[0].hits == 2
    finally:
        cap.uninstall()


def test_generated_code_queries(capture):
    torch.compile(gb_fn, backend="eager")(torch.ones(2))
    entries = torch._dynamo.eval_frame._debug_get_cache_entry_list(gb_fn.__code__)
    gen = entries[0].code
    assert capture.is_generated(gen)
    assert not capture.is_generated(gb_fn.__code__)
    assert capture.original_of(gen) is gb_fn.__code__
    original, compile_id, is_resume = capture.generated_info(gen)
    assert original is gb_fn.__code__ and compile_id == str(entries[0].compile_id) and not is_resume
    (resume_name,) = capture.frames()[0].entries[0].resume_functions
    resume_code = capture.resume_global(resume_name)
    assert resume_code.co_name.startswith("torch_dynamo_resume_in_gb_fn_at_")
    rgen = torch._dynamo.eval_frame._debug_get_cache_entry_list(resume_code)[0].code
    assert capture.generated_info(rgen)[2] is True
    assert capture.resume_origin_of(resume_code)[0] is gb_fn.__code__
    assert capture.generated_info(gb_fn.__code__) is None


def test_guard_text_only_when_asked(capture):
    def m(x, n):
        return x * n

    torch.compile(m, backend="eager", dynamic=False)(torch.ones(2), 3)
    (entry,) = frame_named(capture, "m").entries
    assert entry.guards_text is None and entry.guard_tree is None
    (frame,) = [f for f in capture.frames(guards=True) if f.name == "m"]
    text = frame.entries[0].guards_text
    assert text and "L['n']" in text


def test_skipped_frames_after_failed_compile(capture):
    def in_try(x):
        y = x + 1
        try:
            print("inside try")
        finally:
            pass
        return y

    torch.compile(in_try, backend="eager")(torch.ones(2))
    frame = frame_named(capture, "in_try")
    assert frame.entries == ()
    assert frame.skipped and "error was suppressed" in frame.skipped
    (brk,) = frame.graph_breaks
    assert "Skipping the function and falling back to eager" in brk.reason


def test_own_source_paths_never_take_a_checkout_named_dynadbg(tmp_path):
    """`git clone .../dynadbg` makes a checkout named ``dynadbg``: its tests and the user's scripts beside
    ``core/`` are not dynadbg's own files (their skip records are kept), the demos are never dynadbg's."""
    import os

    root = tmp_path / "dynadbg"
    for sub in ("core", "app/tui", "app/demos", "tests/core"):
        (root / sub).mkdir(parents=True)
    for f in ("core/capture.py", "app/__init__.py", "app/cli.py", "app/demos/mlp.py", "tests/core/t.py", "mine.py"):
        (root / f).write_text("")
    paths = compat.own_source_paths(core_dir=str(root / "core"), package_dir=str(root / "app"))

    def own(rel):
        return str(root / rel).startswith(paths)

    assert own("core/capture.py") and own("app/cli.py") and own("app/tui/x.py")
    assert not own("tests/core/t.py") and not own("mine.py") and not own("app/demos/mlp.py")
    assert all(p.endswith(os.sep) or p.endswith(".py") for p in paths)


def test_own_source_paths_of_this_install_exclude_the_tests():
    assert not __file__.startswith(compat.own_source_paths())
    import dynadbg.core.capture as cap_mod

    assert cap_mod.__file__.startswith(compat.own_source_paths())


# ------------------------------------------------------------------------------------------------------------
# stops
# ------------------------------------------------------------------------------------------------------------


def _return_constant(code, value):
    """`code` with every RETURN_VALUE replaced by POP_TOP; LOAD_CONST value; RETURN_VALUE (torch-internals §11)."""
    from bytecode import Bytecode, Instr

    bc = Bytecode.from_code(code)
    out = []
    for ins in bc:
        if isinstance(ins, Instr) and ins.name == "RETURN_VALUE":
            out += [Instr("POP_TOP"), Instr("LOAD_CONST", value), Instr("RETURN_VALUE")]
        else:
            out.append(ins)
    bc[:] = out
    return bc.to_code()


def test_on_compiled_can_replace_the_code_for_this_very_call():
    events: list[CompileEvent] = []

    def on_compiled(event: CompileEvent) -> None:
        events.append(event)
        if len(events) == 1:
            event.code = _return_constant(event.code, 7)

    cap = Capture(on_compiled=on_compiled, count_hits=True).install()
    try:
        def p(x, n):
            return (x * n).sum()

        cp = torch.compile(p, backend="eager", dynamic=False)
        assert cp(torch.ones(3), 1) == 7           # the edit applies to the call that compiled it
        assert cp(torch.ones(3), 1) == 7           # and to the cache entry
        assert cp(torch.ones(3), 2) == 6           # a recompile works (torch knows the replacement's origin)
        (first, second) = events
        assert first.original_code is p.__code__ and first.frame_name.endswith("p")
        assert first.replaced and first.dynamo_code is not first.code
        assert first.compile_id == "0/0" or first.compile_id.endswith("/0")
        assert type(first.guard_manager).__name__ == "GuardManagerWrapper"
        frame = frame_named(cap, "p")
        e0, e1 = frame.entries
        assert e0.replaced and not e1.replaced
        assert e0.hits == 2 and e1.hits == 1
        assert cap.is_generated(first.code) and cap.is_generated(first.dynamo_code)
        assert cap.original_of(first.code) is p.__code__
        # the listing is the replacement's
        assert [i.opname for i in e0.code.instructions][-3:] == ["POP_TOP", "LOAD_CONST", "RETURN_VALUE"]
    finally:
        cap.uninstall()


def test_on_cache_miss_only_on_real_recompiles_and_eager_runs_uncompiled():
    seen: list[CacheMissEvent] = []
    action = {"value": "eager"}

    def on_cache_miss(event: CacheMissEvent):
        seen.append(event)
        return action["value"]

    cap = Capture(on_cache_miss=on_cache_miss).install()
    try:
        k = 10

        def q(x, n):
            return x * n + k

        cq = torch.compile(q, backend="eager", dynamic=False)
        assert cq(torch.ones(2), 1).tolist() == [11.0, 11.0]
        assert seen == []                           # first compile: no cache entries yet, no event
        assert cq(torch.ones(2), 2).tolist() == [12.0, 12.0]   # eager: right result, no new entry
        (event,) = seen
        assert event.code is q.__code__
        assert event.f_locals["n"] == 2 and event.f_locals["k"] == 10  # free variables included
        assert len(event.cache_entries) == 1 and event.compile_ids == (str(event.cache_entries[0].compile_id),)
        assert len(frame_named(cap, "q").entries) == 1
        action["value"] = None                      # now let it recompile
        assert cq(torch.ones(2), 3).tolist() == [13.0, 13.0]
        assert len(frame_named(cap, "q").entries) == 2
        assert len(frame_named(cap, "q").recompiles) == 1
    finally:
        cap.uninstall()


def test_on_cache_miss_skip_stops_compiling_that_code():
    cap = Capture(on_cache_miss=lambda event: "skip").install()
    try:
        def s(x, n):
            return x * n

        cs = torch.compile(s, backend="eager", dynamic=False)
        cs(torch.ones(2), 1)
        assert cs(torch.ones(2), 2).tolist() == [2.0, 2.0]
        assert cs(torch.ones(2), 3).tolist() == [3.0, 3.0]
        assert cs(torch.ones(2), 1).tolist() == [1.0, 1.0]  # the existing entry still serves
        frame = frame_named(cap, "s")
        assert len(frame.entries) == 1
        assert frame.skipped and "stopped" in frame.skipped
        assert len(torch._dynamo.eval_frame._debug_get_cache_entry_list(s.__code__)) == 1
    finally:
        cap.uninstall()


def test_on_cache_miss_bad_action_is_reported_and_the_call_recompiles():
    # a fault of the debugger's hook must not break the user's compile: it is reported, the call goes on
    cap = Capture(on_cache_miss=lambda event: "bogus").install()
    try:
        def b(x, n):
            return x * n

        cb = torch.compile(b, backend="eager", dynamic=False)
        cb(torch.ones(2), 1)
        assert cb(torch.ones(2), 2).tolist() == [2.0, 2.0]
        assert any("on_cache_miss returned 'bogus'" in e for e in cap.errors), cap.errors
        assert len(torch._dynamo.eval_frame._debug_get_cache_entry_list(b.__code__)) == 2
    finally:
        cap.uninstall()


# ------------------------------------------------------------------------------------------------------------
# install / uninstall
# ------------------------------------------------------------------------------------------------------------


def _targets_now():
    out = {}
    for feature, (module, path) in compat.CAPTURE_PATCH_TARGETS.items():
        owner, name = compat._resolve_attr(module, path)
        out[feature] = (vars(owner).get(name, "<inherited>"), getattr(owner, name))
    return out


def test_uninstall_restores_every_patch_and_a_second_capture_works():
    before = _targets_now()
    callback_before = compat.eval_frame_c.get_bytecode_debugger_callback()
    for _ in range(2):
        cap = Capture(count_hits=True).install()
        assert _targets_now() != before
        cap.install()  # idempotent
        cap.uninstall()
        cap.uninstall()  # idempotent
        assert _targets_now() == before
        assert compat.eval_frame_c.get_bytecode_debugger_callback() is callback_before

    second = Capture(count_hits=True).install()
    try:
        def r(x):
            return x + 2

        torch.compile(r, backend="eager")(torch.ones(2))
        (frame,) = [f for f in second.frames() if f.name == "r"]
        assert frame.entries[0].hits == 1
    finally:
        second.uninstall()
    assert _targets_now() == before


def test_two_captures_at_once_both_record_and_unwind_in_any_order():
    before = _targets_now()
    a = Capture().install()
    b = Capture().install()
    try:
        def t(x):
            return x * 5

        torch.compile(t, backend="eager")(torch.ones(2))
        assert [f.name for f in a.frames()] == ["t"] and [f.name for f in b.frames()] == ["t"]
    finally:
        a.uninstall()   # out of order: a's patches sit under b's
        def u(x):
            return x * 6

        torch.compile(u, backend="eager")(torch.ones(2))
        assert "u" not in [f.name for f in a.frames()]   # an uninstalled capture records nothing
        assert "u" in [f.name for f in b.frames()]
        b.uninstall()
    # a's restore was deferred because b had patched over it; after b restores, a's handlers are inert
    # pass-throughs at most: results stay correct and nothing records
    def v(x):
        return x * 7

    assert torch.compile(v, backend="eager")(torch.ones(2)).tolist() == [7.0, 7.0]
    assert "v" not in [f.name for f in a.frames() + b.frames()]
    del before


def test_missing_hook_target_disables_that_part_only(monkeypatch):
    monkeypatch.setitem(compat.CAPTURE_PATCH_TARGETS, "capture: graphs",
                        ("torch._dynamo.output_graph", "OutputGraph.no_such_method"))
    cap = Capture().install()
    try:
        assert any("capture: graphs" in msg for msg in cap.disabled)

        def w(x):
            return x.exp()

        torch.compile(w, backend="eager")(torch.ones(2))
        frame = frame_named(cap, "w")
        assert len(frame.entries) == 1 and frame.graphs == ()
    finally:
        cap.uninstall()
        compat.FEATURES.pop("capture: graphs", None)


# ------------------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------------------


def test_format_report_of_nothing():
    text = format_report([])
    assert NO_FRAMES in text
    assert "summary: 0 frames, 0 cache entries, 0 graph breaks, 0 recompiles" in text


def test_report_text_and_json(capture):
    def rep(x, n):
        y = x.sin() * n
        print("break")
        return y + 1

    cr = torch.compile(rep, backend="eager", dynamic=False)
    cr(torch.ones(2), 1)
    cr(torch.ones(2), 2)
    frames = capture.frames(guards=True)
    text = format_report(frames)
    assert "[1] frame rep" in text and "resume function torch_dynamo_resume_in_rep_at_" in text
    assert "original bytecode:" in text and "transformed bytecode:" in text and "guards:" in text
    assert "FX graph __compiled_fn" in text and ".sin()" in text
    assert "graph breaks:" in text and 'print("break")' in text
    assert "recompiles:" in text and ": n == 1" in text
    # the resume function takes only `y`: it is not recompiled for n=2
    # torch logs the break at compile 0/0 and again at 0/1: one break at one line, counted once as distinct
    assert "summary: 2 frames, 3 cache entries, 2 graph breaks (1 distinct), 1 recompile" in text
    data = report_json(frames)
    json.dumps(data)
    assert data["schema"] == "dynadbg.report/3"
    assert data["summary"]["entries"] == 3
    f0 = data["frames"][0]
    assert f0["entries"][0]["resume_functions"][0]["frame"] == 1
    assert f0["entries"][0]["resume_functions"][0]["name"].startswith("torch_dynamo_resume_in_rep_at_")
    assert f0["graph_breaks"][1]["duplicate"] is True
    assert f0["entries"][0]["code"][0]["opname"] == "RESUME"


def test_run_report_keeps_the_program_output_and_status(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys, torch
        def f(x):
            return x + 1
        print("result", torch.compile(f, backend="eager")(torch.ones(1)).item())
        sys.exit(3)
    """))
    result = run_report(str(script), [])
    assert result.status == 3
    assert capsys.readouterr().out == "result 2.0\n"
    assert [f.name for f in result.frames] == ["f"]
    assert result.frames[0].entries[0].hits == 1
    assert result.json()["exit_status"] == 3


def test_run_report_of_a_script_that_never_compiles(tmp_path, capsys):
    script = tmp_path / "plain.py"
    script.write_text("print('hello')\nraise SystemExit(0)\n")
    result = run_report(str(script), [])
    assert result.status == 0 and result.frames == ()
    assert capsys.readouterr().out == "hello\n"
    assert NO_FRAMES in result.text()


def test_run_report_of_a_script_that_raises(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("raise ValueError('boom')\n")
    result = run_report(str(script), [])
    assert result.status == 1 and result.exit.exception == "ValueError: boom"
    assert result.json()["exception"] == "ValueError: boom"


def test_reset_drops_entries_and_a_reused_compile_id_is_a_new_entry(capture):
    def z(x):
        return x + 3

    torch.compile(z, backend="eager")(torch.ones(2))
    torch._dynamo.reset()
    torch.compile(z, backend="eager")(torch.ones(2))
    frame = frame_named(capture, "z")
    first, second = frame.entries
    assert first.compile_id == second.compile_id      # torch counts again from 0 after a reset
    assert first.dropped and not second.dropped
    assert (first.hits, second.hits) == (1, 1)
    assert frame.recompiles == ()


def test_on_compiled_can_replace_the_guard_manager():
    """A wrapper around a clone of the root without L['n'] serves later calls with any n (torch-internals §11)."""
    from torch._dynamo.guards import GuardManagerWrapper

    def drop_n(event: CompileEvent) -> None:
        old = event.guard_manager
        new = GuardManagerWrapper(old.root.clone_manager(lambda m: m.get_source() != "L['n']"))
        for attr in ("closure_vars", "args", "code_parts", "verbose_code_parts", "global_scope", "extra_state",
                     "id_matched_objs", "no_tensor_aliasing_sources", "diff_guard_sources"):
            setattr(new, attr, getattr(old, attr))
        event.guard_manager = new
        installed.append(new)

    installed: list = []
    cap = Capture(on_compiled=drop_n).install()
    try:
        def dn(x, n):
            return x * n

        cdn = torch.compile(dn, backend="eager", dynamic=False)
        assert cdn(torch.ones(2), 3).tolist() == [3.0, 3.0]
        # n was constant-folded into the graph: without its guard the stale entry serves n=5 (wrong on purpose)
        assert cdn(torch.ones(2), 5).tolist() == [3.0, 3.0]
        frame = frame_named(cap, "dn")
        assert len(frame.entries) == 1 and frame.recompiles == ()
        (live,) = torch._dynamo.eval_frame._debug_get_cache_entry_list(dn.__code__)
        assert live.guard_manager is installed[0]
        (frame,) = [f for f in cap.frames(guards=True) if f.name == "dn"]
        assert "L['n']" not in frame.entries[0].guards_text and "L['x']" in frame.entries[0].guards_text
    finally:
        cap.uninstall()


def test_patches_restored_out_of_order_leave_the_original_in_place():
    """A Capture uninstalled while another patch (dynadbg.toolkit's call-site recorder) sits above it: when that
    one is restored too, torch's own function is back, not the Capture's wrapper."""
    import types

    owner = types.SimpleNamespace(fn=lambda: "torch")
    original = owner.fn
    lower = compat.AttrPatch(owner, "fn", lambda: "lower")
    lower.apply()
    upper = compat.AttrPatch(owner, "fn", lambda: "upper")
    upper.apply()
    lower.restore()                       # out of order: upper still installed
    assert owner.fn() == "upper"
    upper.restore()
    assert owner.fn is original

    # and in order, as before
    first = compat.AttrPatch(owner, "fn", lambda: "first")
    first.apply()
    second = compat.AttrPatch(owner, "fn", lambda: "second")
    second.apply()
    second.restore()
    first.restore()
    assert owner.fn is original
