"""Lessons of `dynadbg learn`: one TOML file per lesson, read and checked here.

A lesson file (``app/learn/lessons/NN_name.toml``) holds::

    title = "A graph break"
    program = "l3_graph_break.py"          # a script in dynadbg/demos/lessons/ (Dynamo skips dynadbg's own files)
    intro = "What this lesson shows."      # optional
    outro = "What the learner saw."        # optional
    break_on = ["entry", "recompile"]      # optional stop kinds (default: entry, recompile, exception)

    [[steps]]
    text = "What to look at and what to do."
    action = "until {role:graph call}"     # what a learner would type; `;` separates commands
    hints = ["shown after the 1st wrong move", "after the 2nd and later ones"]
    pane = "guards"                        # optional: the pane this step talks about, put in front (`PANES`)
    cursor = "{role:graph call:CALL}"      # optional: the bytecode pane's cursor goes to this row (its answer)
    [steps.done]                           # when the step is done: every key given must hold
    stop = "entry"                         # the stop kind (or a list of kinds)
    role = "graph call"                    # the role of the current instruction (`Role` values)
    opname = "CALL"                        # the current instruction's opname starts with this
    command = "graph"                      # the last command's verb (aliases allowed) and it did not fail
    argument = "history"                   # ... and what followed the verb (`p history`, not `p calls`)
    code_contains = "resume"               # the selected frame's code name contains this
    exited = true                          # the program has ended
    # what a step's text claims about Dynamo, checked on the engine's state (`coach.check`):
    entries = 2                            # the code object has this many cache entries
    guard = "L['offset'] TYPE_MATCH"       # the guard tree of the entry serving the frame has this leaf type there
    no_guard = "L['offset'] EQUALS_MATCH"  # ... and none of this type there
    failing = "L['factor'] EQUALS_MATCH"   # at a recompile stop, this guard of the newest entry fails
    failing_values = ["2", "3"]            # ... with this expected and actual value
    graph_has = "truediv"                  # the FX graph the frame's entry calls contains this (a list: each)
    has_role = "graph call"                # some instruction of the frame's code has this role
    has_instr = ["LOAD_CONST 'x'", "rebuild"]  # an instruction whose `OPNAME argrepr` has this text has this role
    stack_has = "___stack0"                # a value-stack slot (its summary or what it stands for) shows this
                                           # (a list: each is shown by some slot)
    value = ["history", "[]"]              # `p EXPR` gives this text
    # ... at a stop inside Dynamo's tracing (a trace stop), about the graph break Dynamo found there:
    break_type = "Tensor.item()"           # torch's graph-break type (gb_type) contains this
    break_eager = "int"                    # the instruction Dynamo runs eagerly (or what it calls) contains this
    break_resume = "normalise"             # Dynamo puts the rest of this code in a resume function
    # ... at a run-time stop in a resume function, about the recorded trace (`trace steps`):
    traced_break = ["normalise", "CALL"]   # it holds the attempt that traced the graph break behind this resume
                                           # function, in a compile of this code, breaking at this opname
    # ... after an instruction edit (`edit`), about the edited code of the selected frame (`patch show`):
    replaced = ["LOAD_CONST 'original'", "LOAD_CONST 'edited'"]   # the rows with the first are gone, the
                                                                   # second's are new, and nothing else changed

At a trace stop `graph_has` reads the FX graph traced so far, one ``NAME OP TARGET`` row per node
(``sum_1 call_method sum``), and `stack_has` the symbolic value stack, one ``KIND TRACKER for FX node NODE: TEXT``
row per slot (``tensor TensorVariable for FX node sum_1: Tensor[] ...``, ``unrealized LazyVariableTracker: type
int``; no ``for FX node`` part when the slot stands for none).

A condition never reads the text a command printed: what a step's text claims is checked on the engine's typed
state, so a change of wording cannot strand a lesson.

An action may name an instruction by what it is rather than by index (indexes move when torch changes what it
generates): ``{role:ROLE}`` is the first instruction with that role at or after the current one, ``{instr:TEXT}``
the first whose ``OPNAME argrepr`` contains TEXT; ``{role:ROLE:OPNAME}`` the first with that role whose
opname starts with OPNAME. The test suite plays every action to check the lessons still
match what torch generates.

`load_lesson` rejects a bad file with `LessonError` naming the file, the step and the reason.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from dynadbg.core.commands import ALIASES, BY_NAME
from dynadbg.core.model import BREAK_ON_KINDS, DEFAULT_BREAK_ON, Role, StopKind

#: Where the bundled lesson files and their programs live (package data).
LESSON_DIR = Path(__file__).resolve().parent / "lessons"
PROGRAM_DIR = Path(__file__).resolve().parent.parent / "demos" / "lessons"

#: Keys a `[steps.done]` table may hold, with the type each takes.
CONDITION_KEYS: dict[str, type | tuple[type, ...]] = {
    "stop": (str, list),
    "role": str,
    "opname": str,
    "command": str,
    "code_contains": str,
    "exited": bool,
    "entries": int,
    "guard": str,
    "no_guard": str,
    "failing": str,
    "failing_values": list,
    "graph_has": (str, list),
    "has_role": str,
    "has_instr": list,
    "stack_has": (str, list),
    "value": list,
    "break_type": str,
    "break_eager": str,
    "break_resume": str,
    "traced_break": list,
    "argument": str,
    "replaced": list,
    "before": str,
}
#: The keys above that are claims about the engine's state (read only when a step asks for them).
CLAIM_KEYS = ("entries", "guard", "no_guard", "failing", "failing_values", "graph_has", "has_role", "has_instr",
              "stack_has", "value", "break_type", "break_eager", "break_resume", "traced_break",
              "replaced")
#: The claims about the graph break at a trace stop (read off the trace stop's `TraceBreak`).
BREAK_KEYS = ("break_type", "break_eager", "break_resume")
_TOP_KEYS = {"title", "program", "intro", "outro", "break_on", "steps"}
_STEP_KEYS = {"text", "action", "hints", "done", "pane", "cursor"}
#: What a step's ``pane`` may name: the pane its text talks about (where its answer is). At 80×24 the TUI has room
#: for one of them at a time beside the narration: the lesson puts that one in front (`learn.tui.LearnApp`). The
#: views of the left pane (``bytecode``, ``graph``, ...) are opened; ``explain`` is the Explain pane under the
#: bytecode (opened by ``X`` or the typed command); ``log`` is the console's log, where typed commands answer.
PANES = ("bytecode", "original", "graph", "entries", "stop", "recompile", "trace", "explain", "source", "stack",
         "locals", "guards", "log")
_PLACEHOLDER = re.compile(r"\{(\w+):([^{}]*)\}")
_ROLES = {r.value for r in Role}
_STOPS = {k.value for k in StopKind}


class LessonError(ValueError):
    """A lesson file that cannot be used: ``"FILE: step N: reason"`` (no step for file-level problems)."""


@dataclass(frozen=True)
class Condition:
    """When a step is done: every field that is not None must hold (see the module docstring)."""

    stop: tuple[str, ...] | None = None
    role: str | None = None
    opname: str | None = None
    command: str | None = None
    code_contains: str | None = None
    exited: bool | None = None
    entries: int | None = None
    guard: tuple[str, str] | None = None
    no_guard: tuple[str, str] | None = None
    failing: tuple[str, str] | None = None
    failing_values: tuple[str, str] | None = None
    graph_has: tuple[str, ...] | None = None
    has_role: str | None = None
    has_instr: tuple[str, str] | None = None
    stack_has: tuple[str, ...] | None = None
    value: tuple[str, str] | None = None
    break_type: str | None = None
    break_eager: str | None = None
    break_resume: str | None = None
    traced_break: tuple[str, str] | None = None
    argument: str | None = None
    replaced: tuple[str, str] | None = None
    #: a role the step must be done before the program passes (not checked: once past its rows in the code where
    #: they are, the step is stranded; lesson 3: `s` into the resume function, before the resume call has run)
    before: str | None = None

    @property
    def claims(self) -> tuple[str, ...]:
        """The claim keys this condition uses (what `coach.Coach.snapshot` must read)."""
        return tuple(k for k in CLAIM_KEYS if getattr(self, k) is not None)

    def describe(self) -> str:
        """The condition in words, for a test failure or a curious contributor."""
        parts = []
        if self.stop:
            parts.append(f"a {' or '.join(self.stop)} stop")
        if self.role:
            parts.append(f"the current instruction's role is {self.role!r}")
        if self.opname:
            parts.append(f"the current instruction is a {self.opname}")
        if self.command:
            typed = f"{self.command} {self.argument}" if self.argument else self.command
            parts.append(f"the last command was `{typed}` and it worked")
        if self.code_contains:
            parts.append(f"the frame's code name contains {self.code_contains!r}")
        if self.exited is not None:
            parts.append("the program has ended" if self.exited else "the program still runs")
        if self.entries is not None:
            parts.append(f"the code object has {self.entries} cache entries")
        if self.guard:
            parts.append(f"its entry guards {self.guard[0]} with {self.guard[1]}")
        if self.no_guard:
            parts.append(f"its entry has no {self.no_guard[1]} on {self.no_guard[0]}")
        if self.failing:
            parts.append(f"{self.failing[1]} on {self.failing[0]} fails")
        if self.failing_values:
            parts.append(f"expected {self.failing_values[0]}, actual {self.failing_values[1]}")
        if self.graph_has:
            parts.append(f"the FX graph contains {' and '.join(map(repr, self.graph_has))}")
        if self.has_role:
            parts.append(f"an instruction has the role {self.has_role!r}")
        if self.has_instr:
            parts.append(f"an instruction {self.has_instr[0]!r} has the role {self.has_instr[1]!r}")
        if self.stack_has:
            parts.append(f"value-stack slots show {' and '.join(map(repr, self.stack_has))}")
        if self.value:
            parts.append(f"`p {self.value[0]}` is {self.value[1]}")
        if self.break_type:
            parts.append(f"torch's graph-break type contains {self.break_type!r}")
        if self.break_eager:
            parts.append(f"Dynamo runs {self.break_eager!r} eagerly")
        if self.break_resume:
            parts.append(f"Dynamo puts the rest of {self.break_resume} in a resume function")
        if self.traced_break:
            parts.append(f"the recorded trace holds the break, at a {self.traced_break[1]} of a compile of "
                         f"{self.traced_break[0]}")
        if self.replaced:
            parts.append(f"the edited code has {self.replaced[1]} where Dynamo's had {self.replaced[0]}, and no "
                         f"other change (`patch show` shows the edits; `patch undo` takes them back)")
        return "; ".join(parts)


@dataclass(frozen=True)
class Step:
    """One step: what to read and do, the learner's command the tests play, the hints, the condition."""

    number: int
    text: str
    action: tuple[str, ...]
    hints: tuple[str, ...]
    done: Condition
    pane: str | None = None
    """The pane the step talks about (`PANES`), or None: the panes stay as the learner left them."""
    cursor: str | None = None
    """The row a step asks the learner to find (an ``{role:...}`` / ``{instr:...}`` placeholder): the TUI puts the
    bytecode pane's cursor on it when the step begins, so the row and its index are on screen."""


