"""Plain text of trace stops and trace results (`dynadbg.core.trace_model`): line mode, the console, the report.

Every sentence here is made from the frozen values the trace service recorded: what Dynamo did (a graph break's
path, the instruction it runs eagerly, the restart), what a symbolic value is (a fake tensor's metadata, an input
not realized yet), and what Dynamo does with an instruction (`explain`), in the project's own words.
"""

from __future__ import annotations

from typing import Sequence

from ..model import CodeView, Stop
from ..values import cut as cut_text
from . import instr_line
from ..trace_model import (
    BreakPath,
    EmitPlan,
    FakeTensorView,
    RewriteKind,
    SizeView,
    TraceAction,
    TraceAttemptView,
    TraceBreak,
    TraceBreakpointView,
    TraceCompileView,
    TraceError,
    TraceExplanation,
    TraceFrame,
    TraceSettings,
    TraceStep,
    TraceStopReason,
    TraceStopView,
    TraceValue,
    TraceValueKind,
)

#: the line every trace stop carries: where the program is paused, and what that holds up
LOCK_NOTE = ("paused inside torch.compile, on the program's thread: torch's compile lock is held, so other threads "
             "that compile wait; `c` lets Dynamo go on")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 node"``, ``"2 nodes"`` (`many`: the plural when it is not `word` + s)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"



def step_where(step: TraceStep) -> str:
    """``compile 0/0 attempt 0  d2 h3 line 6  step 27  CALL 0 (offset 36)``."""
    parts = [f"compile {step.compile_id} attempt {step.attempt}" + (" (replay)" if step.replay else ""),
             f"d{step.depth} {step.code_name}" + (f" line {step.line}" if step.line is not None else ""),
             f"step {step.ordinal}"]
    ins = f"{step.opname} {step.argrepr}".rstrip()
    if step.user_offset is not None:
        ins += f" (offset {step.user_offset})"
    if step.rewrite is RewriteKind.REWRITE:
        ins += f" [Dynamo's rewrite of {step.rewrite_of}]"
    elif step.rewrite is RewriteKind.ADDED:
        ins += " [added by Dynamo]"
    parts.append(ins)
    return "  ".join(parts)


def status_line(view: TraceStopView) -> str:
    """The one-line status of a trace stop (``TRACE compile 0/0 attempt 1 (replay) d2 h3 L9 step 27 · 5 nodes ·
    13 guards``)."""
    s = view.step
    replay = " (replay)" if s.replay else ""
    line = f" L{s.line}" if s.line is not None else ""
    head = "TRACE" if view.mark is None else f"TRACE HISTORY {view.mark.position}/{view.mark.total}"
    return (f"{head} compile {s.compile_id} attempt {s.attempt}{replay} d{s.depth} {s.code_name}{line} "
            f"step {s.ordinal} · {plural(view.nodes_total, 'node')} · {plural(view.guards_total, 'guard')}")


def trace_stop_message(view: TraceStopView) -> str:
    """The stop's message (`Stop.message`): why the program paused inside Dynamo's tracing."""
    s = view.step
    where = f"{s.code_name} (compile {s.compile_id}, attempt {s.attempt})"
    reason = view.reason
    if reason is TraceStopReason.START:
        return f"Dynamo starts tracing {where}: its first instruction of your code"
    if reason is TraceStopReason.BREAKPOINT:
        name = s.filename.rsplit("/", 1)[-1]
        return f"trace breakpoint: Dynamo traces {name}:{s.line} in {s.code_name} at depth {s.depth}"
    if reason is TraceStopReason.GRAPH_BREAK and view.brk is not None:
        what = view.brk.gb_type or view.brk.reason
        return f"graph break while Dynamo traces {where}: {what}"
    if reason is TraceStopReason.ERROR and view.error is not None:
        return f"tracing error in {where}: {view.error.exc_type} (post-mortem: the translator is still alive)"
    if reason is TraceStopReason.REWIND:
        return f"rewound: Dynamo traced {where} again up to this instruction"
    verb = {TraceStopReason.STEP: "traced one instruction", TraceStopReason.NEXT: "traced to the next instruction at "
            "this depth", TraceStopReason.RETURN: "the inlined function returned", TraceStopReason.UNTIL:
            "traced until the line"}.get(reason, reason.value)
    return f"{verb}: {where}"


