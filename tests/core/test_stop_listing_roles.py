"""Line mode's stop listing (`format.stop_text`): with the stop code's roles it carries the same role column and
region headers as `ll`; roles of another code object are left out rather than shown wrong."""

from __future__ import annotations

from dynadbg.core import format as fmt
from dynadbg.core.model import CodeRoles, CodeView, FrameView, Instr, InstrRole, Role, RoleRegion, Stop, StopKind


def _stop() -> tuple[Stop, CodeRoles]:
    names = ["RESUME", "LOAD_GLOBAL", "LOAD_FAST", "PRECALL", "CALL", "STORE_FAST", "RETURN_VALUE"]
    code = CodeView(7, "forward", "prog.py", 1, tuple(Instr(i, 2 * i, n, None, "", 3) for i, n in enumerate(names)))
    kinds = [Role.PROLOGUE, Role.GRAPH_CALL, Role.GRAPH_INPUT, Role.GRAPH_CALL, Role.GRAPH_CALL, Role.REBUILD,
             Role.RETURN]
    roles = tuple(InstrRole(i, r, "shape") for i, r in enumerate(kinds))
    regions = (RoleRegion(0, 0, Role.PROLOGUE, "shape", "prologue"),
               RoleRegion(1, 1, Role.GRAPH_CALL, "capture", "load of the FX graph __compiled_fn_1 (called at 4)"),
               RoleRegion(2, 2, Role.GRAPH_INPUT, "shape", "loading the graph's inputs"),
               RoleRegion(3, 4, Role.GRAPH_CALL, "capture", "call of the FX graph __compiled_fn_1 (1 inputs)"),
               RoleRegion(5, 5, Role.REBUILD, "shape", "rebuilding stack values and locals"),
               RoleRegion(6, 6, Role.RETURN, "shape", "return"))
    frame = FrameView(code, 4, 3, (), True, ())
    return Stop(StopKind.STEP, "step", (frame,), "0/0"), CodeRoles(7, "forward", roles, regions)


def test_stop_listing_has_the_role_column_and_headers_of_ll() -> None:
    stop, roles = _stop()
    text = fmt.stop_text(stop, roles=roles)
    rows = text.splitlines()[2:]
    assert rows == [
        "      -- loading the graph's inputs  [shape]",
        "        2      4  L3    g-input  LOAD_FAST",
        "      -- call of the FX graph __compiled_fn_1 (1 inputs)  [capture]",
        "        3      6  L3    g-call   PRECALL",
        "▶       4      8  L3    g-call   CALL",
        "      -- rebuilding stack values and locals  [shape]",
        "        5     10  L3    rebuild  STORE_FAST",
        "      -- return  [shape]",
        "        6     12  L3    return   RETURN_VALUE",
    ]
    # the same rows `ll` prints for them
    ll = fmt.listing(stop.frame.code, current=4, roles=roles).splitlines()
    assert all(row in ll for row in rows)


def test_stop_listing_leaves_out_another_code_objects_roles() -> None:
    stop, roles = _stop()
    other = CodeRoles(8, "other", roles.roles, roles.regions)
    assert fmt.stop_text(stop, roles=other) == fmt.stop_text(stop)
    assert "g-call" not in fmt.stop_text(stop)
