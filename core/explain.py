"""Plain-words explanations: what an opcode does (on this Python, with how 3.11–3.13 differ), what one
instruction does to the value stack with the live values at a stop, what its role in Dynamo's code is, and
what each guard type checks.

All texts are the project's own words. Functions here are pure: they take a code object, an index and
(optionally) the value summaries a stop already holds, and return frozen records (`model.Explanation`,
`model.StackEffectView`, `model.GuardHelp`).
"""

from __future__ import annotations

from types import CodeType
from typing import Sequence

from . import compat, flow
from .model import Explanation, GuardHelp, InstrRole, StackEffectView, ValueSummary
from .provenance import raw_stack, slot_expression
from .roles import CodegenFacts, ROLE_HELP, code_roles, flow_of

_V = compat.PYTHON_VERSION

# --------------------------------------------------------------------------------------------------------------
# Opcodes: (meaning, version note). Every opcode that shows up in Dynamo-generated code on 3.11-3.13 (and in
# the copies of user code inside resume functions) has an entry.
# --------------------------------------------------------------------------------------------------------------

OPCODES: dict[str, tuple[str, str]] = {
    # frame set-up
    "RESUME": ("Marks the point where the function (re)starts running; does nothing to the stack. The "
               "interpreter uses it to check for tracing and interrupts.", ""),
    "NOP": ("Does nothing; a placeholder kept so line numbers or jump targets stay valid.", ""),
    "CACHE": ("Not a real instruction: space the interpreter uses to remember what it learned while running "
              "the instruction before it.", "dis hides these unless asked."),
    "EXTENDED_ARG": ("Supplies the high bits of the next instruction's argument when it does not fit in one "
                     "byte.", ""),
    "COPY_FREE_VARS": ("Copies the closure's cells into the frame, so the function can read its free "
                       "variables.", ""),
    "MAKE_CELL": ("Wraps a local in a new cell so inner functions can share it.", ""),
    # loads
    "LOAD_FAST": ("Pushes the value of a local variable.", "3.12 adds LOAD_FAST_CHECK for locals that may be "
                  "unbound; 3.13 fuses two in a row into LOAD_FAST_LOAD_FAST."),
    "LOAD_FAST_CHECK": ("Pushes a local variable, raising UnboundLocalError if it has no value yet.",
                        "3.12+; 3.11 uses plain LOAD_FAST."),
    "LOAD_FAST_AND_CLEAR": ("Pushes a local (or NULL if unset) and clears it; used around inlined "
                            "comprehensions.", "3.12+."),
    "LOAD_FAST_LOAD_FAST": ("Pushes two locals, in order, in one instruction.", "3.13+; earlier versions use "
                            "two LOAD_FAST."),
    "LOAD_CONST": ("Pushes a constant from the code object's constants.", ""),
    "LOAD_GLOBAL": ("Pushes a global (or builtin) by name. When the argument's low bit is set it also pushes "
                    "a NULL so the value can be called with CALL.",
                    "3.11 and 3.12 push the NULL below the global; 3.13 pushes it above (callable, then NULL)."),
    "LOAD_DEREF": ("Pushes the value held in a cell or free variable.", ""),
    "LOAD_CLOSURE": ("Pushes the cell itself (not its value), to build a closure.", "A pseudo-op for "
                     "LOAD_FAST in 3.13's compiler output."),
    "LOAD_NAME": ("Pushes a name looked up in locals, then globals, then builtins (module and class "
                  "bodies).", ""),
    "LOAD_ATTR": ("Replaces the object on top of the stack with one of its attributes.",
                  "3.12+: when the low bit is set it pushes two slots for a method call (the function and "
                  "self, or the attribute and NULL); 3.11 uses LOAD_METHOD for that."),
    "LOAD_METHOD": ("Looks up a method on the object on top of the stack and pushes two slots: the function "
                    "and self (or NULL and the attribute), ready for CALL.", "3.11 only; 3.12+ uses LOAD_ATTR "
                    "with the low bit set."),
    "LOAD_SUPER_ATTR": ("Implements super().name: pops super, the class and self, pushes the attribute (two "
                        "slots for a method call).", "3.12+."),
    "LOAD_ASSERTION_ERROR": ("Pushes AssertionError, for a failing assert.", ""),
    "LOAD_BUILD_CLASS": ("Pushes builtins.__build_class__, used by class statements.", ""),
    "LOAD_LOCALS": ("Pushes the locals dictionary.", "3.12+."),
    "LOAD_FROM_DICT_OR_GLOBALS": ("Looks a name up in the mapping on the stack, then in globals.", "3.12+."),
    "LOAD_FROM_DICT_OR_DEREF": ("Looks a name up in the mapping on the stack, then in a cell.", "3.12+."),
    "LOAD_CLASSDEREF": ("Looks a free variable up in a class body's locals, then in its cell.", "3.11 only."),
    "PUSH_NULL": ("Pushes a NULL: an empty slot that tells CALL there is no self argument.", "3.11+."),
    # stores and deletes
    "STORE_FAST": ("Pops the top of the stack into a local variable.", "3.13 fuses pairs into "
                   "STORE_FAST_STORE_FAST / STORE_FAST_LOAD_FAST."),
    "STORE_FAST_STORE_FAST": ("Pops two values into two locals.", "3.13+."),
    "STORE_FAST_LOAD_FAST": ("Pops into one local, then pushes another.", "3.13+."),
    "STORE_NAME": ("Pops into a name in the local namespace (module and class bodies).", ""),
    "STORE_GLOBAL": ("Pops into a global variable of the function's module.", ""),
    "STORE_DEREF": ("Pops into a cell (a variable shared with inner or outer functions).", ""),
    "STORE_ATTR": ("Sets an attribute: pops the object and the value and does obj.name = value.", ""),
    "STORE_SUBSCR": ("Item assignment: pops value, container and key and does container[key] = value.", ""),
    "STORE_SLICE": ("Slice assignment container[start:stop] = value, from four stack slots.", "3.12+; 3.11 "
                    "builds a slice object and uses STORE_SUBSCR."),
    "DELETE_FAST": ("Unbinds a local variable (del name).", ""),
    "DELETE_NAME": ("Unbinds a name in the local namespace.", ""),
    "DELETE_GLOBAL": ("Unbinds a global variable.", ""),
    "DELETE_DEREF": ("Empties a cell.", ""),
    "DELETE_ATTR": ("Pops an object and deletes one of its attributes.", ""),
    "DELETE_SUBSCR": ("Pops a container and a key and deletes container[key].", ""),
    # stack shuffling
    "POP_TOP": ("Discards the top of the stack.", ""),
    "COPY": ("Pushes another reference to the value N slots down (COPY 1 duplicates the top).", "3.11+; "
             "replaces DUP_TOP."),
    "SWAP": ("Exchanges the top of the stack with the value N slots down.", "3.11+; replaces ROT_N."),
    # operators
    "BINARY_OP": ("Pops two operands and pushes the result of the operator in the argument (+, -, *, @, "
                  "+= ...).", ""),
    "BINARY_SUBSCR": ("Pops a container and a key and pushes container[key].", ""),
    "BINARY_SLICE": ("Pops container, start and stop and pushes container[start:stop].", "3.12+."),
    "COMPARE_OP": ("Pops two values and pushes the result of a comparison (<, ==, ...).", "3.13 may also "
                   "convert the result to bool when the argument says so."),
    "IS_OP": ("Pushes whether two popped values are the same object (is / is not).", ""),
    "CONTAINS_OP": ("Pushes whether the first popped value is in the second (in / not in).", ""),
    "UNARY_NEGATIVE": ("Replaces the top with its negation (-x).", ""),
    "UNARY_NOT": ("Replaces the top with not x.", ""),
    "UNARY_INVERT": ("Replaces the top with ~x.", ""),
    "UNARY_POSITIVE": ("Replaces the top with +x.", "Gone in 3.12 (an intrinsic)."),
    "TO_BOOL": ("Replaces the top with bool(x).", "3.13+; conditional jumps then take only bools."),
    "GET_LEN": ("Pushes len() of the top value, keeping the value.", ""),
    "FORMAT_VALUE": ("Formats a value for an f-string (with an optional spec on the stack).", "3.11-3.12; 3.13 "
                     "splits it into CONVERT_VALUE, FORMAT_SIMPLE and FORMAT_WITH_SPEC."),
    "FORMAT_SIMPLE": ("Formats the top value for an f-string.", "3.13+."),
    "FORMAT_WITH_SPEC": ("Formats a value with a format spec for an f-string.", "3.13+."),
    "CONVERT_VALUE": ("Applies str(), repr() or ascii() for an f-string's !s/!r/!a.", "3.13+."),
    "CALL_INTRINSIC_1": ("Runs one of the interpreter's built-in helpers on the top value (unary +, list to "
                         "tuple, import *, ...).", "3.12+."),
    "CALL_INTRINSIC_2": ("Runs one of the interpreter's built-in helpers on two values.", "3.12+."),
    # building containers
    "BUILD_TUPLE": ("Pops N values and pushes a tuple of them.", ""),
    "BUILD_LIST": ("Pops N values and pushes a list of them.", ""),
    "BUILD_SET": ("Pops N values and pushes a set of them.", ""),
    "BUILD_MAP": ("Pops N key/value pairs and pushes a dict.", ""),
    "BUILD_CONST_KEY_MAP": ("Pops N values and a tuple of keys and pushes a dict.", "Gone in 3.13."),
    "BUILD_STRING": ("Pops N strings and pushes them joined.", ""),
    "BUILD_SLICE": ("Pops start, stop (and step) and pushes a slice object.", ""),
    "LIST_EXTEND": ("Extends the list N slots down with the popped iterable (the list stays).", ""),
    "LIST_APPEND": ("Appends the popped value to the list N slots down.", ""),
    "LIST_TO_TUPLE": ("Replaces a list with a tuple of its items.", "3.11 only; 3.12+ uses an intrinsic."),
    "SET_UPDATE": ("Updates the set N slots down with the popped iterable.", ""),
    "SET_ADD": ("Adds the popped value to the set N slots down.", ""),
    "DICT_UPDATE": ("Updates the dict N slots down with the popped mapping.", ""),
    "DICT_MERGE": ("Like DICT_UPDATE, but duplicate keys are an error (for **kwargs).", ""),
    "MAP_ADD": ("Adds the popped key and value to the dict N slots down.", ""),
    "UNPACK_SEQUENCE": ("Pops a sequence and pushes its N items, last item deepest, so the first ends on "
                        "top.", ""),
    "UNPACK_EX": ("Unpacks with a starred target (a, *b, c = ...).", ""),
    # calls
    "PRECALL": ("Gets a call ready (no stack change of its own); always followed by CALL.",
                "3.11 only; 3.12 dropped it."),
    "KW_NAMES": ("Records which of the next CALL's arguments are passed by keyword.", "3.11-3.12; 3.13 uses "
                 "CALL_KW instead."),
    "CALL": ("Calls a function. Below the N arguments sit two slots: a NULL and the callable, or a method and "
             "its self; all are popped and the result is pushed.",
             "3.11 needs PRECALL first; 3.11 and 3.12 expect (NULL, callable), 3.13 expects (callable, NULL or "
             "self)."),
    "CALL_KW": ("Calls a function with keyword arguments; a tuple of keyword names sits on top.", "3.13+."),
    "CALL_FUNCTION_EX": ("Calls a function with its positional arguments packed in one tuple or list (and "
                         "keyword arguments in a dict when the low bit is set), as f(*args, **kw) does.",
                         "A NULL sits next to the callable on 3.11-3.13, like for CALL."),
    "MAKE_FUNCTION": ("Builds a function object from a code object (and defaults, closure, annotations "
                      "flagged by the argument).", "3.13 builds it bare and adds the extras with "
                      "SET_FUNCTION_ATTRIBUTE."),
    "SET_FUNCTION_ATTRIBUTE": ("Attaches defaults, a closure or annotations to a new function.", "3.13+."),
    "RETURN_VALUE": ("Returns the top of the stack to the caller.", ""),
    "RETURN_CONST": ("Returns a constant without pushing it first.", "3.12+."),
    "RETURN_GENERATOR": ("Turns the frame into a generator or coroutine object and returns it.", ""),
    "YIELD_VALUE": ("Hands the top value to whoever resumed the generator and pauses.", ""),
    "SEND": ("Sends a value into a sub-generator (yield from / await).", ""),
    "END_SEND": ("Cleans up after a finished SEND.", "3.12+."),
    "GET_YIELD_FROM_ITER": ("Gets the iterator for yield from.", ""),
    "GET_AWAITABLE": ("Gets the awaitable behind an await.", ""),
    "GET_AITER": ("Calls __aiter__ for async for.", ""),
    "GET_ANEXT": ("Calls __anext__ for async for.", ""),
    "END_ASYNC_FOR": ("Ends an async for loop on StopAsyncIteration.", ""),
    "CLEANUP_THROW": ("Handles an exception thrown into a sub-generator.", "3.12+."),
    "ASYNC_GEN_WRAP": ("Wraps a value yielded by an async generator.", "3.11 only."),
    # jumps
    "JUMP_FORWARD": ("Jumps forward to the target (no stack change).", ""),
    "JUMP_BACKWARD": ("Jumps back to the target, e.g. to the top of a loop.", ""),
    "JUMP_BACKWARD_NO_INTERRUPT": ("Jumps back without checking for interrupts (inside generator "
                                   "machinery).", ""),
    "POP_JUMP_IF_FALSE": ("Pops a value and jumps if it is false.", "3.12+ (3.13: the value must be a bool); "
                          "3.11 spells it POP_JUMP_FORWARD_IF_FALSE / POP_JUMP_BACKWARD_IF_FALSE."),
    "POP_JUMP_IF_TRUE": ("Pops a value and jumps if it is true.", "3.12+; 3.11 has forward/backward forms."),
    "POP_JUMP_IF_NONE": ("Pops a value and jumps if it is None.", "3.12+; 3.11 has forward/backward forms."),
    "POP_JUMP_IF_NOT_NONE": ("Pops a value and jumps if it is not None.", "3.12+; 3.11 has forward/backward "
                             "forms."),
    "POP_JUMP_FORWARD_IF_FALSE": ("Pops a value and jumps forward if it is false.", "3.11 only."),
    "POP_JUMP_FORWARD_IF_TRUE": ("Pops a value and jumps forward if it is true.", "3.11 only."),
    "POP_JUMP_FORWARD_IF_NONE": ("Pops a value and jumps forward if it is None.", "3.11 only."),
    "POP_JUMP_FORWARD_IF_NOT_NONE": ("Pops a value and jumps forward if it is not None.", "3.11 only."),
    "POP_JUMP_BACKWARD_IF_FALSE": ("Pops a value and jumps back if it is false.", "3.11 only."),
    "POP_JUMP_BACKWARD_IF_TRUE": ("Pops a value and jumps back if it is true.", "3.11 only."),
    "POP_JUMP_BACKWARD_IF_NONE": ("Pops a value and jumps back if it is None.", "3.11 only."),
    "POP_JUMP_BACKWARD_IF_NOT_NONE": ("Pops a value and jumps back if it is not None.", "3.11 only."),
    "JUMP_IF_FALSE_OR_POP": ("If the top is false, jumps and keeps it; otherwise pops it (for `and`).",
                             "3.11 only."),
    "JUMP_IF_TRUE_OR_POP": ("If the top is true, jumps and keeps it; otherwise pops it (for `or`).",
                            "3.11 only."),
    "GET_ITER": ("Replaces the top with iter() of it.", ""),
    "FOR_ITER": ("Pushes the next item of the iterator on top; when it is exhausted, jumps out of the loop.",
                 "3.11 pops the iterator on exit; 3.12+ leaves it for END_FOR to pop."),
    "END_FOR": ("Pops what a finished for loop left on the stack.", "3.12+ (two slots on 3.12, one on 3.13)."),
    # with / exceptions
    "BEFORE_WITH": ("Enters a with block: pops the context manager, pushes its __exit__ and the result of "
                    "__enter__().", "3.11-3.13."),
    "BEFORE_ASYNC_WITH": ("Enters an async with block.", ""),
    "WITH_EXCEPT_START": ("Calls the with block's __exit__ with the exception being handled.", ""),
    "PUSH_EXC_INFO": ("Starts an exception handler: saves the exception being handled and pushes the new "
                      "one.", ""),
    "POP_EXCEPT": ("Ends an exception handler, restoring the exception that was handled before.", ""),
    "CHECK_EXC_MATCH": ("Pushes whether the exception matches the type on top (for except T:).", ""),
    "RERAISE": ("Raises the exception on top again (with its original traceback).", ""),
    "RAISE_VARARGS": ("raise: with 0 arguments re-raises, with 1 raises the exception, with 2 raises it from "
                      "a cause.", ""),
    "PREP_RERAISE_STAR": ("Combines exceptions for except*.", "3.11 only."),
    # imports and misc
    "IMPORT_NAME": ("Imports a module (pops the level and the fromlist) and pushes it.", ""),
    "IMPORT_FROM": ("Pushes an attribute of the module on top (from m import name).", ""),
    "IMPORT_STAR": ("Imports every public name of a module into the namespace.", "3.11 only; an intrinsic "
                    "later."),
    "MATCH_CLASS": ("Tests a value against a class pattern (match statement).", ""),
    "MATCH_MAPPING": ("Pushes whether the top value is a mapping (match statement).", ""),
    "MATCH_SEQUENCE": ("Pushes whether the top value is a sequence (match statement).", ""),
    "MATCH_KEYS": ("Looks keys up for a mapping pattern (match statement).", ""),
    "SETUP_ANNOTATIONS": ("Creates __annotations__ in a module or class body.", ""),
    "PRINT_EXPR": ("Prints an expression's value in the interactive interpreter.", "3.11 only."),
    "EXIT_INIT_CHECK": ("Checks that __init__ returned None.", "3.13+."),
    "INTERPRETER_EXIT": ("Leaves the interpreter loop (internal).", "3.12+."),
    "COPY_DICT_WITHOUT_KEYS": ("Copies a mapping without some keys (match statement).", "3.11 only."),
    "CHECK_EG_MATCH": ("Splits an exception group for except*: pushes the part that matches and the rest.", ""),
    "ENTER_EXECUTOR": ("Hands control to code the interpreter optimised for this loop (internal).", "3.13+."),
    "RESERVED": ("A reserved opcode number; never runs.", "3.12+."),
    # pseudo-instructions: the compiler's names, replaced before the code object is made (a listing from
    # the `bytecode` library or an edit may still show them)
    "SETUP_FINALLY": ("Compiler pseudo-instruction: starts a try block (becomes an exception-table entry).",
                      "3.12+ names it in dis; never in real bytecode."),
    "SETUP_CLEANUP": ("Compiler pseudo-instruction: starts a cleanup region (becomes an exception-table entry).",
                      "3.12+ names it in dis; never in real bytecode."),
    "SETUP_WITH": ("Compiler pseudo-instruction: starts a with block's protected region.",
                   "3.12+ names it in dis; never in real bytecode."),
    "POP_BLOCK": ("Compiler pseudo-instruction: ends a protected region (becomes a NOP or disappears).",
                  "3.12+ names it in dis; never in real bytecode."),
    "JUMP": ("Compiler pseudo-instruction: a jump the compiler turns into JUMP_FORWARD or JUMP_BACKWARD.",
             "3.12+; never in real bytecode."),
    "JUMP_NO_INTERRUPT": ("Compiler pseudo-instruction: a jump that skips the interrupt check.",
                          "3.12+; never in real bytecode."),
    "LOAD_SUPER_METHOD": ("Compiler pseudo-instruction for super().method(): becomes LOAD_SUPER_ATTR.",
                          "3.12+; never in real bytecode."),
    "LOAD_ZERO_SUPER_METHOD": ("Compiler pseudo-instruction for a zero-argument super().method().",
                               "3.12+; never in real bytecode."),
    "LOAD_ZERO_SUPER_ATTR": ("Compiler pseudo-instruction for a zero-argument super().name.",
                             "3.12+; never in real bytecode."),
    "STORE_FAST_MAYBE_NULL": ("Compiler pseudo-instruction: a STORE_FAST whose value may be NULL.",
                              "3.12+; never in real bytecode."),
}