@dataclass(frozen=True)
class Lesson:
    """One lesson: its number (from the file name's leading digits), text, program and steps."""

    number: int
    title: str
    program: Path
    steps: tuple[Step, ...]
    path: Path
    intro: str = ""
    outro: str = ""
    break_on: frozenset[str] = DEFAULT_BREAK_ON


def split_action(text: str) -> tuple[str, ...]:
    """``"p x; graph"`` → ``("p x", "graph")``."""
    return tuple(part.strip() for part in text.split(";") if part.strip())


def load_lesson(path: str | os.PathLike[str], program_dir: Path = PROGRAM_DIR) -> Lesson:
    """Read and check one lesson file.

    Raises:
        LessonError: the file is unreadable, not TOML, or a key, type, role, stop kind, command or program is
            wrong; the message names the file and (where there is one) the step.
    """
    path = Path(path)
    name = path.name
    match = re.match(r"(\d+)", name)
    if not match:
        raise LessonError(f"{name}: the file name must start with the lesson number (e.g. 03_graph_break.toml)")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise LessonError(f"{name}: cannot read it: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise LessonError(f"{name}: not valid TOML: {exc}") from None

    def fail(reason: str, step: int | None = None) -> LessonError:
        return LessonError(f"{name}: " + (f"step {step}: " if step is not None else "") + reason)

    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise fail(f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_TOP_KEYS))})")
    for key in ("title", "program"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise fail(f"{key!r} must be a non-empty string")
    for key in ("intro", "outro"):
        if not isinstance(data.get(key, ""), str):
            raise fail(f"{key!r} must be a string")
    program = program_dir / data["program"]
    if not program.is_file():
        raise fail(f"program {data['program']!r} is not in {program_dir}")
    break_on = data.get("break_on", sorted(DEFAULT_BREAK_ON))
    if not isinstance(break_on, list) or any(k not in BREAK_ON_KINDS for k in break_on):
        raise fail(f"'break_on' must be a list of stop kinds from {', '.join(BREAK_ON_KINDS)}")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise fail("a lesson needs at least one [[steps]] table")
    steps = tuple(_load_step(raw, number, fail) for number, raw in enumerate(raw_steps, 1))
    return Lesson(int(match.group(1)), data["title"].strip(), program, steps, path, data.get("intro", "").strip(),
                  data.get("outro", "").strip(), frozenset(break_on))


def _load_step(raw: object, number: int, fail) -> Step:  # noqa: ANN001 - the loader's error maker
    if not isinstance(raw, dict):
        raise fail("a step must be a table", number)
    unknown = set(raw) - _STEP_KEYS
    if unknown:
        raise fail(f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_STEP_KEYS))})", number)
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise fail("'text' must be a non-empty string", number)
    hints = raw.get("hints", [])
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        raise fail("'hints' must be a list of non-empty strings", number)
    action = raw.get("action")
    if not isinstance(action, str) or not split_action(action):
        raise fail("'action' must be the command(s) a learner would type (the tests play it)", number)
    for command in split_action(action):
        verb = command.split(None, 1)[0]
        if verb.startswith("!"):
            continue
        if verb not in BY_NAME and verb not in ALIASES:
            raise fail(f"action {command!r}: unknown command {verb!r}", number)
        for kind, value in _PLACEHOLDER.findall(command):
            if kind == "role" and value.split(":")[0] not in _ROLES:
                raise fail(f"action {command!r}: unknown role {value!r}", number)
            if kind not in ("role", "instr"):
                raise fail(f"action {command!r}: unknown placeholder {{{kind}:...}} (use role or instr)", number)
    pane = raw.get("pane")
    if pane is not None and pane not in PANES:
        raise fail(f"'pane' must be one of {', '.join(PANES)}", number)
    cursor = raw.get("cursor")
    if cursor is not None and not (isinstance(cursor, str) and _PLACEHOLDER.fullmatch(cursor)
                                   and cursor.split(":")[0] in ("{role", "{instr")
                                   and (not cursor.startswith("{role:")
                                        or cursor[6:-1].split(":")[0] in _ROLES)):
        raise fail("'cursor' must be one {role:ROLE[:OPNAME]} or {instr:TEXT} placeholder", number)
    done = raw.get("done")
    if not isinstance(done, dict) or not done:
        raise fail("a step needs a [steps.done] table saying when it is done", number)
    return Step(number, text.strip(), split_action(action), tuple(h.strip() for h in hints),
                _load_condition(done, number, fail), pane, cursor)


