"""The one registry of TUI actions: id, keys, description and the equivalent command of each one.

Everything the user can do with a key is declared here, once. The app turns the registry into its `BINDINGS`
(`bindings`), the footer shows the entries marked ``footer``, the help screen lists all of them
(`help_screen.HelpScreen`) and the command palette searches them (`commands.ActionCommands`). A key calls the
engine's typed method (`dynadbg.core.protocol.Engine`); `Action.command` is the command-language line that does
the same in the console (shown in the help, the palette and the README).

| id | default keys | calls |
|---|---|---|
| step / next / return / continue | ``s`` ``F11`` / ``n`` ``F10`` / ``r`` / ``c`` ``F5`` | ``set_step`` ... |
| until | ``t`` | ``set_until(cursor)`` |
| back / forward | ``[`` / ``]`` | ``back()`` / ``forward()`` (the recorded history, read-only) |
| breakpoint | ``b``, ``F9`` | ``set_break(cursor)`` or ``clear_break(cursor)`` (toggles) |
| up / down | ``u`` / ``d`` | ``up()`` / ``down()`` |
| whatif | ``w`` | ``what_if()`` |
| next_failing / previous_failing | ``f`` / ``F`` | - (the guard pane: the next / previous failing guard, wrapping) |
| failing_only | ``Ctrl+F`` | - (the guard pane shows the paths to failing guards only, or all again) |
| view_orig, view_graph, view_entries | ``2``, ``3``, ``4`` | ``original_code()``, ``graphs()``, ``entries()`` |
| view_diff, view_recompile | ``6``, ``7`` | ``patch_diff()``, ``recompile_records()`` |
| view_bytecode, view_stop | ``1``, ``5`` | - (the stop itself) |
| view_stderr | ``8`` | - (the program's stderr, captured by the app) |
| view_trace | ``9`` | - (the trace stop itself: `Stop.trace`) |
| recompile, eager, skip | ``R``, ``E``, ``S`` | ``decide(choice.decision)`` (recompile stop only) |
| drop | ``D`` | the drop dialog: ``preview_drop(ids)``, Enter ``decide(Decision(DROP, ids))`` |
| dynamic | ``M`` | asks NAME DIM, then ``decide(Decision(DYNAMIC, name, dim))`` |
| edit, insert, delete | ``e``, ``i``, ``x`` | the edit dialog: ``preview_edit(op)``, Enter ``apply_edit(op)`` |
| console | ``:`` | focus the console input (``CommandLine.execute(line)``) |
| maximize | ``z`` | ``screen.maximize(focused pane)``, or ``screen.minimize()`` when one is maximised |
| help | ``?`` | open the help screen |
| interrupt | ``Ctrl+C`` | ``interrupt()`` (only while the program runs) |
| quit | ``q`` | ``quit()``, then exit |

Each action says when it applies (`Action.when`); `DebuggerApp.check_action` hides the ones that do not apply at
the current stop (the recompile-stop choices elsewhere, the frame actions at a recompile stop, the edit actions
outside generated code) and greys out the rest while the program runs.

Keys are remappable by binding id (the action id) with `App.set_keymap`: pass a JSON object such as
``{"step": "s,f7", "next": "space"}`` as a file to ``run_tui(keymap=PATH)``, or name that file (or write the JSON
inline) in the ``DYNADBG_KEYMAP`` environment variable. `load_keymap` reads both; unknown ids are reported, not
fatal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding

#: Environment variable naming a keymap JSON file, or holding the JSON itself.
KEYMAP_ENV = "DYNADBG_KEYMAP"


@dataclass(frozen=True)
class Action:
    """One user action.

    Attributes:
        id: the binding id and the action parameter (``"step"``); keymaps use it.
        keys: default keys, comma-separated in Textual's key names (``"s,f11"``).
        label: short footer label (``"Step"``).
        description: one line for the help screen and the command palette.
        command: the command-language line that does the same in the console (``{cursor}``: the bytecode
            cursor's instruction index), for the help, the palette and the README, and what the key counts as
            (`command_line`: a lesson step that asks for the command is done by the key); None for actions the UI
            handles itself (help, console focus).
        resumes: True when the command lets the program run (only allowed while stopped).
        asks: the key opens a dialog; the command is sent (with what the dialog chose) when it is answered.
        at_trace: the key does what `command` does at a trace stop too; False where the command answers there from
            Dynamo's trace (``why``, ``graph``, ``explain``, ``guards``: the Trace view, key 9, shows that) while
            the key's pane shows the compiled code's (`command_line` gives no command there).
        footer: shown in the footer.
        priority: checked before the focused widget sees the key (only for keys no widget should swallow).
        group: heading on the help screen.
        when: where the action applies: ``"always"``; ``"stopped"`` (greyed out while the program runs);
            ``"frame"`` (stopped in a frame of generated code: hidden at a recompile stop); ``"recompile"`` (only
            at a recompile stop); ``"generated"`` (stopped with generated code in the bytecode pane: the edit
            actions); ``"running"`` (only while the program runs).
    """

    id: str
    keys: str
    label: str
    description: str
    command: str | None = None
    resumes: bool = False
    asks: bool = False
    at_trace: bool = True
    footer: bool = True
    priority: bool = False
    group: str = "Run"
    when: str = "always"


#: Every action, in footer/help order.
ACTIONS: tuple[Action, ...] = (
    Action("step", "s,f11", "Step", "Step into: run one instruction", "s", resumes=True, when="stopped"),
    Action("next", "n,f10", "Next", "Step over: run to the next instruction in this frame", "n", resumes=True,
           when="stopped"),
    Action("return", "r", "Return", "Run until this frame returns", "r", resumes=True, when="frame"),
    Action("continue", "c,f5", "Cont", "Continue to the next stop", "c", resumes=True, when="stopped"),
    Action("until", "t", "Until", "Run until the instruction under the cursor", "until {cursor}", resumes=True,
           when="frame"),
    Action("back", "left_square_bracket", "Back", "Show the previous recorded stop (history, read-only)", "back",
           footer=False, group="History", when="stopped"),
    Action("forward", "right_square_bracket", "Forward", "Show the next recorded stop, up to the present",
           "forward", footer=False, group="History", when="stopped"),
    Action("breakpoint", "b,f9", "Break", "Toggle a breakpoint at the cursor's instruction", "b {cursor}",
           group="Breakpoints and frames", when="frame"),
    Action("up", "u", "Up", "Select the calling frame (older)", "u", group="Breakpoints and frames", when="frame"),
    Action("down", "d", "Down", "Select the called frame (newer)", "d", group="Breakpoints and frames",
           when="frame"),
    Action("whatif", "w", "What-if", "Evaluate every guard of every cache entry for this call", "whatif",
           footer=False, group="Guards", when="stopped"),
    Action("next_failing", "f", "Next fail", "Guard pane: go to the next failing guard (opens its path; after the "
           "last one, back to the first)", footer=False, group="Guards"),
    Action("previous_failing", "F", "Prev fail", "Guard pane: go to the previous failing guard (before the first, "
           "to the last)", footer=False, group="Guards"),
    Action("failing_only", "ctrl+f", "Failing only", "Guard pane: show only the paths to failing guards, or "
           "every guard again", "guards fail", at_trace=False, footer=False, group="Guards"),
    Action("recompile", "R", "Recompile", "Compile a new cache entry for this call (the default)",
           "recompile", resumes=True, group="Recompile stop", when="recompile"),
    Action("eager", "E", "Eager", "Run this call eagerly, without compiling it", "eager", resumes=True,
           group="Recompile stop", when="recompile"),
    Action("skip", "S", "Skip", "Stop compiling this code; its entries still serve", "skip",
           resumes=True, group="Recompile stop", when="recompile"),
    Action("drop", "D", "Drop", "Choose failing guards to drop from the new entry (asks first), recompile", "drop",
           resumes=True, asks=True, group="Recompile stop", when="recompile"),
    Action("dynamic", "M", "Dynamic", "Mark a tensor dimension dynamic (NAME DIM), recompile",
           "dynamic NAME DIM", resumes=True, asks=True, group="Recompile stop", when="recompile"),
    Action("edit", "e", "Edit", "Edit the cursor's instruction (live stack preview)",
           "edit {cursor} …", asks=True, group="Editing", when="generated"),
    Action("insert", "i", "Insert", "Insert instructions before the cursor's instruction",
           "insert {cursor} …", asks=True, footer=False, group="Editing", when="generated"),
    Action("delete", "x", "Delete", "Delete the cursor's instruction (preview first)",
           "delete {cursor}", asks=True, footer=False, group="Editing", when="generated"),
    Action("view_bytecode", "1", "Bytecode", "Show the transformed bytecode", footer=False, group="Views"),
    Action("view_orig", "2", "Original", "Show the original bytecode", "orig", footer=False, group="Views"),
    Action("view_graph", "3", "Graph", "Show the FX graph", "graph", at_trace=False, footer=False,
           group="Views"),
    Action("view_entries", "4", "Entries", "Show the cache entries of this code object", "entries",
           footer=False, group="Views"),
    Action("view_stop", "5", "Stop", "Show why the program stopped (details, traceback)", footer=False,
           group="Views"),
    Action("view_diff", "6", "Diff", "Show the instruction edits: Dynamo's code vs edited",
           "patch show", footer=False, group="Views"),
    Action("view_recompile", "7", "Recompile", "Show why this code recompiled, and the choices",
           "why", at_trace=False, footer=False, group="Views"),
    Action("view_stderr", "8", "Stderr", "Show what the program and torch wrote to stderr (warnings)",
           footer=False, group="Views"),
    Action("view_trace", "9", "Trace", "Show the trace stop: Dynamo's symbolic stack and locals, the graph and "
           "guards so far, the break", footer=False, group="Views"),
    Action("trace_break", "T", "Traced", "Show where Dynamo traced the graph break under the bytecode cursor "
           "(a break row of generated code): the recorded steps of that compile, the breaking one marked",
           "trace steps …", footer=False, group="Views", when="generated"),
    Action("console", "colon", "Console", "Focus the console (Escape leaves it)", footer=False, group="Views"),
    Action("explain", "X", "Explain", "Show or hide the Explain pane: what the cursor's instruction does, its "
           "stack effect, its role in Dynamo's code", "explain {cursor}", at_trace=False, footer=False, group="Views"),
    Action("maximize", "z", "Zoom", "Maximise the focused pane; again (or Escape) restores it", group="Views"),
    Action("help", "question_mark", "Help", "Show this help", group="Views"),
    Action("interrupt", "ctrl+c", "Interrupt", "Interrupt the running program at its next instruction",
           priority=True, footer=False, group="Program", when="running"),
    Action("quit", "q", "Quit", "End the program and leave the debugger", "q", group="Program"),
)

_BY_ID = {action.id: action for action in ACTIONS}


def get(action_id: str) -> Action:
    """The action called `action_id`.

    Raises:
        KeyError: no such action.
    """
    return _BY_ID[action_id]


def command_line(action_id: str, cursor: int | None = None, *, at_trace: bool = False) -> str | None:
    """The command-language line the action `action_id` counts as when a key or the palette does it: its
    `Action.command` with ``{cursor}`` replaced by `cursor` (the bytecode cursor's instruction index; None drops the
    argument: the command's default, the current instruction). None for an action with no command, one whose
    dialog makes the command (`Action.asks`: the dialog's answer is the command), one whose command has an
    argument the key picks itself (``…``: ``T``'s ``trace steps …``), or, `at_trace` (the program is at a trace
    stop), one whose command answers there from Dynamo's trace and its pane does not (`Action.at_trace`).

    Raises:
        KeyError: no such action.
    """
    action = _BY_ID[action_id]
    if action.command is None or action.asks or "…" in action.command or (at_trace and not action.at_trace):
        return None
    if "{cursor}" not in action.command:
        return action.command
    return action.command.replace("{cursor}", str(cursor)) if cursor is not None else \
        action.command.replace(" {cursor}", "").replace("{cursor}", "")


def bindings() -> list[Binding]:
    """Textual bindings for every action: ``dbg('<id>')`` on the action's keys, with the action id as binding id."""
    return [
        Binding(
            action.keys,
            f"dbg({action.id!r})",
            action.label,
            show=action.footer,
            priority=action.priority,
            tooltip=action.description,
            id=action.id,
        )
        for action in ACTIONS
    ]


def effective_keys(keymap: Mapping[str, str] | None = None) -> dict[str, str]:
    """Action id → comma-separated keys after applying `keymap` over the defaults."""
    keys = {action.id: action.keys for action in ACTIONS}
    for action_id, value in (keymap or {}).items():
        if action_id in keys:
            keys[action_id] = value
    return keys


def display_keys(keys: str) -> str:
    """Keys as a user reads them: ``"s,f11"`` → ``"s / F11"``, ``"question_mark"`` → ``"?"``."""
    names = {"question_mark": "?", "colon": ":", "space": "Space", "escape": "Esc", "enter": "Enter",
             "left_square_bracket": "[", "right_square_bracket": "]"}
    shown = []
    for key in (k.strip() for k in keys.split(",") if k.strip()):
        if key in names:
            shown.append(names[key])
        elif key.startswith("ctrl+"):
            shown.append("Ctrl+" + key[5:].upper() if len(key) == 6 else "Ctrl+" + key[5:])
        elif len(key) > 1 and key[0] == "f" and key[1:].isdigit():
            shown.append(key.upper())
        else:
            shown.append(key)
    return " / ".join(shown)


def load_keymap(path: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """Read a keymap: `path` if given, else ``$DYNADBG_KEYMAP`` (a file name, or JSON when it starts with ``{``).

    Args:
        path: a JSON file holding an object of action id → keys (``{"step": "s,f7"}``).
        environ: the environment to read ``DYNADBG_KEYMAP`` from (default `os.environ`).

    Returns:
        The valid entries, and one warning line per problem (unreadable file, bad JSON, unknown id, non-string
        keys). Problems never raise: the defaults stay in force.
    """
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    text: str | None = None
    origin = ""
    if path is not None:
        origin = str(path)
    else:
        value = environ.get(KEYMAP_ENV, "").strip()
        if not value:
            return {}, []
        if value.startswith("{"):
            text, origin = value, KEYMAP_ENV
        else:
            origin = value
    if text is None:
        try:
            text = Path(origin).read_text(encoding="utf-8")
        except OSError as exc:
            return {}, [f"keymap {origin}: cannot read it ({exc.strerror or exc})"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [f"keymap {origin}: not valid JSON ({exc.msg} at line {exc.lineno})"]
    if not isinstance(data, dict):
        return {}, [f"keymap {origin}: expected a JSON object of action id -> keys"]
    keymap: dict[str, str] = {}
    for action_id, keys in data.items():
        if action_id not in _BY_ID:
            warnings.append(f"keymap {origin}: unknown action {action_id!r}")
        elif not isinstance(keys, str) or not keys.strip():
            warnings.append(f"keymap {origin}: keys for {action_id!r} must be a non-empty string")
        else:
            keymap[action_id] = keys.replace(" ", "")
    return keymap, warnings


def action_ids() -> Iterable[str]:
    """Every action id, in registry order."""
    return (action.id for action in ACTIONS)


def markdown_table(keymap: Mapping[str, str] | None = None) -> str:
    """The registry as a Markdown table (the README's keys table is this text; a test checks they match).

    One row per action, in registry order: group, keys (after `keymap`), action id, what it does, the command
    it sends.
    """
    keys = effective_keys(keymap)
    rows = ["| group | keys | action | what it does | sends |", "|---|---|---|---|---|"]
    for action in ACTIONS:
        shown = " ".join(f"`{key}`" for key in display_keys(keys[action.id]).split(" / "))
        command = f"`{action.command}`" if action.command else ""
        rows.append(f"| {action.group} | {shown} | {action.id} | {action.description} | {command} |")
    return "\n".join(rows)