def opcode_help(opname: str) -> tuple[str, str] | None:
    """(meaning, version note) of `opname`, or None when the table has no entry."""
    return OPCODES.get(opname)


# --------------------------------------------------------------------------------------------------------------
# stack effect with live values
# --------------------------------------------------------------------------------------------------------------

def _pushed_words(op: flow.Op, pushes: int) -> list[str]:
    name = op.opname
    if name == "LOAD_GLOBAL" and pushes == 2:
        g = f"the global {op.argval}"
        return [g, "NULL"] if compat.PY313 else ["NULL", g]
    if name in ("LOAD_ATTR", "LOAD_METHOD") and pushes == 2:
        return [f"the method {op.argval} (or NULL)", "self (or the attribute)"]
    if name == "PUSH_NULL":
        return ["NULL"]
    if name.startswith("LOAD_FAST") or name in ("LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME"):
        return [f"the value of {op.argval}"] * pushes
    if name == "LOAD_GLOBAL":
        return [f"the global {op.argval}"]
    if name == "LOAD_CONST":
        return [f"the constant {op.argrepr}"]
    if name in ("LOAD_ATTR", "LOAD_METHOD"):
        return [f"the attribute {op.argval}"]
    if name in ("CALL", "CALL_KW", "CALL_FUNCTION_EX"):
        return ["the call's result"]
    if name == "UNPACK_SEQUENCE":
        return [f"item {pushes - 1 - k}" for k in range(pushes)]
    if name.startswith("BUILD_"):
        return [f"the new {name[6:].lower()}"]
    if name in ("BINARY_OP", "BINARY_SUBSCR", "BINARY_SLICE", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
        return ["the result"]
    return ["a value"] * pushes


def stack_effect(code: CodeType, index: int, live: Sequence[ValueSummary] | None = None,
                 path: Sequence[int] | None = None) -> StackEffectView:
    """What instruction `index` of `code` pops and pushes, naming the live values when a stop gave them.

    Args:
        code: the code object.
        index: the instruction (as in `CodeView.instructions`).
        live: the value-stack slots at the stop before `index` runs, bottom first (`FrameView.stack`), or None.
        path: executed instruction indexes ending at `index` (for the depth at a jump target), or None.

    Raises:
        IndexError: `index` is out of range.
    """
    ops, state = flow_of(code)
    op = ops[index]
    slots, _how = raw_stack(code, index, path)
    depth = len(slots)
    if live is not None and len(live) != depth:
        depth = len(live)

    def val(pos: int) -> str:
        if live is not None and 0 <= pos < len(live):
            return live[pos].text
        if 0 <= pos < len(slots):
            return slot_expression(code, slots[pos])
        return "?"

    if op.opname == "COPY":
        n = op.arg or 1
        pos = depth - n
        text = f"pops nothing; pushes a copy of slot {pos} ({val(pos)})"
        return StackEffectView(index, (), (f"copy of slot {pos}",), 1, text)
    if op.opname == "SWAP":
        n = op.arg or 2
        a, b = depth - n, depth - 1
        text = f"swaps slot {a} ({val(a)}) with the top, slot {b} ({val(b)})"
        return StackEffectView(index, (), (), 0, text)
    pops, pushes = flow.pops_pushes(op)
    popped = tuple((p, val(p)) for p in range(max(0, depth - pops), depth))
    words = tuple(_pushed_words(op, pushes))
    parts = []
    if popped:
        parts.append(f"pops {len(popped)} (" + ", ".join(f"slot {p}: {v}" for p, v in popped) + ")")
    else:
        parts.append("pops nothing")
    if words:
        parts.append(f"pushes {len(words)}: " + ", ".join(words))
    else:
        parts.append("pushes nothing")
    return StackEffectView(index, popped, words, pushes - pops, "; ".join(parts))


# --------------------------------------------------------------------------------------------------------------
# the whole explanation
# --------------------------------------------------------------------------------------------------------------

def role_sentence(role: InstrRole | None) -> str:
    """The role of an instruction in one sentence (``"Graph call: calls the FX graph __compiled_fn_2 with x,
    self.fc1.weight and leaves its outputs as a tuple."``)."""
    if role is None:
        return ""
    head = role.role.value[0].upper() + role.role.value[1:]
    body = role.detail or ROLE_HELP[role.role]
    src = " (from the capture)" if role.source == "capture" else " (read from the code's shape)"
    return f"{head}: {body}{src}."


def explain(code: CodeType, index: int, live: Sequence[ValueSummary] | None = None, *,
            facts: CodegenFacts | None = None, generated: bool = True,
            path: Sequence[int] | None = None) -> Explanation:
    """Everything `explain IDX` shows for instruction `index` of `code`.

    Args:
        code: the code object the instruction belongs to.
        index: the instruction.
        live: value-stack summaries at the stop (bottom first), or None when not stopped before `index`.
        facts: capture records for roles (`roles.facts_from_capture`).
        generated: False for user code (no role).
        path: executed instruction indexes ending at `index`, if the engine recorded them.

    Raises:
        IndexError: `index` is out of range.
    """
    ops, _ = flow_of(code)
    op = ops[index]
    meaning, note = OPCODES.get(op.opname, (f"{op.opname}: no explanation in dynadbg's table for Python {_V}.",
                                            ""))
    role = code_roles(code, facts).roles[index] if generated else None
    return Explanation(
        index=index, opname=op.opname, argrepr=op.argrepr, meaning=meaning, version_note=note,
        stack=stack_effect(code, index, live, path), role=role, role_sentence=role_sentence(role),
    )


# --------------------------------------------------------------------------------------------------------------
# Guards: every leaf guard type torch 2.13's guard manager can hold (torch._C._dynamo.guards), in plain words.
# --------------------------------------------------------------------------------------------------------------

GUARD_HELP: dict[str, tuple[str, str]] = {
    "TYPE_MATCH": ("the value's exact type is the one seen at compile time",
                   "passing a value of another type (a float where an int was, a subclass, a different class)"),
    "ID_MATCH": ("the value is the very same object seen at compile time (same id)",
                 "passing or assigning a different object, even an equal one (another module instance, a "
                 "rebound global function)"),
    "EQUALS_MATCH": ("the value equals the constant Dynamo baked into the graph",
                     "a different value of a Python scalar, string or tuple that was treated as a constant "
                     "(e.g. n=3 then n=4)"),
    "TENSOR_MATCH": ("a tensor's dtype, device, requires_grad, dispatch keys and (for static dims) sizes and "
                     "strides match",
                     "a tensor with another shape, dtype, device or layout, or with requires_grad toggled"),
    "DICT_LENGTH": ("a dict has the same number of entries as at compile time",
                    "adding or removing a key"),
    "LENGTH_CHECK": ("a list, tuple or other sized value has the same length as at compile time",
                     "passing a longer or shorter sequence"),
    "TUPLE_ITERATOR_LEN": ("an iterator over a tuple still has the same number of items left",
                           "advancing the iterator before the call, or a tuple of another length"),
    "RANGE_ITERATOR_MATCH": ("a range iterator has the same start, stop, step and position",
                             "a range with other bounds or an iterator advanced to another position"),
    "DICT_VERSION": ("a dict has not been modified since compile time (its internal version tag)",
                     "any write to the dict, even setting a key to the value it already had"),
    "DICT_CONTAINS": ("a key is (or is not) in a dict",
                      "adding or removing that key"),
    "SET_CONTAINS": ("an item is (or is not) in a set",
                     "adding or removing that item"),
    "MAPPING_KEYS_MATCH": ("a mapping has exactly the keys seen at compile time, in the same order",
                           "adding, removing or reordering keys"),
    "NONE_MATCH": ("the value is None", "passing something other than None"),
    "NOT_NONE": ("the value is not None", "passing None"),
    "TRUE_MATCH": ("the value is True", "passing False or another value"),
    "FALSE_MATCH": ("the value is False", "passing True or another value"),
    "NO_HASATTR": ("an object still lacks an attribute it lacked at compile time",
                   "setting that attribute on the object"),
    "FLOAT_IS_NAN": ("a float is NaN, as it was at compile time (NaN never equals itself, so equality cannot "
                     "check it)", "passing a float that is not NaN"),
    "COMPLEX_IS_NAN": ("a complex number has a NaN part, as at compile time", "passing one without NaN"),
    "DEFAULT_DEVICE": ("the default device set with torch.set_default_device is the one at compile time",
                       "calling torch.set_default_device (or entering a device context) with another device"),
    "GLOBAL_STATE": ("torch's global switches match compile time: grad mode, autocast, deterministic "
                     "algorithms, default dtype, number of threads, torch function enablement, TF32 flags",
                     "calling under torch.no_grad(), in an autocast region, after torch.set_num_threads or "
                     "torch.set_default_dtype, and the like"),
    "TORCH_FUNCTION_MODE_STACK": ("the stack of active TorchFunctionMode objects has the same mode types",
                                  "entering or leaving a TorchFunctionMode around the call"),
    "DISPATCH_KEY_SET_MATCH": ("the thread's included/excluded dispatch keys match compile time",
                               "running under a different dispatch context (e.g. inside functorch transforms, "
                               "inference mode)"),
    "DUAL_LEVEL_MATCH": ("the forward-mode AD dual level matches compile time",
                         "entering or leaving a torch.autograd.forward_ad.dual_level() block"),
    "DIMENSION_DYNAMIC_MARKING_GUARD": ("a tensor carries no (or the same) dynamic/static dimension markings "
                                        "as at compile time",
                                        "calling torch._dynamo.mark_dynamic / mark_static / mark_unbacked on "
                                        "the tensor"),
    "STORAGE_OVERLAPPING": ("inputs that shared (or did not share) storage still do (or still do not)",
                            "passing views of one tensor where separate tensors were, or the reverse"),
    "NO_TENSOR_ALIASING": ("tensor inputs that were distinct objects are still distinct",
                           "passing the same tensor for two arguments"),
    "OBJECT_ALIASING": ("two inputs that were the same object still are",
                        "passing two different objects where one object was passed twice"),
    "SYMBOLIC_SHAPE_GUARD": ("the relations Dynamo assumed between dynamic sizes hold (e.g. s0 >= 2, s0 == "
                             "s1)", "a size outside the assumed range, or sizes that break an assumed "
                             "equality (including a size of 0 or 1 where 2+ was seen)"),
    "LAMBDA_GUARD": ("a Python expression Dynamo wrote for this case evaluates to true (read its code)",
                     "whatever makes that expression false; the text beside it says what it tests"),
    "FAKE_SCRIPT_TYPE_MATCH": ("a TorchScript object has the same script class as at compile time",
                               "passing an object of another script class"),
}


def guard_help(guard_type: str) -> GuardHelp | None:
    """What a guard of `guard_type` checks and what makes it fail; None when the table has no entry."""
    found = GUARD_HELP.get(guard_type)
    if found is None:
        return None
    return GuardHelp(guard_type, found[0], found[1])


def guard_line(guard_type: str) -> str:
    """One line for a guard tree row: ``"checks <what>; fails when <change>"``."""
    h = guard_help(guard_type)
    if h is None:
        return f"{guard_type}: a guard type dynadbg has no explanation for"
    return f"checks that {h.checks}; fails on {h.fails_when}"


def torch_guard_types() -> list[str]:
    """The leaf guard type names this torch's guard manager defines (`compat.guard_leaf_type_names`)."""
    return compat.guard_leaf_type_names()


__all__ = [
    "OPCODES", "GUARD_HELP", "opcode_help", "stack_effect", "explain", "role_sentence", "guard_help",
    "guard_line", "torch_guard_types",
]
