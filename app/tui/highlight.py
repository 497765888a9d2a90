"""Colours for bytecode rows and source lines, from pygments tokens and a pygments style.

Nothing here highlights by hand: instruction arguments and source lines go through pygments' `PythonLexer`,
opnames are mapped to pygments token types by category, and every token type gets its colour from the pygments
style `STYLE_NAME` (through Rich's `PygmentsSyntaxTheme`). Backgrounds are dropped so the Textual theme shows
through. Results are cached: a row's segments are computed once per distinct text.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexers import PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token, _TokenType
from rich.segment import Segment
from rich.style import Style
from rich.syntax import PygmentsSyntaxTheme
from rich.text import Text

from dynadbg.core.model import ValueSummary

#: The pygments style the colours come from.
STYLE_NAME = "monokai"

_theme = PygmentsSyntaxTheme(STYLE_NAME)
_lexer = PythonLexer(stripnl=False, ensurenl=False)

#: Token types of the parts of a bytecode row that are not lexed.
INDEX = Number
OFFSET = Comment
LINENO = Comment.Special
JUMP = Number.Integer
MARK = Keyword.Pseudo

_PREFIX_TOKENS: tuple[tuple[tuple[str, ...], _TokenType], ...] = (
    (("JUMP", "POP_JUMP", "FOR_ITER", "RETURN", "RAISE", "RERAISE", "YIELD", "SEND", "END_FOR", "END_SEND",
      "SETUP_", "POP_EXCEPT", "PUSH_EXC_INFO", "CHECK_EXC_MATCH", "CLEANUP_THROW", "BEFORE_WITH", "WITH_"),
     Keyword),
    (("CALL", "PRECALL", "MAKE_FUNCTION", "KW_NAMES", "SET_FUNCTION_ATTRIBUTE"), Name.Function),
    (("STORE_", "DELETE_"), Name.Tag),
    (("BINARY_", "UNARY_", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "TO_BOOL", "INPLACE_"), Operator),
    (("BUILD_", "UNPACK_", "LIST_", "DICT_", "SET_ADD", "MAP_ADD", "FORMAT_", "CONVERT_VALUE"), String),
    (("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL", "NOT_TAKEN"), Comment),
    (("LOAD_", "PUSH_NULL", "POP_TOP", "COPY", "SWAP"), Name.Builtin),
)


@lru_cache(maxsize=None)
def token_style(token: _TokenType) -> Style:
    """The foreground style (colour, bold, italic) the pygments style gives `token`, background dropped."""
    style = _theme.get_style_for_token(token)
    return Style(color=style.color, bold=style.bold or None, italic=style.italic or None)


@lru_cache(maxsize=None)
def opname_token(opname: str) -> _TokenType:
    """The pygments token type an opname is coloured as, by its category (jumps/returns are keywords, ...)."""
    for prefixes, token in _PREFIX_TOKENS:
        if opname.startswith(prefixes):
            return token
    return Name


@lru_cache(maxsize=8192)
def python_segments(text: str) -> tuple[Segment, ...]:
    """`text` (one line: an instruction argument, a guard expression) lexed as Python into styled segments."""
    if not text:
        return ()
    return tuple(
        Segment(value, token_style(token))
        for token, value in _lexer.get_tokens(text)
        if value and value != "\n"
    )


def python_lines(source: str) -> list[tuple[Segment, ...]]:
    """A whole Python source text, lexed once, as one tuple of styled segments per line (newlines removed)."""
    lines: list[list[Segment]] = [[]]
    for token, value in _lexer.get_tokens(source):
        style = token_style(token)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append(Segment(part.replace("\t", "    "), style))
    if source.endswith("\n") and not lines[-1]:
        lines.pop()
    return [tuple(line) for line in lines]


def plain(token: _TokenType = Token.Text) -> Style:
    """Shorthand for `token_style` of a token type that is not lexed (indexes, offsets, markers)."""
    return token_style(token)


def value_text(value: ValueSummary, *, null_style: Style | None = None) -> Text:
    """One value-stack slot or local as styled text: ``NULL``, ``?``, a tensor summary, or a cut repr.

    Args:
        value: the engine's summary (`dynadbg.core.model.ValueSummary`).
        null_style: style for NULL and unknown slots (default: the pygments comment colour).
    """
    dim = null_style or token_style(Comment)
    if value.is_null:
        return Text("NULL", dim)
    if value.unknown:
        return Text("?", dim)
    if value.is_tensor:
        text = Text(value.text, token_style(Name.Class))
        if value.requires_grad and "grad" not in value.text:
            text.append(" requires_grad", dim)
        return text
    text = Text.assemble(*((seg.text, seg.style) for seg in python_segments(value.text.replace("\n", "\\n"))))
    if value.type_name and value.type_name not in ("int", "float", "str", "bool", "NoneType"):
        text.append(f"  {value.type_name}", dim)
    return text
