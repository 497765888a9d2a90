"""The verb registry of the command language: one `CommandSpec` per verb, made where its handler is written.

A verb is registered once, by decorating its handler with `Verbs.verb`: its spellings, its help line, whether it
lets the program go on, and the `Engine` method it calls. Which verbs work while the program runs is not kept
here: it is the `anytime` flag of that engine method (`dynadbg.core.engine_base.engine_method`), read from the
engine the command runs on (`runs_anytime`). `dynadbg.core.commands` registers the verbs that work at any stop,
`dynadbg.core.trace_commands` those of trace stops; `commands.COMMANDS` lists both in registration order (the
order help lists them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal

if TYPE_CHECKING:
    from .model import CommandResult
    from .protocol import Engine

#: A verb's handler: (engine, argument text) -> result; a `CommandSpec.stateful` one also gets the
#: `dynadbg.core.commands.CommandLine` it runs in, for what the command line keeps between commands.
Handler = Callable[..., "CommandResult"]


@dataclass(frozen=True)
class CommandSpec:
    """One verb of the command language.

    Attributes:
        name: the verb (``"s"``).
        aliases: other spellings (``("step",)``).
        help: the help line, ``"SYNTAX: what it does"``.
        resumes: the verb lets the program go on (when it succeeds).
        calls: the `Engine` method the verb calls (None: it calls none, as ``h``); whether the verb works while
            the program runs is that method's ``anytime`` flag.
        bare: the method it calls when given no argument, when that is another one (``b`` lists the breakpoints:
            ``list_breakpoints``); None: `calls` either way.
        history: the verb works while a recorded stop is shown (`back`): it reads the shown stop or touches no
            frame (``"bare"``: only without an argument, as ``b`` lists). A resuming verb goes back to the present
            first; any other verb is refused there.
        read_only: the verb changes neither the program, the selected frame, breakpoints, watches, the code nor
            what the next command shows, so running it again answers the same.
        after_end: the verb still works once the program has finished.
        handler: the function that runs the verb.
        stateful: the handler also takes the `CommandLine` (``l`` continues where the last ``l`` ended).
        takes_arg: the verb reads an argument; one that does not (``ll``, ``c``) refuses one rather than ignore
            it (a newcomer's ``ll 5`` listed everything and looked like it had listed around 5).
    """

    name: str
    aliases: tuple[str, ...]
    help: str
    handler: Handler = field(compare=False, repr=False)
    resumes: bool = False
    calls: str | None = None
    bare: str | None = None
    history: bool | Literal["bare"] = False
    read_only: bool = False
    after_end: bool = False
    stateful: bool = False
    takes_arg: bool = True

    def method(self, arg: str) -> str | None:
        """The engine method the verb calls with argument text `arg` (None: none)."""
        return self.bare if self.bare is not None and not arg.strip() else self.calls

    def shows_history(self, arg: str) -> bool:
        """Whether the verb with argument text `arg` works while a recorded stop is shown (see `history`)."""
        return self.history is True or (self.history == "bare" and not arg.strip())


def runs_anytime(engine: "Engine | type", method: str | None) -> bool:
    """Whether engine method `method` works while the program runs: its ``anytime`` flag (set by
    `engine_base.engine_method` and `engine_base.anytime`) on `engine` or its class. None (no method): True. A
    method without the flag, or one the engine lacks, needs a stop."""
    if method is None:
        return True
    fn = getattr(engine if isinstance(engine, type) else type(engine), method, None)
    return bool(getattr(fn, "anytime", False))


class Verbs:
    """An ordered registry of verbs: ``@verbs.verb("s", "step", help=..., resumes=True, calls="set_step")`` on
    the handler registers it; `specs` lists them in registration order."""

    def __init__(self) -> None:
        self.specs: list[CommandSpec] = []

    def verb(self, name: str, *aliases: str, help: str, resumes: bool = False,  # noqa: A002 - the help line
             calls: str | None = None, bare: str | None = None, history: bool | Literal["bare"] = False,
             read_only: bool = False, after_end: bool = False, stateful: bool = False,
             takes_arg: bool = True) -> Callable[[Handler], Handler]:
        """Register the decorated handler as verb `name` (spelled also `aliases`); see `CommandSpec`."""

        def register(handler: Handler) -> Handler:
            self.specs.append(CommandSpec(name, aliases, help, handler, resumes, calls, bare, history, read_only,
                                          after_end, stateful, takes_arg))
            return handler

        return register
