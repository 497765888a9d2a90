"""The stance and config lines a recompile stop prints as the permanent form of ``eager`` and ``skip``, each with the
one description of what it does.

Each `Snippet` is a line of Python a user can paste and one sentence on its effect, true to torch's documented
behaviour (``torch.compiler.set_stance``'s docstring and eval_frame's ``_callback_from_stance``, torch 2.13.0 and
2.14.1; checked on programs by tests/advice): ``eager_on_recompile`` turns Dynamo's callback into "run only", so
from then on nothing is compiled, neither a recompile nor the first compile of a new function, while cached entries
keep serving the calls they accept; ``force_eager`` turns the callback off inside its block; a recompile limit
leaves a code object with the entries it has and runs later misses eagerly (a ``fullgraph=True`` call raises
``FailOnRecompileLimitHit`` instead). Every place that prints one of these lines takes its text and its
description from here (`choice_lines`), and README's table of choices is tested against `choices_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BUILT_PER_STOP", "CHOICE_EFFECTS", "SNIPPETS", "Snippet", "choice_lines", "choices_table",
           "choices_table_markdown"]


@dataclass(frozen=True)
class Snippet:
    """A permanent line and what it does.

    Attributes:
        key: its name here.
        code: the Python (``{n}`` stands for a number filled in where it is printed).
        effect: what it does, one clause (no leading capital, no full stop).
        scope: how far it reaches: ``"global"`` (every function, from where it runs), ``"block"`` (inside a
            ``with``), ``"call site"`` (the code compiled by one ``torch.compile`` call).
    """

    key: str
    code: str
    effect: str
    scope: str


SNIPPETS: dict[str, Snippet] = {s.key: s for s in (
    Snippet("default", "# nothing to write: recompiling on a guard failure is torch's default",
            "torch compiles a new cache entry for a call no entry accepts", "global"),
    Snippet("force_eager", 'with torch.compiler.set_stance("force_eager"): ...',
            "calls inside the block run uncompiled (torch.compile is ignored there); outside it torch compiles "
            "as before", "block"),
    Snippet("eager_on_recompile", 'torch.compiler.set_stance("eager_on_recompile")',
            "from here on torch compiles nothing, neither a recompile nor the first compile of another function; "
            "cached entries still serve the calls their guards accept, every other call runs eagerly", "global"),
    Snippet("recompile_limit_call", "recompile_limit={n}",
            "the code this torch.compile call compiles keeps at most {n} cache entr{ies}; a miss after that runs "
            "eagerly (with fullgraph=True torch raises FailOnRecompileLimitHit instead)", "call site"),
    Snippet("recompile_limit", "torch._dynamo.config.recompile_limit = {n}",
            "every code object keeps at most {n} cache entr{ies}; a miss after that runs eagerly (with "
            "fullgraph=True torch raises FailOnRecompileLimitHit instead)", "global"),
)}

#: What each recompile-stop choice does now, and which snippets give that effect for good (in the order printed).
CHOICE_EFFECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "recompile": ("Dynamo compiles a new entry", ("default",)),
    "eager": ("this call runs uncompiled; later calls may compile", ("force_eager", "eager_on_recompile")),
    "skip": ("stop compiling this code object; existing entries still serve", ("recompile_limit_call",
                                                                                "recompile_limit",
                                                                                "eager_on_recompile")),
}


def snippet_line(key: str, n: int | None = None, code: str | None = None, where: str = "") -> str:
    """``CODE   # EFFECT`` for one snippet (`code` replaces its code, e.g. the user's call with the keyword;
    `where` goes before the effect, e.g. ``"in place of torch.compile(f) at prog.py:3"``)."""
    s = SNIPPETS[key]
    shown = code if code is not None else s.code
    effect = s.effect
    if n is not None:
        shown, effect = shown.replace("{n}", str(n)), effect.replace("{n}", str(n))
    effect = effect.replace("entr{ies}", "entry" if n == 1 else "entries")
    if shown.startswith("#"):
        return shown                      # a comment already says it (torch's default: nothing to write)
    return f"{shown}   # {where + ': ' if where else ''}{effect}"


def choice_lines(choice: str, *, n: int | None = None, call_with_limit: str | None = None,
                 where: str = "") -> list[str]:
    """The permanent lines of ``eager`` / ``skip`` / ``recompile``, each with its description.

    Args:
        choice: the choice.
        n: the entry count a recompile limit keeps (the code object's entries now); without it the limit lines
            are left out.
        call_with_limit: the user's ``torch.compile`` call with ``recompile_limit=n`` added, None when no call
            site is known (the call-site line is then left out).
        where: which call `call_with_limit` replaces (``"in place of torch.compile(f) at prog.py:3"``).
    """
    out = []
    for key in CHOICE_EFFECTS[choice][1]:
        if key.startswith("recompile_limit"):
            if n is None:
                continue
            if key == "recompile_limit_call":
                if call_with_limit is None:
                    continue
                out.append(snippet_line(key, n, call_with_limit, where))
                continue
        out.append(snippet_line(key, n))
    return out


#: The two choices whose permanent code is built per stop (checked there), described for README's table.
BUILT_PER_STOP: dict[str, tuple[str, str]] = {
    "drop [ID...]": (
        "recompile without the named failing guards; with no ids, without the default's (global-state, mode-flag, "
        "dispatch-mode and whole-tensor guards are left out, each said with why; when that leaves nothing, `drop` "
        "drops nothing and the program stays paused); warns when a dropped guard pinned a value Dynamo baked in",
        "a `guard_filter_fn` on the user's own `torch.compile` call, built from that compile's guard filter entries "
        "and evaluated on them: printed only when it drops exactly those guards, else the stop says why no filter "
        "can"),
    "dynamic NAME DIM": (
        "mark that input dimension dynamic, then recompile (refused for a size of 0 or 1: torch specialises those)",
        "`torch._dynamo.mark_dynamic(NAME, DIM)` on the tensor before the call (`torch._dynamo.decorators."
        "mark_unbacked(NAME, DIM)` for a size of 0 or 1); the next compile is read back to say whether the "
        "dimension really became dynamic"),
}


def choices_table() -> list[tuple[str, str, str]]:
    """(choice, effect, permanent equivalents) of ``recompile``, ``eager``, ``skip``: the rows README's table of
    choices shows (``drop`` and ``dynamic`` are built per stop: a checked ``guard_filter_fn``, a ``mark_dynamic``)."""
    rows = []
    for choice, (effect, keys) in CHOICE_EFFECTS.items():
        codes = []
        for key in keys:
            s = SNIPPETS[key]
            if key == "default":
                continue
            code = "torch.compile(..., recompile_limit=N)" if key == "recompile_limit_call" else s.code.replace(
                "{n}", "N")
            codes.append(f"`{code}` ({s.effect.replace('{n}', 'N').replace('entr{ies}', 'entries')})")
        rows.append((choice, effect, "; or ".join(codes) if codes else "nothing: torch's default"))
    rows += [(choice, effect, code) for choice, (effect, code) in BUILT_PER_STOP.items()]
    return rows


def choices_table_markdown() -> str:
    """README's table of recompile-stop choices, as the code prints them (tests/core/test_advice.py checks that
    README holds exactly this)."""
    lines = ["| choice | what it does now | printed permanent equivalent |", "|---|---|---|"]
    lines += [f"| `{choice}` | {effect} | {code} |" for choice, effect, code in choices_table()]
    return "\n".join(lines)
