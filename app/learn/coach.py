"""The coach: follows one lesson while the learner debugs its program, and says when a step is done.

A step is done when the engine's state satisfies the step's condition (`lessons.Condition`): the stop kind, the
role of the current instruction (`Engine.roles`), the last command and whether it worked, and what the step's
text claims about Dynamo (the entry count, a guard's type on a source, the failing guard and its values, what the
FX graph holds, an instruction's role, a value-stack slot, a value, what Dynamo does with a graph break it found
while tracing, what the recorded trace holds): each claim is read off the engine, so a torch that behaves
otherwise fails the lesson's test, not the learner. No condition reads the text a command printed.
`Coach.snapshot` reads that state through the engine's typed methods (the claims only when the current step makes
them); call it where engine calls may block (the plain front end's main thread, or the TUI's engine-call thread),
never on the TUI's UI thread. `check` is pure.

Front ends call `observe_command` after each command, `observe_exit` when the program ends, then `advance`
with a fresh snapshot; `narration` is the text to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from dynadbg.core import commands as cmd
from dynadbg.core.model import CodeRoles, EngineError, Stop

from .lessons import Condition, Lesson, Step
from .progress import Progress


@dataclass(frozen=True)
class EngineState:
    """What a condition is checked against (read by `Coach.snapshot`).

    Attributes:
        stop: the stop kind's value (``"entry"``), None while running or after the end.
        code_name: the selected frame's code name, "" outside a frame.
        index: the current instruction's index, -1 outside a frame.
        opname: the current instruction's opname, "".
        role: the current instruction's role value (``"graph call"``), "" when unknown.
        command: the last command's verb (aliases resolved), None before the first.
        argument: what followed its verb, whitespace collapsed ("" when nothing did).
        error: its error line, or None.
        exited: the program has ended.
        status: its exit status once it has (None before); a condition ``exited = true`` needs 0.
        at_break: a trace stop in the re-trace after a graph break's restart, back at the breaking instruction
            (`TraceStopView.at_restart_point`): what the trace-break stop showed (the break, the symbolic stack,
            the graph so far) holds here too, so a condition on the ``trace-break`` stop accepts it.
        role_rows: the indexes of the selected frame's instructions with the current step's `Condition.role`
            (or `Condition.before`; read only for a step that names one), to tell when the program has gone past
            them.
        outer: (code name, instruction index) of each frame the selected one was called from, innermost first:
            a frame that called out after the step's role rows has gone past them too (lesson 3: F5 at the
            graph-break step runs into the resume function, called from after the break).
        role_map: (role value, indexes) of every role of the selected frame's generated code (empty outside one,
            or when its roles are not known): what `Coach` remembers of each code object it has seen, for steps
            that come later.
    """

    stop: str | None = None
    code_name: str = ""
    index: int = -1
    opname: str = ""
    role: str = ""
    command: str | None = None
    error: str | None = None
    exited: bool = False
    status: int | None = None
    facts: "Facts | None" = None
    argument: str = ""
    at_break: bool = False
    role_rows: tuple[int, ...] = ()
    outer: tuple[tuple[str, int], ...] = ()
    role_map: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class Facts:
    """What a step's claims are checked against (read by `Coach.snapshot` only when the step makes claims).

    Attributes:
        entries: cache entries of the code object in front of the learner (the frame's, or the one that missed
            at a recompile stop), None when unknown.
        guards: (source, guard type) of every leaf of the guard tree of the entry serving the selected frame.
        failing: at a recompile stop, (source, guard type, expected, actual) of each failing guard of the most
            recently used entry.
        graph: the code of the FX graph(s) the selected frame's entry calls, joined; at a trace stop, the FX graph
            traced so far, one ``NAME OP TARGET`` row per node.
        roles: the role values of the selected frame's instructions.
        instrs: (``OPNAME argrepr``, role value) of the selected frame's instructions.
        stack: per value-stack slot, its summary and what it stands for (provenance), joined; at a trace stop, per
            symbolic slot ``KIND TRACKER for FX node NODE: TEXT`` (no ``for FX node`` part without a node).
        values: expression -> `p` text, for the expressions the step asks about.
        break_type, break_eager, break_resume: at a trace stop with a graph break, torch's graph-break type, the
            instruction Dynamo runs eagerly and what it calls (``CALL 1 type int``), and the code whose rest goes
            to a resume function (`model.EmitPlan`); None when there is none.
        diff: (tag, ``OPNAME argrepr``) of each row only one side of the selected code's instruction edits has
            (`Engine.patch_diff`: ``-`` Dynamo's, ``+`` the edited code's); () before any edit.
        traced_break: at a run-time stop in a resume function, (code name of the compile, opname) of the
            breaking instruction, when the recorded trace (`Engine.trace_steps`, what ``trace steps`` lists)
            holds the attempt that traced the break behind it, that instruction among its steps; else None.
    """

    entries: int | None = None
    guards: frozenset[tuple[str, str]] = frozenset()
    failing: tuple[tuple[str, str, str | None, str | None], ...] = ()
    graph: str = ""
    roles: frozenset[str] = frozenset()
    instrs: frozenset[tuple[str, str]] = frozenset()
    stack: tuple[str, ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    break_type: str | None = None
    break_eager: str | None = None
    break_resume: str | None = None
    traced_break: tuple[str, str] | None = None
    diff: tuple[tuple[str, str], ...] = ()


def _claims_hold(cond: Condition, facts: Facts | None) -> bool:
    if not cond.claims:
        return True
    if facts is None:
        return False
    if cond.entries is not None and facts.entries != cond.entries:
        return False
    if cond.guard is not None and cond.guard not in facts.guards:
        return False
    if cond.no_guard is not None and cond.no_guard in facts.guards:
        return False
    if cond.failing is not None or cond.failing_values is not None:
        hits = [f for f in facts.failing if cond.failing is None or f[:2] == cond.failing]
        if not hits:
            return False
        if cond.failing_values is not None and not any(f[2:] == cond.failing_values for f in hits):
            return False
    if cond.graph_has is not None and not all(text in facts.graph for text in cond.graph_has):
        return False
    if cond.has_role is not None and cond.has_role not in facts.roles:
        return False
    if cond.has_instr is not None and not any(cond.has_instr[0] in text and role == cond.has_instr[1]
                                              for text, role in facts.instrs):
        return False
    if cond.stack_has is not None and not all(any(text in slot for slot in facts.stack)
                                              for text in cond.stack_has):
        return False
    if cond.break_type is not None and cond.break_type not in (facts.break_type or ""):
        return False
    if cond.break_eager is not None and cond.break_eager not in (facts.break_eager or ""):
        return False
    if cond.break_resume is not None and cond.break_resume != facts.break_resume:
        return False
    if cond.traced_break is not None and cond.traced_break != facts.traced_break:
        return False
    if cond.replaced is not None:
        # that row replaced, and nothing else: an edit of another row too is not what the step describes
        old = [text for tag, text in facts.diff if tag == "-"]
        new = [text for tag, text in facts.diff if tag == "+"]
        if not (old and new and all(cond.replaced[0] in t for t in old) and all(cond.replaced[1] in t for t in new)):
            return False
    return cond.value is None or cond.value in facts.values


def check(cond: Condition, state: EngineState) -> bool:
    """Whether `state` satisfies every part of `cond` (its claims included)."""
    if not _claims_hold(cond, state.facts):
        return False
    if cond.exited is not None and cond.exited != state.exited:
        return False
    if cond.exited and state.status not in (0, None):
        return False  # it ended with an error: what the step says of a finished run is not so
    if cond.stop is not None and state.stop not in cond.stop and not (state.at_break and "trace-break" in cond.stop):
        return False
    if cond.role is not None and state.role != cond.role:
        return False
    if cond.opname is not None and not state.opname.startswith(cond.opname):
        return False
    if cond.code_contains is not None and cond.code_contains not in state.code_name:
        return False
    if cond.argument is not None and state.argument != cond.argument:
        return False
    return cond.command is None or (state.command == cond.command and state.error is None)


#: Commands that only look (`commands.READ_ONLY`, and `l`, `p`, `fake`, `trace`, `u` and `d`): one that
#: worked is never a wrong move, whatever the step asks for.
LOOKS: frozenset[str] = cmd.READ_ONLY | {"l", "p", "fake", "trace", "u", "d"}
#: A verb's sub-commands that only look (``patch show``; ``guard`` alone lists the edits): no wrong move either.
LOOKING_SUBCOMMANDS: frozenset[tuple[str, str]] = frozenset({("patch", "show"), ("patch", "list"), ("patch", ""),
                                                            ("guard", ""), ("guard", "export")})


def is_look(verb: str | None, argument: str = "") -> bool:
    """Whether the command `verb` `argument` only looks (`LOOKS`, `LOOKING_SUBCOMMANDS`)."""
    return verb in LOOKS or (verb, argument.split(" ", 1)[0]) in LOOKING_SUBCOMMANDS


#: The sentence part of a step's text that says what to do: an imperative up to its first command in backticks
#: ("Type `why`", "Run to the graph-break instruction: type `until IDX`", "Continue with `c`").
_TODO = re.compile(r"(?:^|(?<=\n)|(?<=[.)?!:]\s))((?:Now |This time |First |Then )?"
                   r"(?:[Tt]ype|Continue|Run|Step|Undo|Replace|Add|Let|[Cc]hoose)\b[^`.]*?`[^`]+`)")


def todo_line(text: str) -> str | None:
    """What `text` (a step's narration, with the lesson's intro before it on the first step) asks the learner to
    do, when that is not where the text begins: ``"Type `orig`"``; None when the text starts with it or has none.
    At 80×24 the narration shows six rows, and the instruction often came after them."""
    match = _TODO.search(text)
    if match is None or match.start() == 0:
        return None
    todo = match.group(1)
    return todo[0].upper() + todo[1:]


def leading_todo(body: str) -> tuple[int, str] | None:
    """Where the instruction `body` (a step's narration, `Coach.step_body`) opens with ends, and the command in its
    backticks: ``"Type `p history` again: ..."`` -> (16, ``"p history"``); the ``▶ `` row counts as the opening.
    None when the body does not open with one."""
    start = 2 if body.startswith("▶ ") else 0
    match = _TODO.match(body[start:])
    if match is None:
        return None
    return start + match.end(), match.group(1).rsplit("`", 2)[1]


def argument_of(line: str) -> str:
    """What follows the command verb of `line`, whitespace collapsed (``"p  history"`` → ``"history"``)."""
    parts = line.strip().split(None, 1)
    return " ".join(parts[1].split()) if len(parts) > 1 else ""


def verb_of(line: str) -> str | None:
    """The command verb of a line (aliases resolved), None for an empty line."""
    parts = cmd.split(line)
    return parts[0] if parts else None


_PLACEHOLDER = re.compile(r"\{(role|instr):([^{}]*)\}")


def spoken(command: str) -> str:
    """`command` with its placeholders in words, for a sentence: ``until {role:graph break:CALL}`` ->
    ``until <the graph break CALL>``; ``{instr:LOAD_CONST 'x'}`` -> ``<the LOAD_CONST 'x'>``."""

    def words(match: re.Match[str]) -> str:
        kind, what = match.groups()
        if kind == "role":
            role, _, opname = what.partition(":")
            return f"<the {role} {opname}>" if opname else f"<the first {role} instruction>"
        return f"<the {what}>"

    return _PLACEHOLDER.sub(words, command)


def resolve_action(engine: object, command: str, forward: bool = False) -> str:
    """`command` with its ``{role:...}`` / ``{instr:...}`` placeholders replaced by instruction indexes of the
    selected frame's code (first match at or after the current instruction, else from the start; `forward`: at or
    after it only). Engine thread.

    Raises:
        LookupError: no instruction matches (the lesson is stale for this torch or Python).
    """

    def replace(match: re.Match[str]) -> str:
        kind, what = match.groups()
        stop = engine.current_stop()
        frame = stop.selected_frame if not isinstance(stop, EngineError) else None
        if frame is None:
            raise LookupError(f"{match.group(0)}: not stopped in a frame")
        instrs = frame.code.instructions
        if kind == "role":
            roles = engine.roles()
            if isinstance(roles, EngineError):
                raise LookupError(f"{match.group(0)}: {roles.message}")
            role, _, opname = what.partition(":")
            hits = [r.index for r in roles.roles if r.role.value == role
                    and instrs[r.index].opname.startswith(opname)]
        else:
            hits = [i.index for i in instrs if what in f"{i.opname} {i.argrepr}"]
        later = [i for i in hits if i >= frame.index]
        named = spoken(match.group(0))
        if forward and not later and hits:
            raise LookupError(f"the program is past {named} in {frame.code.name}")
        if not (later or hits):
            raise LookupError(f"{frame.code.name}, where the program is, has no {named}")
        return str((later or hits)[0])

    return _PLACEHOLDER.sub(replace, command)


def read_facts(engine: object, stop: object, cond: Condition) -> Facts:
    """The engine state `cond`'s claims are about, read through the engine's typed methods (blocking)."""
    from dynadbg.core.guards import iter_leaves

    claims = set(cond.claims)
    trace = getattr(stop, "trace", None)     # a stop inside Dynamo's tracing: its `TraceStopView`
    entries = getattr(stop, "entry_count", None)
    guards: set[tuple[str, str]] = set()
    if claims & {"guard", "no_guard"}:
        trees = engine.guard_trees()
        if not isinstance(trees, EngineError) and trees:
            guards = {(leaf.source, leaf.guard_type) for leaf in iter_leaves(trees[0])}
    failing: list[tuple[str, str, str | None, str | None]] = []
    if claims & {"failing", "failing_values"}:
        records = engine.recompile_records()
        if not isinstance(records, EngineError) and records and records[0].entries:
            failing = [(leaf.source, leaf.guard_type, leaf.expected, leaf.actual)
                       for leaf in records[0].entries[0].failing]
    graph = ""
    if "graph_has" in claims and trace is not None:
        graph = "\n".join(f"{n.name} {n.op} {n.target}" for n in trace.nodes)
    elif "graph_has" in claims:
        graphs = engine.graphs()
        if not isinstance(graphs, EngineError):
            graph = "\n".join(g.code for g in graphs)
    roles: frozenset[str] = frozenset()
    instrs: frozenset[tuple[str, str]] = frozenset()
    if claims & {"has_role", "has_instr"}:
        found = engine.roles()
        frame = stop.selected_frame
        if not isinstance(found, EngineError):
            roles = frozenset(r.role.value for r in found.roles)
            code = frame.code.instructions if frame is not None else ()
            instrs = frozenset((f"{code[r.index].opname} {code[r.index].argrepr}", r.role.value)
                               for r in found.roles if 0 <= r.index < len(code))
    stack: list[str] = []
    if "stack_has" in claims and trace is not None:
        for value in trace.stack or ():
            node = f" for FX node {value.node}" if value.node else ""
            stack.append(f"{value.kind.value} {value.tracker}{node}: {value.text}")
    elif "stack_has" in claims:
        frame = stop.selected_frame
        provenance = engine.stack_provenance()
        notes = [] if isinstance(provenance, EngineError) else [f"{s.expression} {s.note}" for s in provenance.slots]
        for i, value in enumerate(frame.stack if frame is not None else ()):
            stack.append(f"{value.text} {notes[i] if i < len(notes) else ''}")
    values = []
    if cond.value is not None:
        result = engine.evaluate(cond.value[0])
        if not isinstance(result, EngineError):
            values.append((cond.value[0], result.text))
    brk = trace.brk if trace is not None else None
    plan = brk.plan if brk is not None else None
    break_eager = None
    if plan is not None and plan.eager:
        break_eager = f"{plan.eager} {plan.eager_callee or ''}".rstrip()
    traced_break = _traced_break(engine, stop) if "traced_break" in claims else None
    diff: tuple[tuple[str, str], ...] = ()
    if "replaced" in claims:
        found = engine.patch_diff()
        lines = getattr(found, "lines", ())  # an `EditError` (no edit yet) or `EngineError`: none
        diff = tuple((line.tag, line.text) for line in lines if line.tag in "+-")
    return Facts(entries, frozenset(guards), tuple(failing), graph, roles, instrs, tuple(stack), tuple(values),
                 brk.gb_type if brk is not None else None, break_eager, plan.resume_code if plan is not None else None,
                 traced_break, diff)


def _traced_break(engine: object, stop: object) -> tuple[str, str] | None:
    """(code name of the compile, opname) of the graph break behind `stop`'s resume function, when the recorded
    trace ``trace steps`` lists (`Engine.trace_steps` with no compile id) holds it; else None."""
    traced = getattr(getattr(stop, "graph_break", None), "traced", None)
    trace_steps = getattr(engine, "trace_steps", None)
    if traced is None or trace_steps is None:
        return None
    steps = trace_steps()
    if isinstance(steps, EngineError):
        return None
    mine = [s for s in steps if (s.compile_id, s.attempt) == (traced.compile_id, traced.attempt)]
    top = next((s.code_name for s in mine if s.depth == 0), None)
    hit = next((s for s in mine if s.ordinal == traced.ordinal), None)
    return (top, hit.opname) if top is not None and hit is not None else None


def _at_break(stop: Stop) -> bool:
    """`stop` is the re-trace's stop back at a graph break's instruction (`EngineState.at_break`)."""
    view = getattr(stop, "trace", None)
    return view is not None and view.brk is not None and view.at_restart_point


#: The recompile-stop decisions (`model.DecisionKind`), and those that let the call run without compiling.
_DECISIONS = frozenset({"recompile", "eager", "skip", "drop", "dynamic"})
_UNCOMPILED = frozenset({"eager", "skip"})


#: A condition's keys about where the program is (not claims, not the command)
_PLACE_KEYS = ("stop", "role", "opname", "code_contains")


def _what_went_wrong(cond: Condition, state: EngineState, wanted: tuple[str, ...]) -> str | None:
    """The wrong move `state` follows, in words, from what the engine says (the command and its error, the stop):
    the start of the hint it brings. None when there is nothing to say beyond the hint."""
    typed = f"`{state.command}{' ' + state.argument if state.argument else ''}`" if state.command else None
    if typed and state.error is not None:
        return f"{typed} did not work (see its error)."
    if typed and cond.command is not None and state.command == cond.command:
        # the step's command ran, and what the step says of it is not so (an edit of another row; lesson 6's
        # `graph` in triple, after a detour, where the step is about double's new entry): the parts that fail
        failing = {key: getattr(cond, key) for key in (*cond.claims, *_PLACE_KEYS)
                   if getattr(cond, key) is not None
                   and not check(replace(Condition(), **{key: getattr(cond, key)}), state)}
        if failing:
            where = (f" (the program is in {state.code_name} now)"
                     if "code_contains" in failing and state.code_name else "")
            return f"{typed} ran, but this step needs: {replace(Condition(), **failing).describe()}{where}."
    if typed and cond.command is not None and state.command != cond.command:
        if state.stop is not None and wanted and state.stop not in wanted:
            return f"{typed} is not this step's command; the program is at a {state.stop} stop now."
        return f"{typed} is not this step's command."
    if state.stop is not None and wanted and state.stop not in wanted:
        return f"The program stopped at a {state.stop} stop, not the {' or '.join(wanted)} stop this step needs."
    return None


class Coach:
    """Walks the learner through `lesson`; remembers progress in `progress` (None: not kept)."""

    def __init__(self, lesson: Lesson, progress: Progress | None = None) -> None:
        self.lesson = lesson
        self.progress = progress
        self.index = 0
        """The current step's position in `lesson.steps` (== len: the lesson is finished)."""
        self.wrong_moves = 0
        """Moves since the current step began that did not finish it (selects the hint)."""
        self.wrong: str | None = None
        """What the last wrong move was, in words (`hint` starts with it); None after F7 or a new step."""
        self.command: str | None = None
        self.argument = ""
        self.error: str | None = None
        self.exited = False
        self.status: int | None = None
        """The program's exit status once it has ended."""
        self.left_trace = False
        """The current step is about a stop inside Dynamo's tracing, and the program went on to a run-time stop."""
        self.at_stop: str | None = None
        """The kind of the stop the program was last seen at (a lesson step's condition names such kinds)."""
        self.at_break = False
        """That stop is the re-trace's stop back at a graph break's instruction (`EngineState.at_break`)."""
        self.past_role: tuple[str, int, str | None] | None = None
        """(role, index, code) of the instruction the current step is about, when the program has gone past it:
        in the same code (code None), or in code that code called from that instruction or a later one (its
        name); programs do not run backwards (`stranded`, `_note_past_role`)."""
        self.rows_seen: dict[str, dict[str, tuple[int, ...]]] = {}
        """Per code name, the rows of each role, as last seen (`EngineState.role_map`): kept across steps, so a
        step begun after the program left that code knows where its role's rows were."""
        self.past_place: tuple[str, str] | None = None
        """(the code the current step is about, the code the program is in) when the program is in a later step's
        code (`_note_later_place`)."""
        self.declined: str | None = None
        """The decision (``eager``, ``skip``) the learner made at the recompile stop the current step is about, when
        the step asks for one that compiles: the call ran without compiling (`stranded`)."""
        self.entries_seen: int | None = None
        """The cache entries the last check's claims read (`Facts.entries`), None when it read none."""
        self.skipped: list[int] = []
        """Numbers of the steps the learner skipped."""
        self.passed: list[int] = []
        """Numbers of the steps the engine's state completed."""
        self.caught_up: list[int] = []
        """Of those, the steps found done after a skip: the program was already where their command leads
        (`already_there`); the front ends say so."""

    @property
    def step(self) -> Step | None:
        """The current step, None once every step is done."""
        return self.lesson.steps[self.index] if self.index < len(self.lesson.steps) else None

    @property
    def finished(self) -> bool:
        return self.step is None

    @property
    def stranded(self) -> bool:
        """The current step's condition can no longer become true: the program has ended with it not done (only a
        step that waits for the end is done by it, and `advance` has already passed such a step), or the step is
        about a stop inside Dynamo's tracing and the program has gone on to a run-time stop (`left_trace`)."""
        return ((self.exited or self.left_trace or self.left_break or self.past_entries or self.declined is not None
                 or self.past_role is not None or self.past_place is not None) and self.step is not None)

    @property
    def left_break(self) -> bool:
        """The current step needs the trace-break stop, and the program is at another stop: Dynamo stops there
        once per graph break (a step taken from it goes on in a restarted trace), so it does not come back in this
        run."""
        step = self.step
        wanted = step.done.stop if step is not None else None
        wanted = (wanted,) if isinstance(wanted, str) else tuple(wanted or ())
        return (wanted == ("trace-break",) and self.at_stop is not None and self.at_stop != "trace-break"
                and not self.at_break and not self.exited)

    @property
    def past_entries(self) -> bool:
        """The current step is about the moment the code object had `Condition.entries` cache entries, and the
        last check read more: entries are only added while a program runs, so that moment is gone (lesson 4: `R`
        at the stop that asks for `eager` compiles the second entry)."""
        step = self.step
        want = step.done.entries if step is not None else None
        return want is not None and self.entries_seen is not None and self.entries_seen > want and not self.exited

    # -- what happened ------------------------------------------------------------------------------------------
    def observe_command(self, line: str, error: str | None) -> None:
        """The learner ran `line`; its error (None when it worked). What it printed is not kept: a condition never
        reads it."""
        self.command = verb_of(line)
        self.argument = argument_of(line)
        self.error = error

    def observe_exit(self, status: int | None = None) -> None:
        """The program has ended with exit `status` (None: not known)."""
        self.exited = True
        self.status = status

    def snapshot(self, engine: object) -> EngineState:
        """Read the state a condition needs from `engine` (blocking engine calls: not on a UI thread)."""
        if self.exited or getattr(engine, "finished", False) or not getattr(engine, "paused", False):
            return self.state_at(None)
        stop = engine.current_stop()
        if isinstance(stop, EngineError):
            return self.state_at(None)
        step = self.step
        facts = read_facts(engine, stop, step.done) if step is not None and step.done.claims else None
        frame = stop.selected_frame
        roles = stop.teaching.roles if stop.teaching is not None else None
        if roles is None and frame is not None and frame.code.generated:
            answer = engine.roles()
            roles = None if isinstance(answer, EngineError) else answer
        return self.state_at(stop, roles, facts)

    def state_at(self, stop: Stop | None, roles: CodeRoles | None = None, facts: Facts | None = None) -> EngineState:
        """The state a condition needs at `stop` (None: running or ended), with its code's `roles` (the stop's own
        `Stop.teaching` when it has them) and the `facts` its claims are about (read by `snapshot`): no engine
        call."""
        if stop is None or self.exited:
            return EngineState(command=self.command, error=self.error, exited=self.exited, argument=self.argument,
                               status=self.status)
        frame = stop.selected_frame
        if frame is None:
            return EngineState(stop.kind.value, command=self.command, error=self.error, facts=facts,
                               argument=self.argument, at_break=_at_break(stop))
        opname = frame.code.instructions[frame.index].opname if 0 <= frame.index < len(frame.code.instructions) \
            else ""
        role = ""
        if frame.code.generated and roles is not None and 0 <= frame.index < len(roles.roles):
            role = roles.roles[frame.index].role.value
        step = self.step
        want = (step.done.role or step.done.before) if step is not None else None
        by_role: dict[str, list[int]] = {}
        if frame.code.generated and roles is not None:
            for r in roles.roles:
                by_role.setdefault(r.role.value, []).append(r.index)
        rows = tuple(by_role.get(want, ())) if want else ()
        frames = stop.frames
        try:
            at = frames.index(frame)
        except ValueError:
            at = len(frames)
        outer = tuple((f.code.name, f.index) for f in reversed(frames[:at]))
        return EngineState(stop.kind.value, frame.code.name, frame.index, opname, role, self.command, self.error,
                           facts=facts, argument=self.argument, at_break=_at_break(stop), role_rows=rows,
                           outer=outer, role_map=tuple((role, tuple(at)) for role, at in by_role.items()))

    def advance(self, state: EngineState, move: bool = True, looked: bool = False) -> bool:
        """Finish the current step when `state` satisfies its condition (True); else, when `state` follows a
        learner's move (a command, or the stop a command led to), count a wrong move (the next hint shows).
        `looked`: the move was a command that worked and did not resume the program."""
        step = self.step
        if step is None:
            return False
        if state.stop is not None:
            self.at_stop, self.at_break = state.stop, state.at_break
        if state.facts is not None and state.facts.entries is not None:
            self.entries_seen = state.facts.entries
        if state.role_map:
            self.rows_seen[state.code_name] = dict(state.role_map)
        cond = step.done
        self._note_past_role(cond, state)
        asked = {verb_of(a) for a in step.action} & _DECISIONS
        if (state.command in _UNCOMPILED and asked and not asked & _UNCOMPILED and state.error is None
                and not check(step.done, state)):
            self.declined = state.command
        if check(step.done, state):
            self.passed.append(step.number)
            if not move and self.skipped and self.skipped[-1] == step.number - 1:
                self.caught_up.append(step.number)  # done by where a skip left the program: the front ends say so
            self._next()
            return True
        self._note_later_place(cond, state)
        if not move and self.already_there(state):
            self.passed.append(step.number)
            self.caught_up.append(step.number)
            self._next()
            return True
        wanted = step.done.stop
        wanted = (wanted,) if isinstance(wanted, str) else tuple(wanted or ())
        if (wanted and all(kind.startswith("trace") for kind in wanted) and state.stop is not None
                and not state.stop.startswith("trace")):
            # the step is about a stop inside Dynamo's tracing, and the program has gone on to run the code that
            # tracing produced: that trace is over, the step cannot be done in this run
            self.left_trace = True
        # A look around (a command that worked and changed nothing: `commands.READ_ONLY`, or any that worked when
        # the step does not ask for a command) is no wrong move, nor a command the step's action types on the way
        # to its last one (`u` of "u; explain"); a stop that is not the one wanted, a command that failed, or
        # another command than the one asked for that changes something (an edit, a breakpoint) is.
        worked = looked and state.error is None and state.command is not None
        on_the_way = worked and state.command in {verb_of(a) for a in step.action[:-1]}
        # nor a command the step's own text suggests on the side ("`guards` shows it too"), or a hint does
        # (lesson 7: "`patch undo` takes it back" after an edit of the wrong row)
        typed = f"`{state.command} {state.argument}`" if state.argument else f"`{state.command}`"
        suggested = worked and (f"`{state.command}`" in step.text or any(typed in h for h in step.hints))
        looked_around = worked and (step.done.command is None or is_look(state.command, state.argument))
        # the step's own command, run where the step's condition does not hold, is a wrong move: the hint says
        # which part fails (lesson 6's `graph` in triple after a detour, where the step is about double's entry)
        own = (state.command is not None and state.command == step.done.command
               and (step.done.argument is None or state.argument == step.done.argument))
        if move and not (looked and step.done.command is None) and (own or not (looked_around or on_the_way
                                                                               or suggested)):
            self.wrong_moves += 1
            self.wrong = _what_went_wrong(step.done, state, wanted)
        return False

    def _note_later_place(self, cond: Condition, state: EngineState) -> None:
        """Strand the step when it is about code the program is not in (`Condition.code_contains`) and the program
        is in the code a later step is about: the lesson's steps follow the program, which does not run backwards
        (lesson 6 after `skip` at double's recompile stop: step 4 wants double's new entry, and the program has
        gone on to triple, step 5's code)."""
        want = cond.code_contains
        if not want or state.stop is None or not state.code_name or want in state.code_name:
            return
        for later in self.lesson.steps[self.index + 1:]:
            there = later.done.code_contains
            if there and there != want and there in state.code_name:
                self.past_place = (want, state.code_name)
                return

    def _note_past_role(self, cond: Condition, state: EngineState) -> None:
        """Strand the step when the program has gone past the rows of its role (`Condition.role`, or
        `Condition.before` for a step that must happen before them): in the code where they are, at a later
        index; or in code called from that code by their last row or a later one (seen in `EngineState.outer`: lesson
        3's resume call, whose function the program is in). Generated code does not run backwards, so the step
        cannot be done in this call."""
        target = cond.role or cond.before
        if not target or state.stop is None:
            return
        if state.role_rows:
            if max(state.role_rows) < state.index and state.role != cond.role:
                self.past_role = (target, max(state.role_rows), None)
            return
        for code, index in state.outer:
            rows = self.rows_seen.get(code, {}).get(target)
            # an outer frame is inside the call its instruction makes: that instruction has run too
            if rows and index >= max(rows):
                self.past_role = (target, max(rows), code)
                return

    def ask_hint(self) -> str | None:
        """The learner asked for a hint (F7, ``lesson hint``): the next of the step's hints, as a wrong move
        would show it (the last one repeats); None when the step has none."""
        step = self.step
        if step is None or not step.hints:
            return None
        self.wrong_moves = min(self.wrong_moves + 1, len(step.hints))
        self.wrong = None
        return self.hint

    def catch_up(self, state: EngineState) -> tuple[str, ...]:
        """What to run when the learner skips the current step at `state`, so that the program is where the next
        step expects it: the commands of the step's action that move or change the program (not `LOOKS`: a look
        changes nothing the next step reads), placeholders unresolved (`resolve_action` with ``forward=True``).
        () when the step can no longer be done (`stranded`), the program is not stopped, or the step waits for a
        place (its stop, role, instruction, code: not a command of its own) and the program is already there, with
        what the step claims of that place (lesson 8: `c` to the graph-break stop, skipped by a learner already
        at it, would have run to the end; lesson 7's `c` to the next call, skipped at call 0's entry stop, is
        typed)."""
        step = self.step
        blocked = (self.exited or self.left_trace or self.left_break or self.past_entries
                   or self.past_role is not None or self.past_place is not None)
        if step is None or blocked or state.stop is None:
            return ()  # (stranded by a declined decision only: the next call's recompile stop takes the step's)
        commands = tuple(a for a in step.action if verb_of(a) not in LOOKS)
        cond = step.done
        if self.already_there(state):
            return ()
        if any(verb_of(a) in _DECISIONS for a in commands) and state.stop != "recompile":
            return ()  # a decision is taken at a recompile stop only: typing it elsewhere only fails
        if not commands or cond.command is not None:
            return commands
        place = replace(cond, **{key: None for key in cond.claims})
        # at the place, and what the step claims of it holds too (when the snapshot read it): the entry stop
        # of call 0 is no place for lesson 7's step about the next call's, whose code is the edited one
        there = check(cond, state) if state.facts is not None else check(place, state)
        if (place.stop or place.role or place.opname or place.code_contains) and there:
            return ()
        return commands

    def already_there(self, state: EngineState) -> bool:
        """The current step's command lets the program go on (`c`, `recompile`), and the program is already where
        that leads: the step's condition holds but for the command (lesson 4 step 4 after `R` at step 3: at the
        second entry's code already)."""
        step = self.step
        if step is None or step.done.command is None or step.done.command not in cmd.RESUMING:
            return False
        return check(replace(step.done, command=None, argument=None), state)

    def skip(self) -> None:
        """Skip the current step (always allowed)."""
        if self.step is not None:
            self.skipped.append(self.step.number)
            self._next()
            if self.exited:
                # after the end only a step that waits for it can be done: it is, now
                self.advance(self.state_at(None), move=False)

    def _next(self) -> None:
        self.index += 1
        self.left_trace = False
        self.entries_seen = None
        self.declined = None
        self.past_role = None
        self.past_place = None
        self.wrong_moves = 0
        self.wrong = None
        self.command, self.error, self.argument = None, None, ""
        if self.progress is not None:
            self.progress.save_step(self.lesson.number, self.index, len(self.lesson.steps))

    # -- what to show -------------------------------------------------------------------------------------------
    @property
    def hint(self) -> str | None:
        """The hint for the current step after a wrong move (the last hint repeats), None before one."""
        step = self.step
        if step is None or not self.wrong_moves or not step.hints:
            return None
        hint = step.hints[min(self.wrong_moves, len(step.hints)) - 1]
        return f"{self.wrong} {hint}" if self.wrong else hint

    def heading(self) -> str:
        total = len(self.lesson.steps)
        where = "done" if self.step is None else f"step {self.index + 1} of {total}"
        return f"Lesson {self.lesson.number}: {self.lesson.title} · {where}"

    def step_body(self) -> str:
        """The current step's text as the TUI's narration shows it: the lesson's intro before the first step's, and
        first a ``▶ Type `orig``` line when the text comes to what to do only further down (every first step:
        the intro is before it); the outro once the lesson is finished."""
        step = self.step
        if step is None:
            outro = self.lesson.outro or "Lesson finished."
            if not self.skipped:
                return outro
            # the outro tells the lesson's story as its steps play it: say which of them this run did not show
            numbers = ", ".join(str(n) for n in self.skipped)
            many = len(self.skipped) > 1
            return (f"(You skipped step{'s' if many else ''} {numbers}: what the summary below says of "
                    f"{'them' if many else 'it'} is the lesson's story, not what this run showed; "
                    f"`dynadbg learn {self.lesson.number}` plays the lesson again.)\n{outro}")
        body = (self.lesson.intro + "\n\n" if self.index == 0 and self.lesson.intro else "") + step.text
        if self.stranded:
            return body  # no "▶ Type ..." line: what to do now is `stranded_text`, shown first
        todo = todo_line(body)
        return f"▶ {todo}\n{body}" if todo is not None else body

    def step_text(self, number: int) -> str | None:
        """Step `number` (1-based) of the lesson again, done or not, with its heading (`lesson N`: a finished
        step's text has left the narration); None when the lesson has no such step."""
        steps = self.lesson.steps
        if not 1 <= number <= len(steps):
            return None
        step = steps[number - 1]
        state = ("done" if number in self.passed else "skipped" if number in self.skipped
                 else "current" if number == self.index + 1 else "to come")
        return f"Lesson {self.lesson.number}, step {number} of {len(steps)} ({state}):\n{step.text}"

    def stranded_text(self, skip_how: str = "type `lesson skip`") -> str | None:
        """What to do when the lesson is `stranded` (None when it is not): the step can no longer be done, how to
        skip it (`skip_how`) and how to start the lesson again."""
        if not self.stranded:
            return None
        way_on = (f"{skip_how[0].upper()}{skip_how[1:]} to skip it and go on with the lesson, or run "
                  f"`dynadbg learn {self.lesson.number}` to start the lesson again.")
        if self.left_break and not self.left_trace:
            if self.at_stop == "trace":
                # a step taken at the trace-break stop: Dynamo restarted the trace and replayed it past the break
                where = ("the status line says trace now: after a graph break Dynamo traces the function again from "
                         "its start, and this trace has gone past the breaking instruction")
            else:
                where = f"the status line says {self.at_stop} now"
            return (f"This step can no longer be done in this run: the program has moved on from the trace-break "
                    f"stop ({where}), and Dynamo stops there once for this graph break. {way_on}")
        if self.past_role is not None and not self.exited:
            role, index, code = self.past_role
            if code is not None:
                return (f"This step can no longer be done in this run: it is about the instruction at index {index} "
                        f"of {code} (role {role}), and the program has gone past it: {code} has called the code "
                        f"the program is in now from that instruction or a later one (a program does not run "
                        f"backwards). {way_on}")
            return (f"This step can no longer be done in this run: it is about the instruction at index {index} "
                    f"(role {role}), and the program has gone past it (a program does not run backwards; "
                    f"`explain {index}` still explains it from here, but the step needs the program stopped there). "
                    f"{way_on}")
        if self.past_place is not None and not self.exited:
            want, now = self.past_place
            return (f"This step can no longer be done in this run: it is about {want}, and the program has gone on "
                    f"to {now}, which a later step is about (a program does not run backwards; an earlier choice "
                    f"or skip took it past). {way_on}")
        if self.declined is not None and not self.exited:
            return (f"This step can no longer be done in this run: you chose `{self.declined}` at the recompile stop "
                    f"it is about, so that call ran without compiling, and what this step and the next ones say of "
                    f"it is not what this run did. {way_on}")
        if self.past_entries and not self.left_trace:
            return (f"This step can no longer be done in this run: it is about the moment the function had "
                    f"{self.step.done.entries} cache entr{'y' if self.step.done.entries == 1 else 'ies'}, and it "
                    f"has {self.entries_seen} now (a compile adds an entry; nothing takes one away while the "
                    f"program runs). {way_on}")
        if not self.exited:
            return (f"The program has left Dynamo's tracing before this step was done (it is stopped at run time "
                    f"now), so this step's stop cannot come back in this run. "
                    f"{skip_how[0].upper()}{skip_how[1:]} to skip it and go on with the lesson, or run "
                    f"`dynadbg learn {self.lesson.number}` to start the lesson again.")
        if self.status not in (0, None):
            return (f"The program ended with an error (exit status {self.status}; its traceback is in the log), so "
                    f"this step cannot be done in this run (an edit to the generated code may have "
                    f"broken it). "
                    f"{skip_how[0].upper()}{skip_how[1:]} to skip it and read the rest of the lesson, or run "
                    f"`dynadbg learn {self.lesson.number}` to start the lesson again.")
        return (f"The program has ended before this step was done, so it cannot be done in this run. "
                f"{skip_how[0].upper()}{skip_how[1:]} to skip it and read the rest of the lesson, or run "
                f"`dynadbg learn {self.lesson.number}` to start the lesson again.")

    def narration(self, skip_how: str = "type `lesson skip`", hint_how: str = "type `lesson hint`") -> str:
        """The current step as plain text: heading, what to do, the hint if any (when the program has ended with
        the step not done: that it cannot be done now, and the way on), how to skip."""
        lines = [self.heading()]
        step = self.step
        if step is None:
            lines.append(self.step_body())  # the outro, and which steps this run skipped
            return "\n".join(lines)
        if self.index == 0 and self.lesson.intro:
            lines.append(self.lesson.intro)
        lines.append(step.text)
        stranded = self.stranded_text(skip_how)
        if stranded:
            lines.append(stranded)
            return "\n".join(lines)
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        lines.append(f"(stuck? {hint_how} for a hint, {skip_how} to skip this step)")
        return "\n".join(lines)