# --------------------------------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------------------------------


def value_line(v: TraceValue) -> str:
    """One symbolic value: its description, then what tracks it (``TensorVariable, FX node mul, from L['x']``)."""
    if v.kind is TraceValueKind.NULL:
        return "NULL"
    if v.kind is TraceValueKind.UNREALIZED:
        src = f" from {v.source}" if v.source else ""
        return f"{v.text}  (unrealized{src}: Dynamo has not looked at it yet, so no guard or graph input so far)"
    extras = [v.tracker]
    if v.node:
        extras.append(f"FX node {v.node}")
    if v.source:
        extras.append(f"from {v.source}")
    return f"{v.text}  ({', '.join(extras)})"


def stack_text(view: TraceStopView) -> str:
    """The symbolic value stack, bottom first, TOS last."""
    head = _history_head(view)
    if view.stack is None:
        return head + "symbolic stack: not recorded at this step (light recording; `trace record full` keeps it)"
    if view.reason in (TraceStopReason.GRAPH_BREAK, TraceStopReason.ERROR) and view.mark is None:
        # the breaking instruction's own stack (a recorded step before it, `back`, had its operands still there)
        title = (f"symbolic stack before {view.step.opname} (its operands: Dynamo had popped them when it found the "
                 f"{'break' if view.reason is TraceStopReason.GRAPH_BREAK else 'error'})")
    else:
        title = f"symbolic stack before {view.step.opname}"
    if not view.stack:
        return head + f"{title}: empty"
    n = len(view.stack)
    lines = [f"{title}: {plural(n, 'slot')}, TOS last"]
    for i, v in enumerate(view.stack):
        lines.append(f"  [{i}] {value_line(v)}" + ("  <- TOS" if i == n - 1 else ""))
    return head + "\n".join(lines)


def locals_text(view: TraceStopView) -> str:
    """The symbolic locals of the frame Dynamo is tracing at this step (``*`` changed since the last stop)."""
    head = _history_head(view)
    if view.locals is None:
        return head + "symbolic locals: not recorded at this step (light recording)"
    if not view.locals:
        return head + f"symbolic locals of {view.step.code_name}: none"
    width = max(len(name) for name, _v in view.locals)
    lines = [f"symbolic locals of {view.step.code_name} (depth {view.step.depth})"]
    for name, v in view.locals:
        star = "*" if name in view.changed else " "
        lines.append(f" {star}{name:<{width}}  {value_line(v)}")
    return head + "\n".join(lines)


