"""One-line glosses of Dynamo's terms, for a first-time reader of line mode's stop output.

`Glossary.new_terms` picks the terms a text uses that this session has not glossed yet, so each is explained
once, where the user first meets it.
"""

from __future__ import annotations

import re

#: term → (what in a stop's text shows it is used, the gloss in one line). In the order a user meets them.
TERMS: dict[str, tuple[re.Pattern[str], str]] = {
    "generated code": (re.compile(r"generated code"),
                       "the bytecode Dynamo wrote in place of your function's: it calls the "
                       "compiled graph(s) and runs what could not be traced"),
    "compile id": (re.compile(r"\bcompile \d+/\d+"),
                   "compile 0/1 is frame #0's second compile (frame # / compile # of that frame)"),
    "cache entry": (re.compile(r"\bentr(?:y|ies)\b"),
                    "one compiled version of a function; torch reuses it for a call whose guards all pass "
                    "(`entries` lists them)"),
    "guard": (re.compile(r"\bguards?\b"),
              "a check on the inputs (type, shape, value) that an entry was compiled for; when one fails on every "
              "entry, the function recompiles (`guards` shows them)"),
    "graph break": (re.compile(r"graph break"),
                    "where Dynamo stopped tracing your code (something it cannot put in a graph); "
                    "the rest runs in a resume function"),
    "resume function": (re.compile(r"resume function|torch_dynamo_resume_in_"),
                        "the function Dynamo makes for the code after a graph break (torch_dynamo_resume_in_*, "
                        "held in the global __resume_at_*); it receives the values on the stack (___stack0, ...) and "
                        "the live locals"),
    "FX graph": (re.compile(r"FX (?:graph|node|placeholder)|__compiled_fn_"),
                 "the graph of tensor operations Dynamo traced from your code; __compiled_fn_N runs it (an FX node "
                 "is one operation in it, `graph` prints it)"),
    # terms of the trace stops (compile time, inside Dynamo's own tracing)
    "variable tracker": (re.compile(r"\b(?:Tensor|Constant|SymNode|GetAttr|Null)Variable\b"),
                         "what Dynamo holds for each value while it traces your code: a TensorVariable stands for a "
                         "fake tensor and its FX node, a ConstantVariable for a value known at trace time"),
    "unrealized": (re.compile(r"\bunrealized\b"),
                   "an input Dynamo has not looked at yet (a lazy tracker); looking would add graph inputs and "
                   "guards, so dynadbg shows only its source and type"),
    "fake tensor": (re.compile(r"fake tensor|FakeTensor"),
                    "a tensor with a shape, strides, dtype and device but no data: what Dynamo runs each operation on "
                    "while it traces (`fake NAME`)"),
}


class Glossary:
    """Which terms one session has glossed so far."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    @property
    def complete(self) -> bool:
        """Every term was glossed: nothing is left to look for."""
        return len(self._said) == len(TERMS)

    def new_terms(self, text: str) -> list[str]:
        """``"(?) term: gloss"`` for each term `text` uses that was not glossed yet (then marked as glossed)."""
        out = []
        for term, (pattern, gloss) in TERMS.items():
            if term not in self._said and pattern.search(text):
                self._said.add(term)
                out.append(f"(?) {term}: {gloss}")
        return out