def _load_condition(done: dict, number: int, fail) -> Condition:  # noqa: ANN001
    unknown = set(done) - set(CONDITION_KEYS)
    if unknown:
        raise fail(f"done: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(CONDITION_KEYS)})",
                   number)
    for key, value in done.items():
        if not isinstance(value, CONDITION_KEYS[key]):
            raise fail(f"done: {key!r} has the wrong type ({type(value).__name__})", number)
    stop = done.get("stop")
    stops = (stop,) if isinstance(stop, str) else tuple(stop) if stop is not None else None
    if stops is not None and (not stops or any(s not in _STOPS for s in stops)):
        raise fail(f"done: unknown stop kind in {stop!r} (known: {', '.join(sorted(_STOPS))})", number)
    role = done.get("role")
    if role is not None and role not in _ROLES:
        raise fail(f"done: unknown role {role!r} (known: {', '.join(sorted(_ROLES))})", number)
    command = done.get("command")
    if command is not None:
        if command not in BY_NAME and command not in ALIASES:
            raise fail(f"done: unknown command {command!r}", number)
        command = ALIASES.get(command, command)
    if done.get("before") is not None and done["before"] not in _ROLES:
        raise fail(f"done: unknown role {done['before']!r} in 'before'", number)
    has_role = done.get("has_role")
    if has_role is not None and has_role not in _ROLES:
        raise fail(f"done: unknown role {has_role!r} in 'has_role'", number)
    texts: dict[str, tuple[str, ...] | None] = {}
    for key in ("graph_has", "stack_has"):
        got = done.get(key)
        got = [got] if isinstance(got, str) else got
        if got is not None and not (got and all(isinstance(x, str) and x for x in got)):
            raise fail(f"done: {key!r} must be a non-empty string or a list of them", number)
        texts[key] = tuple(got) if got is not None else None
    pairs: dict[str, tuple[str, str] | None] = {}
    for key in ("guard", "no_guard", "failing"):
        text = done.get(key)
        source, _, gtype = (text or "").rpartition(" ")
        if text is not None and not (source and gtype.isupper()):
            raise fail(f"done: {key!r} must be \"SOURCE GUARD_TYPE\" (e.g. \"L['x'] TENSOR_MATCH\")", number)
        pairs[key] = (source, gtype) if text is not None else None
    for key in ("failing_values", "value", "has_instr", "traced_break", "replaced"):
        got = done.get(key)
        if got is not None and not (len(got) == 2 and all(isinstance(x, str) for x in got)):
            raise fail(f"done: {key!r} must be a list of two strings", number)
        pairs[key] = tuple(got) if got is not None else None  # type: ignore[assignment]
    if pairs["has_instr"] is not None and pairs["has_instr"][1] not in _ROLES:
        raise fail(f"done: unknown role {pairs['has_instr'][1]!r} in 'has_instr'", number)
    return Condition(stops, role, done.get("opname"), command, done.get("code_contains"), done.get("exited"),
                     done.get("entries"), pairs["guard"], pairs["no_guard"], pairs["failing"],
                     pairs["failing_values"], texts["graph_has"], has_role, pairs["has_instr"], texts["stack_has"],
                     pairs["value"], done.get("break_type"), done.get("break_eager"), done.get("break_resume"),
                     pairs["traced_break"], _argument(done, number, fail), pairs["replaced"], done.get("before"))


def _argument(done: dict, number: int, fail) -> str | None:  # noqa: ANN001
    argument = done.get("argument")
    if argument is None:
        return None
    if "command" not in done or not argument.split():
        raise fail("done: 'argument' needs a 'command' and must name what follows it", number)
    return " ".join(argument.split())


def lesson_files(directory: Path = LESSON_DIR) -> list[Path]:
    """The lesson files of `directory`, in lesson order."""
    return sorted(directory.glob("[0-9]*.toml"))


def load_lessons(directory: Path = LESSON_DIR) -> list[Lesson]:
    """Every lesson of `directory`, in order. Raises `LessonError` for the first bad file or a repeated number."""
    lessons = [load_lesson(p) for p in lesson_files(directory)]
    seen: dict[int, Path] = {}
    for lesson in lessons:
        if lesson.number in seen:
            raise LessonError(f"{lesson.path.name}: lesson number {lesson.number} is also {seen[lesson.number].name}")
        seen[lesson.number] = lesson.path
    return lessons