def fake_text(f: FakeTensorView) -> str:
    """``fake NAME``: a fake tensor's sizes (with hints), strides, dtype, device."""
    if f.value.kind is TraceValueKind.UNREALIZED:
        return (f"{f.name}: unrealized ({f.value.text}{', from ' + f.source if f.source else ''}): Dynamo has made no "
                "fake value for it yet; it makes one (and its guards) when the traced code first uses it")
    if not f.shape and f.fake_type is None:
        return f"{f.name}: {value_line(f.value)}: no fake value (not a tensor or symbolic value)"

    def sizes(values: Sequence[SizeView]) -> str:
        return "(" + ", ".join(s.text + (f"={s.hint}" if s.symbolic and s.hint is not None else
                                         (" (unbacked)" if s.symbolic else "")) for s in values) + ")"

    lines = [f"{f.name}: {f.fake_type or 'fake'}" + (f", FX node {f.node}" if f.node else "")
             + (f", from {f.source}" if f.source else "")]
    if f.value.kind is TraceValueKind.TENSOR:
        lines.append(f"  shape  {sizes(f.shape)}" + ("   (symbolic sizes shown as name=hint: the value this compile "
                                                     "was traced with)" if any(s.symbolic for s in f.shape) else ""))
        lines.append(f"  stride {sizes(f.stride)}")
        lines.append(f"  dtype  {f.dtype}   device {f.device}   requires_grad {f.requires_grad}")
        lines.append("  (a fake tensor: metadata only, no values)")
    else:
        lines.append(f"  value  {sizes(f.shape)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# the stop
# --------------------------------------------------------------------------------------------------------------


def _history_head(view: TraceStopView) -> str:
    if view.mark is None:
        return ""
    return (f"TRACE HISTORY {view.mark.position}/{view.mark.total} (a recorded step, read-only; `forward` / "
            "`present` return, any step goes on from the present)\n")


def listing_rows(view: TraceStopView, around: int | None = 2) -> list[str]:
    """The rows of `listing_text` (no head line, no note), `around` instructions either side of the one Dynamo
    traces next (all of them when `around` is None or that instruction is not the user's)."""
    code = view.code
    if code is None:
        return []
    current = view.user_index
    rows = code.instructions
    if around is not None and current is not None:
        first, last = max(0, current - around), min(len(rows), current + around + 1)
    else:
        first, last = 0, len(rows)
    return [instr_line(ins, current=ins.index == current) for ins in rows[first:last]]


def listing_text(view: TraceStopView, around: int | None = 2) -> str:
    """The user's bytecode of the frame being traced (``dis`` offsets), the instruction Dynamo traces next
    marked ``▶`` (all of it when `around` is None); rows as every listing has them (`format.instr_line`)."""
    code = view.code
    if code is None:
        return "(no listing of this code)"
    lines = [f"{code.name} ({code.filename}:{code.firstlineno}), the user's bytecode as `dis` shows it:"]
    lines += listing_rows(view, around)
    if view.user_index is None:
        lines.append(f"  (Dynamo traces {view.step.opname}: an instruction it added, not in your bytecode)")
    elif view.step.rewrite is RewriteKind.REWRITE:
        lines.append(f"  (Dynamo traces {view.step.opname}, its rewrite of {view.step.rewrite_of} at offset "
                     f"{view.step.user_offset})")
    return "\n".join(lines)


def plan_lines(plan: EmitPlan, path: BreakPath) -> list[str]:
    """What Dynamo does with a graph break, one line each, from the recorded plan."""
    out = []
    if plan.restart:
        out.append("Dynamo restarts the trace of this frame from its start; the re-trace replays up to this point "
                   "and handles the break there")
    if path is BreakPath.FRAME:
        out.append("Dynamo gives up on this frame: it runs eagerly (no graph)")
        return out
    graph = ("the graph traced so far" + (f" ({plural(plan.graph_nodes, 'FX node')})" if plan.graph_nodes else "")
             + " is compiled and called first" + (f": {', '.join(plan.graph_names)}" if plan.graph_names else ""))
    out.append(graph if plan.graph_nodes else "no graph call (nothing was traced into the graph before it)")
    if plan.eager:
        what = f"the call of {plan.eager_callee} ({plan.eager})" if plan.eager_callee else plan.eager
        out.append(f"then it runs {what}" + (f" at line {plan.eager_line}" if plan.eager_line else "")
                   + " eagerly, in the frame being compiled")
    if plan.returns:
        out.append("and the frame returns its result right away: no resume function")
    if plan.rest_eager:
        out.append("the rest of the frame runs eagerly from an earlier instruction with an empty stack (no resume "
                   "function)")
    if plan.resume_code:
        name = plan.resume_name or ("named when Dynamo makes it" + (" on the re-trace" if plan.restart else ""))
        out.append(f"and the rest of {plan.resume_code} after line {plan.resume_after_line} goes to a resume function "
                   f"({name}), compiled on its own first call")
    return out


def break_lines(brk: TraceBreak) -> list[str]:
    """A graph break: where, torch's reason and type, the path, what Dynamo emits, torch's hints."""
    where = f"{brk.filename}:{brk.line}" if brk.filename else "?"
    ins = f"{brk.step.opname} {brk.step.argrepr}".rstrip() if brk.step is not None else "?"
    depth = f" at depth {brk.step.depth} (inlined in {brk.chain[0].code_name})" if brk.step and brk.step.depth else ""
    lines = [f"graph break at {where}: {ins}{depth}, compile {brk.compile_id} attempt {brk.attempt}",
             f"  reason: {brk.reason}"]
    if brk.gb_type:
        lines.append(f"  gb_type: {brk.gb_type}")
    path = {BreakPath.CALL: "an instruction Dynamo cannot trace (break_graph_if_unsupported)",
            BreakPath.JUMP: "a branch on a traced value (generic_jump)",
            BreakPath.STEP: "no resumable point at this instruction (step)",
            BreakPath.FRAME: "the break cannot be handled (run)", BreakPath.OTHER: "another path"}[brk.path]
    lines.append(f"  path: {path}")
    lines += ["  " + line for line in plan_lines(brk.plan, brk.path)]
    for hint in brk.hints[:4]:
        lines.append(f"  hint (torch): {hint}")
    return lines


def error_lines(error: TraceError) -> list[str]:
    lines = [f"tracing error: {error.exc_type}" + (f" ({error.gb_type})" if error.gb_type else "")]
    lines += ["  " + ln for ln in error.message.splitlines()[:4]]
    if error.fullgraph:
        lines.append("  fullgraph=True (or error_on_graph_break): a graph break is an error here, so the call raises")
    elif error.skip_frame:
        lines.append("  Dynamo skips this frame: it runs eagerly")
    return lines


def trace_stop_text(stop: Stop) -> str:
    """What line mode prints at a trace stop."""
    view: TraceStopView = stop.trace
    s = view.step
    lines = [f"--- {stop.message}", f"[{stop.kind.value}] {step_where(s)}  · {plural(view.nodes_total, 'node')} · "
             f"{plural(view.guards_total, 'guard')}", attempt_strip(view.attempts, s.attempt, s.ordinal)]
    if view.holds_compile_lock:
        lines.append(f"({LOCK_NOTE})")
    if view.brk is not None and view.reason is TraceStopReason.GRAPH_BREAK:
        lines += break_lines(view.brk)
    elif view.at_restart_point and view.brk is not None:
        lines.append(f"the re-trace is back at the instruction that restarted it: Dynamo handles the graph break "
                     f"({view.brk.gb_type or view.brk.reason}) here now (`why`)")
    if view.error is not None:
        lines += error_lines(view.error)
    if len(view.chain) > 1:
        lines.append("inlined: " + " -> ".join(f"{f.code_name}:{f.line}" for f in view.chain))
    if view.source_line:
        lines.append(f"{s.line:>5} | {view.source_line}")
    lines.append(listing_text(view).split("\n", 1)[1] if view.code is not None else "")
    lines.append(stack_text(view))
    return "\n".join(line for line in lines if line != "")


def trace_stop_terms(view: TraceStopView) -> set[str]:
    """The glossary terms (`format.glossary.TERMS`) `trace_stop_text` uses for `view`, read off the same data."""
    used = {"compile id", "guard"}  # the where line: compile X/Y attempt N ... · N guards
    values = view.stack or ()
    if any(v.node for v in values):  # "FX node add" after a value
        used.add("FX graph")
    if any(v.kind not in (TraceValueKind.NULL, TraceValueKind.UNREALIZED) for v in values):
        used.add("variable tracker")
    if any(v.kind is TraceValueKind.UNREALIZED for v in values):
        used.add("unrealized")
    if any(v.kind is TraceValueKind.TENSOR for v in values):
        used.add("fake tensor")
    brk = view.brk
    if brk is not None and (view.reason is TraceStopReason.GRAPH_BREAK or view.at_restart_point):
        used.add("graph break")
        if view.reason is TraceStopReason.GRAPH_BREAK:  # the plan's lines (`plan_lines`)
            if brk.plan.resume_code or brk.plan.returns or brk.plan.rest_eager:
                used.add("resume function")
            if brk.plan.graph_nodes and brk.path is not BreakPath.FRAME:
                used.add("FX graph")
    return used


def bt_text(view: TraceStopView) -> str:
    """``bt`` at a trace stop: the inlining chain, outermost first (> marks the frame of this step)."""
    lines = [_history_head(view).rstrip("\n")] if view.mark else []
    lines.append(f"inlining chain (compile {view.step.compile_id}; depth 0 is the frame being compiled):")
    for f in view.chain:
        mark = ">" if f is view.chain[-1] else " "
        lines.append(f"{mark} d{f.depth} {f.code_name}  {f.filename}:{f.line}  at {f.opname}"
                     + (f" (offset {f.user_offset})" if f.user_offset is not None else ""))
    return "\n".join(lines)


def graph_text(view: TraceStopView) -> str:
    """``graph`` at a trace stop: the FX graph so far, ``+`` on what the last instruction added."""
    head = _history_head(view)
    if not view.nodes:
        if view.mark is not None:
            return head + f"FX graph at that step: {plural(view.nodes_total, 'node')} (listed only for the attempt " \
                          "being traced)"
        return head + "FX graph so far: empty"
    more = view.nodes_total - len(view.nodes)
    lines = [f"FX graph so far: {plural(view.nodes_total, 'node')}" + (f" (the last {len(view.nodes)} listed)"
                                                                        if more > 0 else "")
             + ("; + marks what the last instruction added" if any(n.new for n in view.nodes)
                else "; the last instruction added no node")]
    for n in view.nodes:
        mark = "+" if n.new else " "
        target = "" if n.op in ("placeholder", "output") else f" {n.target}"
        lines.append(f"{mark} {n.name:<16} {n.op}{target}" + (f"   {n.value}" if n.value else ""))
    return head + "\n".join(lines)


def guards_text(view: TraceStopView) -> str:
    """``guards`` at a trace stop: the guards Dynamo has installed so far (built into the guard tree only when the
    compile ends), ``+`` on the last instruction's."""
    head = _history_head(view)
    if view.mark is not None:
        lines = [f"guards at that step: {view.guards_total}; the step installed:"]
        lines += [f"+ {g.guard_type:<22} {g.source}" for g in view.guards] or ["  (none)"]
        return head + "\n".join(lines)
    lines = [f"guards so far: {view.guards_total} (Dynamo builds them into the guard tree when the compile ends); "
             + ("+ marks what the last instruction installed" if any(g.new for g in view.guards)
                else "the last instruction installed none")]
    for g in view.guards:
        lines.append(f"{'+' if g.new else ' '} {g.guard_type:<22} {g.source or '(global state)'}")
    if view.shape_guards:
        lines.append(f"symbolic-shape guards so far: {len(view.shape_guards)}")
        lines += [f"  {g}" for g in view.shape_guards]
    return head + "\n".join(lines)


def attempts_lines(attempts: Sequence[TraceAttemptView]) -> list[str]:
    out = []
    for a in attempts:
        line = (f"  attempt {a.attempt}: {plural(a.steps, 'instruction')} traced, deepest inline {a.max_depth}, "
                f"{a.outcome}")
        if a.replay_until is not None:
            line += f" (replay of the first {a.replay_until})"
        if a.restart is not None:
            line += f"; restart: {a.restart.reason}"
            if a.restart.at_ordinal is not None:
                line += f" (re-traced to step {a.restart.at_ordinal}, line {a.restart.line})"
        if a.error is not None:
            line += f"; {a.error.exc_type}"
        out.append(line)
    return out


def attempt_strip(attempts: Sequence[TraceAttemptView], attempt: int, ordinal: int) -> str:
    """One line of a compile's attempts so far, the one being traced (`attempt`, at step `ordinal`) marked ``▶``:
    ``attempts: 0 restarted at step 10 → ▶1 step 4, replaying to 10``; empty while there is only one attempt."""
    if len(attempts) < 2:
        return ""
    parts = []
    for a in attempts:
        if a.attempt == attempt:
            part = f"▶{a.attempt} step {ordinal}"
            if a.replay_until is not None and ordinal < a.replay_until:
                part += f", replaying to {a.replay_until}"
        elif a.restart is not None:
            part = f"{a.attempt} restarted" + (f" at step {a.restart.at_ordinal}"
                                               if a.restart.at_ordinal is not None else "")
        elif a.error is not None:
            part = f"{a.attempt} failed: {a.error.exc_type}"
        else:
            part = f"{a.attempt} {a.outcome}"
        parts.append(part)
    return "attempts: " + " → ".join(parts)


def why_text(view: TraceStopView) -> str:
    """``why`` at a trace stop: the graph break or error of this compile, and its attempts."""
    lines = []
    if view.error is not None:
        lines += error_lines(view.error)
    if view.brk is not None:
        lines += break_lines(view.brk)
    if not lines:
        lines.append(f"no graph break found so far while tracing compile {view.step.compile_id}")
    lines.append(f"attempts of compile {view.step.compile_id}:")
    lines += attempts_lines(view.attempts)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# explain
# --------------------------------------------------------------------------------------------------------------


def _callee_sentence(callee: TraceValue | None, depth: int) -> str:
    if callee is None:
        return "calls the value below its arguments"
    tracker = callee.tracker
    if callee.kind is TraceValueKind.UNREALIZED:
        return (f"calls {callee.text}, not realized yet: Dynamo wraps it first (adding its guards), then handles the "
                "call as it does for that kind of value (inlines a function, adds a node for a torch function, ...)")
    if tracker in ("UserFunctionVariable", "NestedUserFunctionVariable", "UserMethodVariable"):
        return (f"calls your function {callee.text}: Dynamo inlines it, tracing its bytecode at depth {depth + 1} "
                "(`s` steps into it, `n` over it); if it breaks the graph, the whole call runs eagerly instead")
    if callee.kind is TraceValueKind.MODULE:
        return (f"calls the module {callee.text}: Dynamo inlines its forward (and the call machinery around it) at "
                f"depth {depth + 1}")
    if tracker == "TorchInGraphFunctionVariable" or callee.text.startswith("torch."):
        return (f"calls {callee.text}: Dynamo runs it on the fake inputs to learn the output's metadata and adds a "
                "call_function node to the FX graph")
    if tracker == "GetAttrVariable":
        return (f"calls {callee.text}: a method; on a tensor Dynamo adds a call_method node (an unsupported method, "
                "such as .item() or .tolist() without capture, breaks the graph here)")
    if tracker == "BuiltinVariable":
        return (f"calls the builtin {callee.text}: Dynamo evaluates it on the trackers (on constants at trace time; "
                "on tensors through the matching operator node)")
    return f"calls {callee.text} ({tracker}): what Dynamo does depends on that tracker"


def explain_text(ex: TraceExplanation) -> str:
    """``explain`` at a trace stop, in the project's words: what Dynamo does with the instruction symbolically."""
    s = ex.step
    ops = ex.operands
    top = ops[-1] if ops else None
    a = ex.action
    if a is TraceAction.LOAD_LOCAL:
        what = ("pushes the tracker of a local onto the symbolic stack; an input not looked at yet stays unrealized "
                "until an instruction needs to know what it is (then Dynamo wraps it: a graph input and guards)")
    elif a is TraceAction.STORE_LOCAL:
        what = "pops the top tracker into the symbolic locals: nothing is added to the graph"
    elif a is TraceAction.LOAD_GLOBAL:
        what = ("looks the global up at trace time and pushes its tracker; the compiled code will only be reused while "
                "the guards on that global hold")
    elif a is TraceAction.LOAD_CONST:
        what = "pushes a constant tracker: the value is known at trace time and baked into the code"
    elif a is TraceAction.LOAD_ATTR:
        what = ("reads an attribute of the tracker on top: on a module or object at trace time (guarded), on a "
                "tensor its metadata or a method to call")
    elif a is TraceAction.STORE_ATTR:
        what = ("records an attribute write as a side effect: Dynamo replays it in the generated code after the "
                "graph runs")
    elif a is TraceAction.CALL:
        what = _callee_sentence(ex.callee, ex.depth) if s.opname != "KW_NAMES" else \
            "sets the keyword names of the call that follows"
        if s.opname == "PRECALL":
            what = "prepares the call that follows (3.11): " + what
    elif a in (TraceAction.BINARY, TraceAction.UNARY, TraceAction.COMPARE, TraceAction.SUBSCRIPT):
        kinds = {v.kind for v in ops}
        if TraceValueKind.TENSOR in kinds:
            what = ("applies the operator to a tensor tracker: Dynamo runs it on the fake values and adds a "
                    "call_function node to the FX graph; the result is a new tensor tracker")
        elif TraceValueKind.SYMBOLIC in kinds:
            what = ("applies the operator to a symbolic size: the result is a new symbolic value (an FX node "
                    "computing it), no guard yet")
        elif kinds and kinds <= {TraceValueKind.CONSTANT}:
            what = "folds the operator on constants at trace time: no graph node"
        else:
            what = "applies the operator to the trackers on top of the stack, as each tracker defines it"
    elif a is TraceAction.BRANCH:
        kind = top.kind if top is not None else None
        if kind is TraceValueKind.TENSOR:
            what = ("branches on a tensor's value, which a fake tensor does not have: a data-dependent branch; Dynamo "
                    "breaks the graph here (or raises with fullgraph=True)")
        elif kind is TraceValueKind.SYMBOLIC:
            what = ("branches on a symbolic value: Dynamo takes the branch its hint gives and adds a guard so the "
                    "compiled code is only reused when the condition goes the same way")
        elif kind is TraceValueKind.UNREALIZED:
            what = "branches on an input not realized yet: Dynamo wraps it first, then decides as for its type"
        else:
            what = ("branches on a value known at trace time: Dynamo follows one side only (the other is not traced; "
                    "a guard keeps the choice valid)")
    elif a is TraceAction.JUMP:
        what = "jumps: Dynamo moves its instruction pointer (a backward jump unrolls a loop: its body is traced again)"
    elif a is TraceAction.ITER:
        what = ("iterates at trace time: a loop over a list, range or module list is unrolled (each iteration is "
                "traced); iterating a tensor's values is not possible")
    elif a is TraceAction.RETURN:
        what = ("returns from the inlined function: its tracker goes back to the caller's stack" if ex.depth else
                "returns from the frame being compiled: Dynamo compiles the graph so far and writes the code that "
                "calls it, replays side effects and returns its outputs")
    elif a is TraceAction.YIELD:
        what = ("yields from a generator: Dynamo can trace a generator only when it is inlined into its consumer; "
                "a compiled generator frame is skipped")
    elif a is TraceAction.BUILD:
        what = "builds a container tracker from the trackers on top (no graph node; the tensors inside stay nodes)"
    elif a is TraceAction.UNPACK:
        what = "unpacks a tracker into its items at trace time (its length must be known)"
    elif a is TraceAction.STACK:
        what = "moves trackers on the symbolic stack only"
    elif a is TraceAction.PROLOGUE:
        what = "part of the code object's prologue: nothing symbolic happens"
    elif a is TraceAction.CONTEXT:
        what = ("enters or leaves a context manager Dynamo models (grad mode, autocast) or handles an exception "
                "block; an unsupported context manager breaks the graph")
    else:
        what = "Dynamo's handler of this opname does the symbolic work"
    lines = [f"{s.opname} {s.argrepr}".rstrip() + f" (line {s.line}, depth {s.depth}): Dynamo {what}."]
    if ops:
        lines.append("operands (TOS last):")
        lines += [f"  {value_line(v)}" for v in ops]
    if ex.fullgraph:
        lines.append("fullgraph=True: a graph break at this instruction raises instead of splitting the graph")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# settings, breakpoints, compiles
# --------------------------------------------------------------------------------------------------------------


def breakpoint_text(bp: TraceBreakpointView) -> str:
    cond = f" if {bp.condition}" if bp.condition else ""
    return f"trace breakpoint {bp.number} at {bp.filename}:{bp.line}{cond} (hits {bp.hits})"


def settings_text(s: TraceSettings) -> str:
    if not s.available:
        return "trace stops unavailable on this torch: " + ("; ".join(s.disabled) or "no hooks")
    lines = [f"trace recording: {s.record}" + (" (asked with `trace record full`)" if s.forced_full else
                                              " (full while trace stops are armed)"),
             f"replay after a restart: {'stops' if s.replay else 'runs through (`trace replay on` stops in it)'}",
             f"kept: {plural(s.steps, 'step')}, about {s.nbytes // 1024} KiB (bounds: {s.limit} steps, "
             f"{s.max_bytes // 1024} KiB; {s.evicted} dropped)",
             "armed: " + (", ".join(s.armed) or "none")]
    lines += [f"  {breakpoint_text(bp)}" for bp in s.breakpoints]
    lines += [f"  disabled: {d}" for d in s.disabled]
    return "\n".join(lines)


def compile_lines(c: TraceCompileView) -> list[str]:
    """One compile's trace summary (the report and ``trace``)."""
    restarts = c.restarts
    lines = [f"compile {c.compile_id} {c.code_name} ({c.filename}:{c.firstlineno}): "
             f"{plural(c.steps, 'instruction')} traced in {plural(len(c.attempts), 'attempt')}"
             + (f", {plural(len(restarts), 'restart')}" if restarts else "")]
    lines += attempts_lines(c.attempts)
    for b in c.breaks:
        ins = f"{b.step.opname} {b.step.argrepr}".rstrip() if b.step is not None else "?"
        where = f"{b.filename}:{b.line}" if b.filename else "?"
        lines.append(f"  breaking instruction: {ins} at {where} (depth {b.step.depth if b.step else '?'}, "
                     f"{b.path.value} path): {b.gb_type or b.reason}")
    for cut in c.cuts:
        lines.append(f"  graph cut: {plural(cut.nodes, 'node')} ({cut.reason})")
    if c.evicted:
        lines.append(f"  ({c.evicted} of its steps were dropped to stay within the trace bounds)")
    return lines


def report_lines(compiles: Sequence[TraceCompileView]) -> list[str]:
    """The report's trace section: a head line, then `compile_lines` of each compile id (nothing without any)."""
    if not compiles:
        return []
    out = ["Dynamo's tracing, per compile (instructions traced at every inline depth; `dynadbg run --break-on "
           "trace` steps them)"]
    for c in compiles:
        out += compile_lines(c)
    return out


def compiles_text(compiles: Sequence[TraceCompileView]) -> str:
    if not compiles:
        return "no trace recorded yet (Dynamo has not compiled anything in this session)"
    return "\n".join(line for c in compiles for line in compile_lines(c))


def steps_text(steps: Sequence[TraceStep], current: int | None = None, *, narrow: bool = False) -> str:
    """Recorded steps, one a line under a header row (``trace steps``); `current`: the ordinal marked with ``>``.
    The columns: the step's ordinal, the depth of the traced frame (0: the compiled function, 1: a function it
    inlines), its code name, the source line, the instruction, and the FX nodes and guards the trace had when it
    reached the step (before its instruction ran). Rows fit 78 columns; `narrow` (a pane about 45 columns wide):
    the code name and depth on a row of their own where they change. The instruction is cut to 20 characters."""
    if not steps:
        return "no steps recorded for that attempt (dropped to stay within the bounds, or none traced)"
    if narrow:
        lines = [f"{'step':>5} {'line':<5} {'instruction':<20} {'nodes':>5} {'guards':>6}"]
    else:
        lines = [f"  {'step':>4} {'depth':>5} {'code':<16} {'line':<5} {'instruction':<20} {'nodes':>5} {'guards':>6}"]
    shown_code = None
    for s in steps:
        mark = ">" if current is not None and s.ordinal == current else " "
        ins = f"{s.opname} {s.argrepr}".rstrip()
        line = f"L{s.line}" if s.line is not None else "?"
        replay = " replay" if s.replay else ""
        if narrow:
            if s.code_name != shown_code:
                lines.append(f"  in {cut_text(s.code_name, 28)} (depth {s.depth})")
                shown_code = s.code_name
            lines.append(f"{mark}{s.ordinal:>4} {line:<5} {cut_text(ins, 20):<20} {s.nodes:>5} {s.guards:>6}{replay}")
            continue
        lines.append(f"{mark} {s.ordinal:>4} {s.depth:>5} {cut_text(s.code_name, 16):<16} {line:<5} "
                     f"{cut_text(ins, 20):<20} {s.nodes:>5} {s.guards:>6}{replay}")
    return "\n".join(lines)


def frame_line(f: TraceFrame) -> str:
    return f"d{f.depth} {f.code_name} {f.filename}:{f.line} at {f.opname}"


def code_listing_header(code: CodeView) -> str:
    return f"{code.name} ({code.filename}:{code.firstlineno})"
