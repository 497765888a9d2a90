"""What the bytecode pane shows of `Engine.roles()`: a role gutter per instruction (a coloured letter) and one
header row per section of Dynamo's code (``prologue``, ``call graph __compiled_fn_2``, ``graph break: .item()``, …).

Pure functions of the frozen `CodeRoles` (no widgets): the engine's regions are maximal runs of one role, which
repeat where Dynamo interleaves two roles (an output taken from the graph's tuple, then put in place, one value at
a time). Sections merge those runs into one header, name the graph a CALL calls, the call a graph break runs
eagerly, and the resume function called.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rich.style import Style

from dynadbg.core.model import CodeRoles, InstrRole, Role
from dynadbg.core.roles import resume_name

#: The gutter's one-character mark and colour per role (colours from Rich's 16-colour names, so every terminal
#: theme keeps them apart; the marks keep the roles apart without colour: the help screen lists them).
ROLE_MARKS: dict[Role, tuple[str, str]] = {
    Role.PROLOGUE: ("p", "bright_black"),
    Role.RESUME_PROLOGUE: ("P", "bright_black"),
    Role.PRE_GRAPH: ("-", "bright_black"),
    Role.GRAPH_INPUT: ("i", "cyan"),
    Role.GRAPH_CALL: ("G", "bright_cyan"),
    Role.GRAPH_OUTPUT: ("o", "blue"),
    Role.SIDE_EFFECT: ("s", "magenta"),
    Role.REBUILD: ("L", "green"),
    Role.GRAPH_BREAK: ("B", "bright_red"),
    Role.RESUME_CALL: ("R", "yellow"),
    Role.RETURN: ("r", "white"),
    Role.USER_CODE: ("u", "bright_white"),
    Role.UNKNOWN: ("?", "red"),
}

#: Header text per role, where the section does not name a graph, a break or a resume function.
_HEADERS: dict[Role, str] = {
    Role.PROLOGUE: "prologue",
    Role.RESUME_PROLOGUE: "resume prologue: restore the stack, jump back in",
    Role.PRE_GRAPH: "pre-graph bytecode",
    Role.GRAPH_INPUT: "load graph inputs",
    Role.GRAPH_CALL: "call graph",
    Role.GRAPH_OUTPUT: "unpack graph outputs",
    Role.SIDE_EFFECT: "replaying side effects",  # `ll`'s words too: a lesson names the region once
    Role.REBUILD: "rebuild locals and stack values",
    Role.GRAPH_BREAK: "the graph-break instruction, run eagerly",
    Role.RESUME_CALL: "call of the resume function",
    Role.RETURN: "return",
    Role.USER_CODE: "user code (resumed)",
    Role.UNKNOWN: "unknown role",
}


@dataclass(frozen=True)
class Section:
    """A run of instructions under one header row.

    Attributes:
        start, end: first and last instruction index, inclusive.
        role: the role that names the section (the graph call for a load-inputs-call run).
        title: the header text (``"call graph __compiled_fn_2 (2 inputs)"``).
        short_title: the same without the resume function's global (``" (= __resume_at_76_3)"``), for a header
            that does not fit; empty when there is none to leave out.
    """

    start: int
    end: int
    role: Role
    title: str
    short_title: str = ""


def gutter_mark(role: Role) -> str:
    """The gutter's one-character mark for `role` (read without colour)."""
    return ROLE_MARKS[role][0]


def gutter_style(role: Role) -> Style:
    """The gutter mark's colour for `role`."""
    return _style(ROLE_MARKS[role][1])


@lru_cache(maxsize=None)
def _style(color: str) -> Style:
    return Style(color=color, bold=True)


def _graph_title(roles: CodeRoles, start: int, end: int) -> str:
    for g in roles.graph_calls:
        if start <= g.call_index <= end:
            n = len(g.inputs)
            return f"call graph {g.short_name} ({n} input{'s' if n != 1 else ''})"
    for g in roles.graph_calls:
        if start <= g.load_index <= end:
            return f"load graph {g.short_name} (called at {g.call_index})"
    return _HEADERS[Role.GRAPH_CALL]


def _resume_title(roles: CodeRoles, start: int, end: int, *, short: bool = False) -> str:
    """The resume-call section's header; `short`: by the resume function's code name alone (its global left out)."""
    for r in roles.resume_calls:
        if start <= r.call_index <= end or start <= r.load_index <= end:
            name = (r.function_name or r.global_name) if short else resume_name(r.function_name, r.global_name)
            return f"call of the resume function {name}"
    return _HEADERS[Role.RESUME_CALL]




def break_call(role: InstrRole) -> str:
    """What a graph-break instruction runs eagerly (``".item()"``, `InstrRole.eager_call`); empty if the engine
    could not name it."""
    return role.eager_call


def _break_title(roles: CodeRoles, start: int, end: int) -> str:
    for k in range(start, end + 1):
        what = break_call(roles.roles[k])
        if what:
            return f"the graph-break instruction, run eagerly: {what}"
    return _HEADERS[Role.GRAPH_BREAK]


#: Roles that Dynamo interleaves after a graph call (take an output, put it where Python wants it): one section.
_AFTER_GRAPH = (Role.GRAPH_OUTPUT, Role.REBUILD)


def sections(roles: CodeRoles) -> tuple[Section, ...]:
    """The header sections of `roles`, in order, covering every instruction.

    Regions of the graph's outputs and of rebuilding that follow each other make one section (Dynamo interleaves
    them one value at a time); neighbouring sections with the same title merge. A graph-call region that only
    loads the graph (its CALL comes after the pre-graph bytecode and the inputs) is titled as the load.
    """
    merged: list[tuple[int, int, set[Role]]] = []
    for region in roles.regions:
        role = region.role
        if merged and role in _AFTER_GRAPH and merged[-1][2] <= set(_AFTER_GRAPH):
            start, _, kinds = merged[-1]
            merged[-1] = (start, region.end, kinds | {role})
            continue
        merged.append((region.start, region.end, {role}))
    out: list[Section] = []
    for start, end, kinds in merged:
        if len(kinds) > 1:
            role, title = Role.GRAPH_OUTPUT, "unpack graph outputs, rebuild locals"
        else:
            (role,) = kinds
            if role == Role.GRAPH_CALL:
                title = _graph_title(roles, start, end)
            elif role == Role.RESUME_CALL:
                title = _resume_title(roles, start, end)
            elif role == Role.GRAPH_BREAK:
                title = _break_title(roles, start, end)
            else:
                title = _HEADERS[role]
        short = _resume_title(roles, start, end, short=True) if len(kinds) == 1 and role == Role.RESUME_CALL else ""
        short = "" if short == title else short
        if out and out[-1].title == title:
            out[-1] = Section(out[-1].start, end, out[-1].role, title, out[-1].short_title)
        else:
            out.append(Section(start, end, role, title, short))
    return tuple(out)
