"""`dynadbg learn`: lesson files are checked, progress persists, and every bundled lesson still matches what torch
generates (each step's action, played on the real engine, makes its condition true)."""

from __future__ import annotations

import io
import json
import time

import pytest

from dynadbg.learn.coach import Coach, EngineState, Facts, check
from dynadbg.learn.lessons import LessonError, load_lesson, load_lessons
from dynadbg.learn.progress import DATA_DIR_ENV, Progress
from forkrun import python

LESSONS = load_lessons()


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    return tmp_path / "data"


GOOD = '''
title = "t"
program = "l1_compiled.py"
[[steps]]
text = "type orig"
action = "orig"
[steps.done]
command = "orig"
'''


def _write(tmp_path, text: str, name: str = "09_x.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_there_are_eight_lessons_with_their_programs() -> None:
    assert [lesson.number for lesson in LESSONS] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert all(lesson.program.is_file() and lesson.steps for lesson in LESSONS)


@pytest.mark.parametrize("change, reason", [
    (("[steps.done]\ncommand = \"orig\"", "[steps.done]\nrole = \"graph cal\""), "step 1: done: unknown role 'graph cal'"),
    (("command = \"orig\"", "stop = \"brake\""), "step 1: done: unknown stop kind"),
    (("command = \"orig\"", "colour = \"red\""), "step 1: done: unknown key(s) colour"),
    (("action = \"orig\"", "action = \"frobnicate 3\""), "step 1: action 'frobnicate 3': unknown command 'frobnicate'"),
    (("action = \"orig\"", "action = \"until {role:nope}\""), "step 1: action 'until {role:nope}': unknown role"),
    (("action = \"orig\"\n", ""), "step 1: 'action' must be"),
    (("program = \"l1_compiled.py\"", "program = \"missing.py\""), "program 'missing.py' is not in"),
    (("title = \"t\"", "title = 3"), "'title' must be a non-empty string"),
    (("text = \"type orig\"", "text = \"\"\"unclosed"), "not valid TOML"),
    (("action = \"orig\"", "action = \"orig\"\npane = \"sidebar\""), "step 1: 'pane' must be one of bytecode"),
    (("action = \"orig\"", "action = \"orig\"\ncursor = \"{role:nope}\""), "step 1: 'cursor' must be one {role"),
    (("action = \"orig\"", "action = \"orig\"\ncursor = \"until 3\""), "step 1: 'cursor' must be one {role"),
])
def test_a_bad_lesson_file_is_rejected_with_file_step_and_reason(tmp_path, change, reason) -> None:
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(LessonError) as info:
        load_lesson(path)
    assert str(info.value).startswith("09_x.toml: ")
    assert reason in str(info.value)


def test_a_second_step_is_named_by_its_number(tmp_path) -> None:
    text = GOOD + GOOD[GOOD.index("[[steps]]"):].replace("command = \"orig\"",
                                                         "has_instr = [\"LOAD_CONST 'x'\", \"nope\"]")
    with pytest.raises(LessonError, match=r"09_x.toml: step 2: done: unknown role 'nope' in 'has_instr'"):
        load_lesson(_write(tmp_path, text))


def test_a_condition_cannot_match_what_a_command_printed(tmp_path) -> None:
    """`output_contains` is gone from the format: a step's condition reads the engine's state, never the text a
    command printed (wording changes would strand a lesson)."""
    path = _write(tmp_path, GOOD.replace("command = \"orig\"", "command = \"orig\"\noutput_contains = \"x\""))
    with pytest.raises(LessonError, match=r"step 1: done: unknown key\(s\) output_contains"):
        load_lesson(path)
    assert not any("output_contains" in lesson.path.read_text() for lesson in LESSONS)


def test_conditions_hold_only_when_every_part_does() -> None:
    lesson = load_lesson(LESSONS[2].path)
    cond = lesson.steps[1].done  # role graph break + CALL
    assert check(cond, EngineState(stop="step", role="graph break", opname="CALL"))
    assert not check(cond, EngineState(stop="step", role="graph break", opname="PRECALL"))
    assert not check(cond, EngineState(stop="step", role="resume call", opname="CALL"))
    out = next(s.done for s in lesson.steps if s.done.stack_has == ("___stack0",))
    facts = Facts(stack=("list [[], [], 8] ___stack0: value 0 of the original frame's value stack",))
    assert check(out, EngineState(command="stack", facts=facts))
    assert not check(out, EngineState(command="stack", facts=facts, error="boom"))
    assert not check(out, EngineState(command="locals", facts=facts))
    # a claim is checked on the engine's state, not on the command's text
    assert not check(out, EngineState(command="stack", facts=Facts(stack=("8",))))
    assert not check(out, EngineState(command="stack"))


def _done(number: int, command: str):  # noqa: ANN202
    """The condition of lesson `number`'s step that asks for `command`."""
    lesson = next(les for les in LESSONS if les.number == number)
    return next(s.done for s in lesson.steps if s.done.command == command)


#: What the engine reads at lesson 8's trace-break stop (torch 2.x, `normalise` of l3_graph_break.py).
_TRACE_BREAK = Facts(break_type="Unsupported Tensor.item() call with capture_scalar_outputs=False",
                     break_eager="CALL 1 type int", break_resume="normalise")


@pytest.mark.parametrize("wrong", [
    {"break_type": "Unsupported method call"},                 # torch broke the graph for another reason
    {"break_type": None},                                      # no graph break at this stop
    {"break_eager": "CALL 1 type float"},                      # Dynamo runs another call eagerly
    {"break_eager": None},                                     # nothing runs eagerly (the frame gives up)
    {"break_resume": "forward"},                               # the rest of another code goes on
    {"break_resume": None},                                    # no resume function (the frame returns)
])
def test_lesson_8s_why_step_holds_only_for_the_graph_break_its_text_describes(wrong) -> None:
    """"It compiles the graph traced so far, runs the `int(...)` call eagerly, and puts the rest of `normalise`
    in a resume function. torch's message names `Tensor.item()`": checked on the trace stop's `TraceBreak`."""
    from dataclasses import replace

    cond = _done(8, "why")
    assert (cond.break_type, cond.break_eager, cond.break_resume) == ("Tensor.item()", "int", "normalise")
    assert check(cond, EngineState(stop="trace-break", command="why", facts=_TRACE_BREAK))
    assert not check(cond, EngineState(stop="trace-break", command="why", facts=replace(_TRACE_BREAK, **wrong)))
    assert not check(cond, EngineState(stop="trace-break", command="why"))   # no facts read: never done


def test_lesson_8s_stack_and_graph_steps_read_the_symbolic_state() -> None:
    """At the trace stop `stack_has` reads the symbolic stack (``KIND TRACKER for FX node NODE: TEXT``) and
    `graph_has` the FX graph so far (``NAME OP TARGET``); every text a list gives must hold."""
    stack = _done(8, "stack")
    slots = ("null NullVariable: NULL", "unrealized LazyVariableTracker: type int",
             "tensor TensorVariable for FX node sum_1: Tensor[] (0-d) float32 cpu")
    assert check(stack, EngineState(stop="trace-break", command="stack", facts=Facts(stack=slots)))
    # the sum already realized as a constant, not a tracker of an FX node: "standing for an FX node" is false
    assert not check(stack, EngineState(stop="trace-break", command="stack", facts=Facts(
        stack=(slots[0], slots[1], "constant ConstantVariable: 8.0"))))
    # `int` already realized (Dynamo looked at it, and guarded it): "still unrealized" is false
    assert not check(stack, EngineState(stop="trace-break", command="stack", facts=Facts(
        stack=(slots[0], "other BuiltinVariable: int", slots[2]))))
    graph = _done(8, "graph")
    nodes = "l_x_ placeholder L_x_\ny call_function mul\nsum_1 call_method sum"
    assert check(graph, EngineState(stop="trace-break", command="graph", facts=Facts(graph=nodes)))
    # the sum not traced yet (a stop one instruction earlier): the graph does not hold it
    assert not check(graph, EngineState(stop="trace-break", command="graph", facts=Facts(
        graph="l_x_ placeholder L_x_\ny call_function mul")))
    assert not check(graph, EngineState(stop="trace-break", command="graph", facts=Facts(
        graph="l_x_ placeholder L_x_\nsum_1 call_method sum")))


def test_lesson_8s_trace_steps_step_needs_the_recorded_break() -> None:
    """"`trace steps` lists the instructions Dynamo traced in the attempt that broke the graph, `>` on the CALL that
    broke it": the recorded steps hold the break behind this resume function, in the compile of `normalise`."""
    cond = _done(8, "trace")
    assert cond.traced_break == ("normalise", "CALL")
    assert check(cond, EngineState(stop="graph-break", command="trace", facts=Facts(traced_break=("normalise", "CALL"))))
    for other in (None, ("torch_dynamo_resume_in_normalise_at_8", "CALL"), ("normalise", "POP_JUMP_IF_FALSE")):
        assert not check(cond, EngineState(stop="graph-break", command="trace", facts=Facts(traced_break=other)))


def test_the_recorded_break_is_read_only_from_the_attempt_that_traced_it() -> None:
    """`coach._traced_break` (what `traced_break` is checked against): None when the steps `trace steps` lists are
    of another attempt, when they stop before the break, or when no break is behind the stop."""
    from types import SimpleNamespace as NS

    from dynadbg.learn.coach import _traced_break

    traced = NS(compile_id="0/0", attempt=0, ordinal=2)
    stop = NS(graph_break=NS(traced=traced))

    def steps(attempt: int, count: int, depth: int = 0) -> tuple:
        return tuple(NS(compile_id="0/0", attempt=attempt, ordinal=i, depth=depth if i else 0,
                        code_name="normalise" if i == 0 or not depth else "helper",
                        opname="CALL" if i == 2 else "LOAD_FAST") for i in range(count))

    def engine(recorded: tuple) -> object:
        return NS(trace_steps=lambda: recorded)

    assert _traced_break(engine(steps(0, 3)), stop) == ("normalise", "CALL")
    assert _traced_break(engine(steps(0, 3, depth=1)), stop) == ("normalise", "CALL")  # inlined: the compile's code
    assert _traced_break(engine(steps(1, 3)), stop) is None        # the re-trace, not the attempt that broke
    assert _traced_break(engine(steps(0, 2)), stop) is None        # the recorded steps end before the break
    assert _traced_break(engine(steps(0, 3)), NS(graph_break=None)) is None  # not in a resume function
    assert _traced_break(NS(), stop) is None                       # no trace recorder on this engine


def test_lesson_3s_explain_step_is_at_the_eager_call_with_its_operands() -> None:
    """"You are at the instruction Dynamo could not put in a graph ... what it takes off the value stack (the int
    type, and a 0-d tensor: the first graph's output, y.sum()) ... names the tensor: output 0 of the first graph,
    FX node sum_1": the current instruction's role is graph break (the CALL run eagerly) and the stack holds
    both."""
    cond = _done(3, "explain")
    slots = ("[…] ", "[…] ", "NULL ", "<class 'int'> builtins.int ",
             "Tensor[] (0-d) float32 cpu graph_out_0[0] output 0 of __compiled_fn_2 (FX node sum_1)")
    at = {"stop": "step", "command": "explain", "opname": "CALL"}
    assert check(cond, EngineState(role="graph break", facts=Facts(stack=slots), **at))
    assert not check(cond, EngineState(role="graph call", facts=Facts(stack=slots), **at))   # a graph runs here
    assert not check(cond, EngineState(role="resume call", facts=Facts(stack=slots), **at))
    assert not check(cond, EngineState(role="graph break", facts=Facts(stack=slots[:4]), **at))  # no graph output


def test_lesson_7s_ll_step_needs_the_constant_in_the_rebuild_region() -> None:
    """"find the instruction that loads the string: LOAD_CONST 'original', in the region that rebuilds the values to
    return": an instruction of the frame's code is that LOAD_CONST, with the role rebuild."""
    cond = _done(7, "ll")
    assert cond.has_instr == ("LOAD_CONST 'original'", "rebuild")
    found = frozenset({("LOAD_GLOBAL __compiled_fn_1", "graph call"), ("LOAD_CONST 'original'", "rebuild")})
    assert check(cond, EngineState(stop="entry", command="ll", facts=Facts(instrs=found)))
    assert not check(cond, EngineState(stop="entry", command="ll", facts=Facts(instrs=frozenset(
        {("LOAD_CONST 'edited'", "rebuild")}))))                   # the edit is in place: no 'original' left
    assert not check(cond, EngineState(stop="entry", command="ll", facts=Facts(instrs=frozenset(
        {("LOAD_CONST 'original'", "side effect")}))))             # loaded elsewhere than the rebuild region


@pytest.mark.parametrize("number", [3, 5])
def test_lesson_5s_p_history_steps_need_p_history_not_another_p(number) -> None:
    """Lesson 5 steps 3 and 5 ask for `p history`: `p calls` at that stop does not do them, though the engine's
    `history` already holds what the step claims (a tester's `p calls` finished step 5)."""
    step = LESSONS[4].steps[number - 1]
    assert step.action == ("p history",)
    coach = Coach(LESSONS[4])
    coach.index = number - 1
    facts = Facts(values=(step.done.value,))
    for line, done in (("p calls", False), ("p counter.last", False), ("p  history", True)):
        coach.observe_command(line, None)
        state = coach.state_at(None)
        at = EngineState(stop="step", role=step.done.role or "", command=state.command, argument=state.argument,
                         facts=facts)
        assert check(step.done, at) is done, line


def test_an_argument_needs_its_command(tmp_path) -> None:
    path = _write(tmp_path, GOOD.replace("command = \"orig\"", "argument = \"x\""))
    with pytest.raises(LessonError, match="step 1: done: 'argument' needs a 'command'"):
        load_lesson(path)


def test_hints_follow_wrong_moves_and_skip_moves_on(data_dir) -> None:
    lesson = LESSONS[0]
    coach = Coach(lesson, Progress())
    assert coach.hint is None
    coach.advance(EngineState(stop="entry"), move=False)   # the first stop is no move of the learner's
    assert coach.hint is None
    coach.advance(EngineState(stop="entry", command="ll"), looked=True)
    assert coach.hint is None                # a look around (`ll` worked, read only) is no wrong move
    coach.advance(EngineState(stop="entry", command="orig", error="usage: orig"), looked=False)
    assert coach.hint == "`orig` did not work (see its error). " + lesson.steps[0].hints[0]  # a command that failed is
    coach.skip()
    assert coach.index == 1 and coach.skipped == [1] and coach.hint is None
    assert "step 2 of" in coach.narration()


def test_the_first_command_of_a_two_command_step_is_no_wrong_move() -> None:
    lesson = LESSONS[7]                      # step 6: "u; explain"
    coach = Coach(lesson)
    for _ in range(5):
        coach.skip()
    assert coach.step.action == ("u", "explain")
    coach.advance(EngineState(stop="graph-break", command="u"), looked=True)
    assert coach.hint is None and coach.index == 5  # on the way: no hint, the step waits for `explain`
    coach.advance(EngineState(stop="graph-break", command="stack"), looked=True)
    assert coach.hint is None                # a look around is no wrong move either
    coach.advance(EngineState(stop="graph-break", command="b"), looked=True)
    assert coach.hint == "`b` is not this step's command. " + lesson.steps[5].hints[0]  # a command that changes something, not the step's, is one


def test_a_step_the_ended_program_can_no_longer_make_true_says_so_and_skipping_finishes_the_end_step() -> None:
    lesson = LESSONS[0]                      # step 5: `graph` at a stop; step 6: the program has ended
    coach = Coach(lesson)
    for _ in range(4):
        coach.skip()
    assert not coach.stranded and "has ended" not in coach.narration()
    coach.observe_exit()                     # the learner let the program finish first
    assert not coach.advance(coach.state_at(None))
    assert coach.stranded and coach.index == 4
    text = coach.narration()
    assert "The program has ended before this step was done, so it cannot be done in this run." in text
    assert "Type `lesson skip` to skip it" in text and "`dynadbg learn 1` to start the lesson again" in text
    assert "Hint:" not in text               # no hint that asks for a command the ended program cannot take
    coach.skip()                             # step 6 waits for the end, which has come: done at once
    assert coach.finished and coach.skipped == [1, 2, 3, 4, 5] and coach.passed == [6]
    assert coach.stranded_text() is None


def test_a_step_about_a_trace_stop_says_so_once_the_program_runs_on() -> None:
    """Lesson 8's steps 2-3 read Dynamo's state at the trace-break stop: once the learner's `c` took the program on
    to run time, that stop cannot come back; the step says so and how to go on, instead of repeating its hint."""
    lesson = LESSONS[7]
    coach = Coach(lesson)
    facts = Facts(break_type="Unsupported Tensor.item() call with capture_scalar_outputs=False",
                  break_eager="CALL 1 type int", break_resume="normalise")
    coach.advance(EngineState(stop="trace-break", command="why", facts=facts), looked=True)
    assert coach.index == 1 and not coach.stranded
    coach.advance(EngineState(stop="trace-break", command="graph"), looked=True)
    assert not coach.stranded                # still at the trace stop: a wrong move, the step can still be done
    coach.advance(EngineState(stop="graph-break", command="c"))
    assert coach.stranded and coach.index == 1
    text = coach.narration()
    assert "left Dynamo's tracing before this step was done" in text and "Hint:" not in text
    coach.skip()                             # step 3 (`graph` at the trace stop) cannot be done either
    coach.advance(EngineState(stop="graph-break", command="graph"), looked=True)
    assert coach.stranded and coach.index == 2
    coach.skip()                             # step 4 (`c` to the graph-break stop) is about run time
    assert not coach.stranded


def test_a_step_at_the_trace_break_stop_says_so_once_a_step_has_left_it() -> None:
    """Lesson 8 step 1 at 80x24: a newcomer pressed the footer's `s` at the trace-break stop; Dynamo restarted its
    trace and replayed it to the same CALL (a `trace` stop back at the break: `why`, `stack` and `graph` answer
    the same there), and a second `s` left the break behind for good. At the replayed stop the steps still count;
    past it, each says so (first, instead of the hint) and how to go on."""
    lesson = LESSONS[7]
    coach = Coach(lesson)
    coach.advance(EngineState(stop="trace-break", command="stack"), looked=True)
    assert not coach.stranded                # a look around at the right stop
    coach.advance(EngineState(stop="trace", command="s", at_break=True))
    assert not coach.stranded and coach.index == 0
    coach.advance(EngineState(stop="trace", command="s"))   # past the break in the re-trace
    assert coach.stranded and coach.index == 0
    text = coach.narration()
    assert "moved on from the trace-break stop (the status line says trace now: after a graph break Dynamo " \
           "traces the function again" in text and "Hint:" not in text
    assert not coach.step_body().startswith("▶")   # no "Type `why`" row above the note in the TUI
    coach.skip()                             # steps 2 and 3 need that stop too: said at once, no move needed
    assert coach.index == 1 and coach.stranded and "moved on from the trace-break stop" in coach.narration()
    coach.skip()
    coach.skip()                             # step 4 (`c` to the graph-break stop) can be done
    assert coach.index == 3 and not coach.stranded


def test_the_replayed_stop_at_the_break_does_the_break_steps() -> None:
    """The re-trace's stop back at the breaking instruction (`EngineState.at_break`) satisfies a condition on the
    trace-break stop; any other trace stop does not."""
    step = LESSONS[7].steps[1]               # `stack` at the trace-break stop
    assert step.done.stop == ("trace-break",)
    facts = Facts(stack=("tensor TensorVariable for FX node sum_1: x", "unrealized LazyVariableTracker: type int"))
    assert check(step.done, EngineState(stop="trace", command="stack", facts=facts, at_break=True))
    assert not check(step.done, EngineState(stop="trace", command="stack", facts=facts))


def test_a_command_the_step_suggests_on_the_side_is_no_wrong_move() -> None:
    lesson = LESSONS[2]                      # lesson 3, step 3: "Type `explain` ... `stack` shows the same slots"
    coach = Coach(lesson)
    for _ in range(2):
        coach.skip()
    assert "`stack`" in coach.step.text and coach.step.done.command == "explain"
    coach.advance(EngineState(stop="entry", command="stack"), looked=True)
    assert coach.hint is None
    coach.advance(EngineState(stop="entry", command="guards"), looked=True)
    assert coach.hint is None                # nor is a look around
    coach.advance(EngineState(stop="entry", command="guard"), looked=True)
    assert coach.hint is None                # `guard` alone lists the edits: a look too
    coach.advance(EngineState(stop="entry", command="guard", argument="add L['x'].sum() < 5"), looked=True)
    assert coach.hint is not None            # a command that changes something, not the step's, is a wrong move


def test_looking_around_is_no_wrong_move_and_a_wrong_stop_is() -> None:
    lesson = LESSONS[2]                      # step 2: run to the graph break (a stop), step 1: type `ll`
    coach = Coach(lesson)
    coach.advance(EngineState(stop="entry", command="stack"), looked=True)
    assert coach.hint is None                # step 1 asks for `ll`: a look at the stack on the way is fine
    coach.advance(EngineState(stop="entry", command="l"), looked=True)
    assert coach.hint is None                # `l 26, 28` too (a listing that only reads)
    coach.skip()
    coach.advance(EngineState(stop="entry", command="stack"), looked=True)
    assert coach.hint is None                # step 2 wants a stop: a look at the stack is fine
    coach.advance(EngineState(stop="step", role="pre-graph", opname="CALL", command="s"))
    assert coach.hint == lesson.steps[1].hints[0]


def test_progress_persists_and_reset_forgets_it(data_dir, capsys) -> None:
    from dynadbg.cli import main

    progress = Progress()
    progress.save_step(1, 5, 5)
    progress.save_step(2, 1, 4)
    saved = json.loads((data_dir / "learn.json").read_text())
    assert saved == {"steps": {"2": 1}, "done": [1]}
    again = Progress()
    assert again.done == {1} and again.steps == {2: 1} and again.next_lesson([1, 2, 3]) == 2
    assert main(["learn", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "[x] 1. What torch.compile produced" in listing and f"[1/{len(LESSONS[1].steps)}] 2." in listing
    assert main(["learn", "--reset"]) == 0
    assert not (data_dir / "learn.json").exists()
    assert Progress().next_lesson([1, 2, 3]) == 1


def test_the_tui_console_opens_with_the_lesson_list_only_when_the_lesson_was_not_named(data_dir, monkeypatch) -> None:  # noqa: ANN001, ARG001, E501
    """`dynadbg learn 3` opens lesson 3 with an empty console (the list's last row alone, at 80x24, read like a stray
    line); `dynadbg learn` shows the list, ending with the lesson it chose and why."""
    import dynadbg.learn.tui as learn_tui
    from dynadbg.cli import main

    prefaces: list[str] = []
    monkeypatch.setattr(learn_tui, "run_lesson_tui", lambda lesson, progress, preface="": prefaces.append(preface) or 0)
    assert main(["learn", "3", "--tui"]) == 0
    assert main(["learn", "--tui"]) == 0
    named, chosen = prefaces
    assert named == ""
    assert "[ ] 1. What torch.compile produced" in chosen
    assert chosen.splitlines()[-1].startswith("opened lesson 1, the next unfinished one")


def test_the_lesson_list_fits_80_columns_with_each_step_count_whole(data_dir) -> None:  # noqa: ANN001, ARG001
    from dynadbg.learn.progress import lesson_list

    from dataclasses import replace

    # the course's titles fit one row; a long one (a lesson someone adds) goes on a second row, under the title
    long = replace(LESSONS[2], number=9, title="A graph break: the eager instruction, the resume function and more")
    lessons = [*LESSONS, long]
    rows = lesson_list(lessons, Progress(), width=80).splitlines()
    assert all(len(row) < 80 for row in rows), rows
    assert len(rows) == len(lessons) + 1
    text = "\n".join(rows)
    for lesson in lessons:
        assert f"({len(lesson.steps)} steps)" in text  # never split as "(8" / "steps)"
        assert " ".join(text.split()).count(" ".join(lesson.title.split())) == 1


def test_every_lessons_heading_fits_the_narrations_border_at_80_columns_uncut() -> None:
    """A newcomer read "Lesson 6: Dynamic shapes: automatic dynamic and mark_dy… · step 2 of 6" at 80x24: the
    titles are short enough for the border whole, at every step."""
    from dynadbg.tui.narration_view import fitted_title

    for lesson in LESSONS:
        coach = Coach(lesson)
        for _ in lesson.steps:
            assert fitted_title(coach.heading(), 80) == coach.heading(), coach.heading()
            coach.skip()
        assert fitted_title(coach.heading(), 80) == coach.heading()


def test_a_malformed_progress_file_counts_as_none(data_dir) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "learn.json").write_text("{not json")
    progress = Progress()
    assert progress.done == set() and "ignoring unreadable progress file" in progress.warning


def test_an_unknown_lesson_number_is_a_one_line_error(capsys) -> None:
    from dynadbg.cli import main

    assert main(["learn", "99", "--plain"]) == 2
    assert "no lesson 99 (choose from 1, 2, 3, 4, 5, 6, 7, 8)" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path.stem)
def test_every_step_of_every_lesson_plays_on_the_real_engine(lesson, data_dir) -> None:
    """Each step's action, typed at the prompt, makes its condition true; when torch changes what it generates,
    the failure names the lesson file and the step."""
    from dynadbg.learn.plain import run_lesson_plain

    out = io.StringIO()
    start = time.perf_counter()
    run = run_lesson_plain(lesson, Progress(), auto=True, out=out)
    print(f"lesson {lesson.number}: {time.perf_counter() - start:.2f} s")
    assert run.failure is None, run.failure + "\n--- the run's tail:\n" + out.getvalue()[-3000:]
    assert run.passed == [s.number for s in lesson.steps] and run.skipped == []
    assert run.status == 0
    assert lesson.number in Progress().done


@pytest.mark.slow
def test_plain_mode_prints_the_narration_and_lesson_skip_moves_on(data_dir) -> None:
    from dynadbg.learn.plain import run_lesson_plain

    lesson = LESSONS[0]
    out = io.StringIO()
    run = run_lesson_plain(lesson, Progress(), stdin=io.StringIO("ll\nnosuchcommand\nlesson skip\nlesson\nc\n"),
                           out=out)
    text = out.getvalue()
    total = len(lesson.steps)
    assert f"Lesson 1: What torch.compile produced · step 1 of {total}" in text
    assert "Hint: `nosuchcommand` did not work (see its error). Type the four letters `orig`" in text  # a wrong move
    assert f"· step 2 of {total}" in text and run.skipped == [1]
    # `c` let the program end on step 2: the last narration says that step cannot be done now, and the way on
    assert text.rstrip().endswith("or run `dynadbg learn 1` to start the lesson again.")
    assert "The program has ended before this step was done" in text
    assert run.status == 0


def test_plain_mode_lesson_hint_shows_the_steps_next_hint(data_dir) -> None:
    """`lesson hint` (the TUI's F7) shows the step's hint without a wrong move; the narration says how to ask."""
    from dynadbg.learn.plain import run_lesson_plain

    lesson = LESSONS[0]
    out = io.StringIO()
    run_lesson_plain(lesson, Progress(), stdin=io.StringIO("lesson hint\nq\n"), out=out)
    text = out.getvalue()
    assert "type `lesson hint` for a hint" in text
    assert f"Hint: {lesson.steps[0].hints[0]}" in text and "*** usage" not in text


def test_learn_is_in_the_help(capsys) -> None:
    from dynadbg.cli import main

    assert main(["--help"]) == 0
    assert "learn" in capsys.readouterr().out
    assert main(["learn", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--plain" in text and "--reset" in text and "next unfinished" in text


@pytest.mark.slow
def test_learn_opens_the_next_unfinished_lesson(data_dir, capsys) -> None:
    from dynadbg.cli import main

    Progress().save_step(1, 5, 5)
    assert main(["learn", "--auto"]) == 0
    out = capsys.readouterr().out
    assert "[x] 1. What torch.compile produced" in out
    assert "Opening lesson 2: Guards" in out
    assert Progress().done == {1, 2}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path.stem)
def test_every_lessons_first_step_leads_with_what_to_type(lesson) -> None:
    """README: "The narration's first row says what to do (`▶ Type `orig``)" when the text comes to it further
    down, which every first step does (the intro is before it): lessons 2, 3, 5, 6, 7 and 8 had no such row."""
    body = Coach(lesson).step_body()
    first = body.splitlines()[0]
    assert first.startswith("▶ ") and "`" in first, (lesson.path.name, first)
    command = lesson.steps[0].action[0].split()[0]
    assert f"`{command}" in first, (lesson.path.name, first)


def test_the_narration_leads_with_what_to_do_when_the_text_does_not() -> None:
    """At 80×24 the narration shows six rows; lesson 1's first step reached "type `orig`" only after its intro,
    lesson 3's step 4 after two sentences. `todo_line` is the instruction, shown first; None when the text
    already starts with it."""
    from dynadbg.learn.coach import todo_line

    lessons = {lesson.number: lesson for lesson in LESSONS}
    first = lessons[1].intro + "\n\n" + lessons[1].steps[0].text
    assert todo_line(first) == "Type `orig`"
    assert todo_line(lessons[3].steps[3].text) == "Type `until IDX`"
    assert todo_line(lessons[4].steps[2].text) == "Choose `eager`"
    assert todo_line(lessons[8].steps[0].text) is None          # "Type `why`: ..." starts with it
    assert todo_line("Nothing to type here.") is None


@pytest.mark.slow
def test_lesson_7s_claims_hold_in_what_the_program_prints(data_dir, capsys) -> None:  # noqa: ARG001
    """Lesson 7's last step tells the learner to compare the printed tags: call 1 ran the edited code and says
    'edited', calls 0 and 2 say 'original' (the edit applies from the next call; `patch undo` takes it back from
    the call after). Played step by step on the real engine, the program's own prints say just that."""
    from dynadbg.learn.plain import run_lesson_plain

    (lesson,) = [lesson for lesson in LESSONS if lesson.number == 7]
    assert "call 1 says 'edited', calls 0 and 2 'original'" in lesson.steps[-1].text.replace("\\\n", "")
    run = run_lesson_plain(lesson, Progress(), auto=True, out=io.StringIO())
    assert run.failure is None and run.status == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("call ")]
    assert [line.split(",")[0] for line in printed] == [
        "call 0: tag = 'original'", "call 1: tag = 'edited'", "call 2: tag = 'original'"]


def test_the_role_letters_a_lesson_names_are_the_bytecode_panes() -> None:
    """The narration names a role by `ll`'s tag and by the letter the TUI's bytecode gutter shows for it ("role
    `g-call` in `ll`, letter G"): each pair is one role (the gutter shows letters, not `ll`'s words)."""
    import re

    from dynadbg.core.format.teach import ROLE_TAGS
    from dynadbg.tui.role_sections import ROLE_MARKS

    by_tag = {tag: role for role, tag in ROLE_TAGS.items()}
    pairs = []
    for lesson in LESSONS:
        for step in lesson.steps:
            text = " ".join([step.text, *step.hints])
            pairs += [(lesson.number, tag, letter) for tag, letter in
                      re.findall(r"role `([\w-]+)`(?: in `ll`)?, letter ([A-Za-z])\b", text)]
            pairs += [(lesson.number, tag, letter) for letter, tag in
                      re.findall(r"\b([A-Za-z]) for ([\w-]+)\b", text) if tag in by_tag]
    assert {n for n, _, _ in pairs} >= {1, 3, 5}, pairs
    for number, tag, letter in pairs:
        assert ROLE_MARKS[by_tag[tag]][0] == letter, (number, tag, letter)


@pytest.mark.slow
def test_what_the_lessons_say_of_names_on_screen_holds_on_the_engine(capsys) -> None:
    """The sentences lessons 2, 3, 4 and 6 add for names a newcomer met unexplained, checked on what the engine
    shows for the lesson's own program: the guards on torch's state and the accessor (lesson 2), what the numbers
    of __resume_at_76_3 are (lesson 3), CONSTANT_MATCH in the drop choice and the guard cost's timing (lesson 4),
    the symbol as the graph's first input, the second entry's size-free TENSOR_MATCH and range check (lesson 6)."""
    import re

    from dynadbg.cli import main
    from dynadbg.learn.lessons import PROGRAM_DIR

    def run(program: str, commands: str) -> str:
        main(["run", "--plain", "-c", commands, str(PROGRAM_DIR / program)])
        return capsys.readouterr().out

    lessons = {lesson.number: lesson for lesson in LESSONS}
    guards = run("l2_guards.py", "guards")
    for name in ("GLOBAL_STATE", "TORCH_FUNCTION_MODE_STACK", "DEFAULT_DEVICE", "LAMBDA_GUARD",
                 "FrameLocalsGuardAccessor"):
        assert name in lessons[2].steps[0].text and re.search(rf"\b{name}\b", guards), name
    # in a process of its own, as a lesson's program runs (Dynamo's counter is the process's)
    import sys

    listing = python(["-m", "dynadbg", "run", "--plain", "-c", "orig; ll",
                     str(PROGRAM_DIR / "l3_graph_break.py")], timeout=300).stdout
    offset, number = re.search(r"__resume_at_(\d+)_(\d+)", listing).groups()
    text = lessons[3].steps[3].text
    # the names are Python's: the lesson gives 3.11's and reads the pattern for the others
    assert "__resume_at_O_N" in text and "O is the offset" in text and "no graph gets the number N" in text
    if sys.version_info[:2] == (3, 11):
        assert f"__resume_at_{offset}_{number} on Python 3.11" in text, listing
    assert re.search(rf"^\s+\d+\s+{offset}\s+L8\s+STORE_FAST\s+total$", listing, re.M), listing  # `orig`'s row
    graphs = {int(n) for n in re.findall(r"__compiled_fn_(\d+)", listing)}
    assert graphs and int(number) not in graphs
    recompile = run("l4_recompile.py", "c; c; entries")
    assert 'e.guard_type == "CONSTANT_MATCH"' in recompile and "EQUALS_MATCH" in recompile   # lesson 4 step 3
    assert "CONSTANT_MATCH" in lessons[4].steps[2].text
    assert "timed by torch right after compiling, caches cold" in recompile and "cold caches" in lessons[4].steps[4].text
    dynamic = run("l6_dynamic.py", "c; recompile; guards; graph")
    assert re.search(r"forward\(self, s\d+ : torch\.SymInt", dynamic) and "the graph's first input" in lessons[6].outro
    second = dynamic[re.search(r"guards of \d+/1:", dynamic).start():]  # the second entry's
    for claim in ("size=[None]", "2 <= L['x'].size()[0]"):
        assert claim in second and claim in lessons[6].outro, claim


def test_a_step_about_fewer_cache_entries_is_stranded_once_there_are_more() -> None:
    """Lesson 4 step 3 asks for `eager` at the recompile stop (1 entry). A newcomer pressed R instead: a second
    entry was compiled, the stop never came back, and the hint kept saying "Type `eager`" until the program ended.
    Now the step says at once that it cannot be done, and how to go on."""
    coach = Coach(LESSONS[3])
    coach.skip()
    coach.skip()
    assert coach.step.done.entries == 1 and coach.step.done.command == "eager"
    coach.advance(EngineState(stop="recompile", command="why", facts=Facts(entries=1)), looked=True)
    assert not coach.stranded
    coach.advance(EngineState(stop="entry", command="recompile", facts=Facts(entries=2)))
    assert coach.stranded
    assert "had 1 cache entry, and it has 2 now" in coach.narration()
    coach.skip()                              # step 4 (2 entries) is not stranded by what step 3 saw
    assert not coach.stranded


def test_skipping_a_step_types_what_moves_the_program() -> None:
    """F8 / `lesson skip` moved the narration but not the program: after skipping lesson 1's `until` step the next
    step described a stop that was not on screen. `Coach.catch_up` names the skipped step's commands that move the
    program; none when the step only looks, when it can no longer be done, or when the program is already where the
    step's stop would take it."""
    lesson1, lesson8 = LESSONS[0], LESSONS[7]
    coach = Coach(lesson1)
    state = EngineState(stop="entry", code_name="scaled_sin", index=1, opname="LOAD_GLOBAL")
    assert coach.catch_up(state) == ()                       # `orig` only looks
    coach.skip()
    coach.skip()
    assert coach.catch_up(state) == ("until {role:graph call:CALL}",)
    coach = Coach(lesson8)
    for _ in range(3):
        coach.skip()
    assert coach.catch_up(EngineState(stop="trace-break")) == ("c",)
    # already at the graph-break stop in the resume function: `c` would run the program to its end
    assert coach.catch_up(EngineState(stop="graph-break", code_name="torch_dynamo_resume_in_normalise_at_8",
                                      index=1, opname="LOAD_GLOBAL")) == ()
    coach = Coach(LESSONS[3])
    coach.skip()
    coach.skip()
    assert coach.catch_up(EngineState(stop="recompile")) == ("eager",)   # a decision: typed at the stop it is for
    # lesson 7's `c` to the next call: call 0's entry stop is an entry stop too, but its code is not the edited one
    from dynadbg.learn.coach import Facts

    coach = Coach(LESSONS[6])
    for _ in range(3):
        coach.skip()
    call0 = Facts(instrs=frozenset({("LOAD_CONST 'original'", "rebuild")}))
    call1 = Facts(instrs=frozenset({("LOAD_CONST 'edited'", "rebuild")}))
    assert coach.catch_up(EngineState(stop="entry", code_name="label", index=1, facts=call0)) == ("c",)
    assert coach.catch_up(EngineState(stop="entry", code_name="label", index=1, facts=call1)) == ()
    coach.advance(EngineState(stop="entry", command="guards", facts=call0), looked=True)
    assert coach.index == 3                       # a look at call 0 is not the next call


def test_lesson_n_shows_a_finished_steps_text_again() -> None:
    """A newcomer could not reread a step once it was done (its text left the narration): `lesson N` shows it."""
    coach = Coach(LESSONS[0])
    coach.advance(EngineState(stop="entry", command="orig"), looked=True)
    assert coach.passed == [1]
    text = coach.step_text(1)
    assert text.startswith("Lesson 1, step 1 of 6 (done):") and "type `orig`" in text
    assert "(current)" in coach.step_text(2) and "(to come)" in coach.step_text(3)
    assert coach.step_text(0) is None and coach.step_text(7) is None
    out = io.StringIO()
    from dynadbg.learn.plain import _lesson_command
    _lesson_command(coach, "lesson 1", out)
    assert "(done):" in out.getvalue()
    _lesson_command(coach, "lesson 9", out)
    assert "lesson N (step N's text, 1-6)" in out.getvalue()


def test_lesson_7_counts_only_the_edit_and_the_undos_it_describes() -> None:
    """A newcomer's `edit 25 LOAD_CONST 'edited'` (row 25 loads the subscript 0) was installed, then the right edit
    passed step 2 with both installed, `patch show` at step 6 drew a hint, and the crash at the end (status 1)
    finished the lesson as done."""
    from dynadbg.learn.coach import Facts

    lesson = LESSONS[6]
    coach = Coach(lesson)
    coach.skip()
    wrong = Facts(diff=(("-", "LOAD_CONST 0"), ("+", "LOAD_CONST 'edited'")))
    both = Facts(diff=(("-", "LOAD_CONST 0"), ("+", "LOAD_CONST 'edited'"), ("-", "LOAD_CONST 'original'"),
                       ("+", "LOAD_CONST 'edited'")))
    right = Facts(diff=(("-", "LOAD_CONST 'original'"), ("+", "LOAD_CONST 'edited'")))
    coach.advance(EngineState(stop="entry", command="edit", argument="25 LOAD_CONST 'edited'", facts=wrong),
                  looked=True)
    assert coach.index == 1
    assert coach.hint.startswith("`edit 25 LOAD_CONST 'edited'` ran, but this step needs: the edited code has "
                                 "LOAD_CONST 'edited' where Dynamo's had LOAD_CONST 'original', and no other change")
    # the hint says "`patch undo` takes it back": doing so is no wrong move (it was "not this step's command")
    coach.advance(EngineState(stop="entry", command="patch", argument="undo", facts=Facts()), looked=True)
    assert coach.index == 1 and "not this step's command" not in coach.hint
    coach.advance(EngineState(stop="entry", command="edit", argument="27 LOAD_CONST 'edited'", facts=both),
                  looked=True)
    assert coach.index == 1
    coach.advance(EngineState(stop="entry", command="edit", argument="27 LOAD_CONST 'edited'", facts=right),
                  looked=True)
    assert coach.index == 2
    coach.advance(EngineState(stop="entry", command="guard", argument="add L['x'].sum() < 10"), looked=True)
    assert coach.index == 2                       # not the guard the later steps are about
    coach.advance(EngineState(stop="entry", command="guard", argument="add L['x'].sum() < 100"), looked=True)
    coach.skip()                                  # step 4: `c`
    coach.advance(EngineState(stop="entry", command="patch", argument="show"), looked=True)
    assert coach.index == 4 and coach.hint is None   # a look: neither done nor a wrong move
    coach.advance(EngineState(stop="entry", command="patch", argument="undo"), looked=True)
    coach.advance(EngineState(stop="entry", command="patch", argument="show"), looked=True)
    assert coach.index == 5 and coach.hint is None
    coach.advance(EngineState(stop="entry", command="guard", argument="undo"), looked=True)
    assert coach.index == 6
    coach.observe_exit(1)
    coach.advance(coach.state_at(None))
    assert not coach.finished and coach.stranded
    assert "The program ended with an error (exit status 1" in coach.narration()


def test_eager_where_a_step_asks_to_compile_strands_the_step_at_once() -> None:
    """Lesson 6 step 3 asks for `recompile` (size 3); a newcomer pressed E: size 3 ran eagerly, the next call (size
    4) stopped at a recompile stop, and after `recompile` there the lesson went on saying "size 4 reuses this
    entry" (it had compiled it). Now the step says at once that this run no longer matches."""
    coach = Coach(LESSONS[5])
    coach.skip()
    coach.skip()
    assert coach.step.action == ("recompile",)
    coach.advance(EngineState(stop="recompile", command="eager"))
    assert coach.stranded and "you chose `eager` at the recompile stop" in coach.narration()
    # F8 there types the step's `recompile` at the next call's recompile stop (a newcomer's F8 typed nothing and
    # step 4's SymInt graph could not come)
    assert coach.catch_up(EngineState(stop="recompile", command="eager")) == ("recompile",)
    coach.skip()
    assert not coach.stranded
    coach = Coach(LESSONS[5])
    coach.skip()
    coach.skip()
    coach.advance(EngineState(stop="entry", command="dynamic", argument="x 0", facts=Facts(entries=2)))
    assert coach.index == 3                    # another decision that compiles does the step


def test_the_steps_own_command_where_its_condition_fails_says_which_part_fails() -> None:
    """Lesson 6 after `skip` at the recompile stop and F8: the program is in triple, and step 4's `graph` showed
    triple's SymInt graph; it was taken as double's, then (once the step named double) drew no hint at all, the
    command being the step's own and a look. Now it is a wrong move whose hint names the part that fails."""
    from dynadbg.learn.coach import Facts

    coach = Coach(LESSONS[5])
    for _ in range(3):
        coach.skip()
    coach.advance(EngineState(stop="entry", code_name="triple", index=1, command="graph",
                              facts=Facts(graph="s77: torch.SymInt")), looked=True)
    assert coach.index == 3
    assert coach.hint.startswith("`graph` ran, but this step needs: the frame's code name contains 'double' (the "
                                 "program is in triple now).")
    coach.advance(EngineState(stop="entry", code_name="double", index=1, command="graph",
                              facts=Facts(graph="s77: torch.SymInt")), looked=True)
    assert coach.index == 4


def test_a_step_about_code_the_program_has_left_for_a_later_steps_code_is_stranded() -> None:
    """Lesson 6 after `skip` at double's recompile stop and F8: the program is in triple (step 5's code); step 4
    asked for `graph` "at double's new entry", which can no longer come. It says so, and F8 types nothing."""
    coach = Coach(LESSONS[5])
    for _ in range(3):
        coach.skip()
    triple = EngineState(stop="entry", code_name="triple", index=1, opname="LOAD_GLOBAL")
    coach.advance(triple, move=False)
    assert coach.stranded and coach.catch_up(triple) == ()
    assert "it is about double, and the program has gone on to triple, which a later step is about" in \
        coach.narration()
    # the skip: step 5 (continue to triple) is done by where the program is, and the front ends say so
    coach.skip()
    coach.advance(triple, move=False)
    assert coach.index == 5 and coach.caught_up == [5]
    # at double (the normal path) step 4 is not stranded
    coach = Coach(LESSONS[5])
    for _ in range(3):
        coach.skip()
    coach.advance(EngineState(stop="entry", code_name="double", index=1, opname="LOAD_GLOBAL"), move=False)
    assert not coach.stranded


def test_the_outro_after_skipped_steps_says_which_ones_this_run_did_not_show() -> None:
    coach = Coach(LESSONS[2])
    for _ in LESSONS[2].steps:
        coach.skip()
    assert coach.finished
    body = coach.step_body()
    assert body.startswith("(You skipped steps 1, 2, 3, 4, 5, 6, 7, 8: what the summary below says of them is the "
                           "lesson's story, not what this run showed; `dynadbg learn 3` plays the lesson again.)")
    assert body.endswith(LESSONS[2].outro) and body.split("\n", 1)[1] in coach.narration()
    coach = Coach(LESSONS[0])
    coach.index = len(LESSONS[0].steps)
    assert coach.step_body() == LESSONS[0].outro


def test_after_a_tui_lesson_a_line_says_where_it_stands(data_dir) -> None:
    """The lesson list printed before the TUI opened still showed the finished lesson unticked after leaving it."""
    from dynadbg.learn.cli import _where_now

    progress = Progress()
    lesson = LESSONS[4]
    progress.save_step(lesson.number, 2, len(lesson.steps))
    assert _where_now(lesson, Progress()).startswith(f"Lesson 5 left at step 3 of {len(lesson.steps)} (progress saved)")
    progress.save_step(lesson.number, len(lesson.steps), len(lesson.steps))
    assert _where_now(lesson, Progress()).startswith("Lesson 5 finished (progress saved).")


def test_a_step_whose_command_leads_where_the_program_already_is_is_done_by_a_skip() -> None:
    """Lesson 4: `R` at step 3 (which wanted `E`), then F8: step 4 (`recompile` to the second entry) looped — its
    hint said type `recompile`, which failed ("only at a recompile stop"), and F8 typed it too. The program is
    already at the second entry's code: the skip's check counts step 4, and nothing is typed."""
    coach = Coach(LESSONS[3])
    coach.skip()
    coach.skip()
    there = EngineState(stop="entry", code_name="scale", index=1, opname="LOAD_GLOBAL", facts=Facts(entries=2))
    coach.advance(EngineState(stop="entry", command="recompile", facts=Facts(entries=2)))
    assert coach.stranded
    coach.skip()
    assert coach.step.done.command == "recompile" and coach.catch_up(there) == ()
    assert coach.advance(there, move=False) and coach.index == 4 and coach.caught_up == [4]


def test_a_look_at_an_instruction_the_program_has_gone_past_is_stranded() -> None:
    """Lesson 3 step 3 (`explain` at the graph-break CALL): a newcomer's `s` moved to the next instruction; the
    hint said type `explain` (which then explained BUILD_LIST) in a loop. Now the step says it is past."""
    coach = Coach(LESSONS[2])
    coach.skip()
    coach.skip()
    assert coach.step.done.role == "graph break" and coach.step.done.command == "explain"
    coach.advance(EngineState(stop="step", code_name="normalise", index=52, opname="BUILD_LIST", role="resume call",
                              command="s", role_rows=(51,)))
    assert coach.stranded
    assert "it is about the instruction at index 51 (role graph break), and the program has gone past it" in \
        coach.narration()
    coach = Coach(LESSONS[2])
    coach.skip()
    coach.skip()
    coach.advance(EngineState(stop="step", code_name="normalise", index=40, opname="LOAD_FAST", role="graph call",
                              command="s", role_rows=(51,)))
    assert not coach.stranded                 # before it: `until 51` still gets there


def test_a_stop_in_code_called_after_the_steps_rows_strands_it() -> None:
    """Lesson 3 step 2 (`until` the graph-break CALL): a newcomer's F5 ran into the resume function, called from
    after the break; the hints kept saying `until 51` (an index of the other code: "outside 0..39"), and F8 printed
    `until {role:graph break:CALL}` unfilled. Now the step is stranded at that stop, naming the code it was about."""
    coach = Coach(LESSONS[2])
    coach.skip()
    assert coach.step.done.role == "graph break" and not coach.step.done.command
    coach.advance(EngineState(stop="entry", code_name="__compiled_normalise", index=0, opname="RESUME",
                              role_rows=(49, 50, 51), role_map=(("graph break", (49, 50, 51)),)), move=False)
    assert not coach.stranded
    coach.advance(EngineState(stop="entry", code_name="torch_dynamo_resume_in_normalise_at_8", index=0,
                              opname="RESUME", outer=(("__compiled_normalise", 112),)))
    assert coach.stranded and coach.catch_up(EngineState(stop="entry")) == ()
    said = coach.narration()
    assert "index 51 of __compiled_normalise (role graph break), and the program has gone past it" in said
    assert "called the code the program is in now from that instruction or a later one" in said
    # called from before the rows (a helper's call in a prologue, say): the step can still be done
    coach = Coach(LESSONS[2])
    coach.skip()
    coach.advance(EngineState(stop="entry", code_name="__compiled_normalise", index=0, role_rows=(49, 50, 51),
                              role_map=(("graph break", (49, 50, 51)),)), move=False)
    coach.advance(EngineState(stop="entry", code_name="helper", index=0, outer=(("__compiled_normalise", 20),)))
    assert not coach.stranded


def test_a_step_before_a_role_is_stranded_once_the_program_passes_it() -> None:
    """Lesson 3 step 6 (`s` into the resume function): F10 stepped over the resume call, and the hint "Type `s`"
    ran the program to its end. `before = "resume call"`: past the resume call's rows, the step is stranded."""
    coach = Coach(LESSONS[2])
    for _ in range(5):
        coach.skip()
    assert coach.step.done.before == "resume call"
    at_call = EngineState(stop="step", code_name="__compiled_normalise", index=112, opname="CALL_FUNCTION_EX",
                          role="resume call", role_rows=(100, 112))
    coach.advance(at_call, move=False)
    assert not coach.stranded
    coach.advance(EngineState(stop="step", code_name="__compiled_normalise", index=113, opname="RETURN_VALUE",
                              role="return", command="n", role_rows=(100, 112)))
    assert coach.stranded and "index 112 (role resume call)" in coach.narration()
    # stepped into the resume function as asked: done (its outer frame is at the call, not past it)
    coach = Coach(LESSONS[2])
    for _ in range(5):
        coach.skip()
    coach.advance(at_call, move=False)
    assert coach.advance(EngineState(stop="step", code_name="torch_dynamo_resume_in_normalise_at_8", index=0,
                                     opname="RESUME", command="s", outer=(("__compiled_normalise", 112),)))


def test_lesson_1_s_stack_after_the_graph_call_is_stranded_not_done() -> None:
    """Lesson 1 step 4 says the stack holds what the graph's CALL is about to use: a newcomer one instruction past
    it typed `stack` (the graph's output tuple) and the step passed."""
    coach = Coach(LESSONS[0])
    for _ in range(3):
        coach.skip()
    assert coach.step.done.command == "stack"
    past = EngineState(stop="step", code_name="forward", index=20, opname="STORE_FAST", role="graph output",
                       command="stack", role_rows=(19,),
                       facts=Facts(stack=("(Tensor[3] float32 cpu,) tuple",)))
    assert not coach.advance(past)
    assert coach.stranded


def test_a_placeholder_is_said_in_words() -> None:
    from dynadbg.learn.coach import spoken

    assert spoken("until {role:graph break:CALL}") == "until <the graph break CALL>"
    assert spoken("until {role:side effect}") == "until <the first side effect instruction>"
    assert spoken("b {instr:LOAD_CONST 'x'}") == "b <the LOAD_CONST 'x'>"
