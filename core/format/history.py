"""Plain text of the recorded history (``back``, ``forward``, ``history``): one text path for every front end."""

from __future__ import annotations

from ..model import CodeRoles, HistoryEntry, HistoryInfo, HistoryMark, HistoryView


def history_line(mark: HistoryMark) -> str:
    """``"HISTORY 3/120 (recorded stop, read-only) — any step returns to the present"``: what marks every view
    of a recorded stop, in the status line and above command output."""
    return (f"HISTORY {mark.position}/{mark.total} (recorded stop, read-only) — any step returns to the present")


def entry_line(number: int, entry: HistoryEntry) -> str:
    """``"  12  [step] forward  index 30 (offset 64) LOAD_FAST x  compile 0/0"``."""
    arg = f" {entry.argrepr}" if entry.argrepr else ""
    cid = f"  compile {entry.compile_id}" if entry.compile_id else ""
    kind = "ran through" if entry.seq < 0 else entry.kind.value  # no stop: `history every on`
    return (f"{number:>5}  [{kind}] {entry.code_name}  index {entry.index} (offset {entry.offset}) "
            f"{entry.opname}{arg}{cid}")


def history_view_text(view: HistoryView, roles: CodeRoles | None = None) -> str:
    """What ``back``/``forward`` print: the history line, where the recorded stop was (with `roles`, the role
    column and headers of ``ll``), its value stack and locals (the summaries recorded then); at the present, the
    live stop again."""
    from . import locals_text, stack_text, stop_text

    if view.entry is None:
        return f"back to the present (the stop the program is paused at)\n{stop_text(view.stop, roles=roles)}"
    lines = [history_line(view.mark), stop_text(view.stop, roles=roles)]
    fv = view.stop.selected_frame
    if fv is not None:
        lines.append(stack_text(fv))
        lines.append(locals_text(fv))
    return "\n".join(lines)


def history_info_text(info: HistoryInfo) -> str:
    """``history``: the bounds, the memory estimate and the newest entries (> marks the one shown)."""
    if info.limit == 0 or info.max_bytes == 0:
        head = "history: recording is off (`history limit N` and `history memory KB` turn it on)"
    else:
        head = (f"history: {info.count} stop{'s' if info.count != 1 else ''} recorded (at most {info.limit}, "
                f"{info.nbytes / 1024:.1f} of {info.max_bytes / 1024:.0f} KiB)")
    if info.evicted:
        head += f"; {info.evicted} older dropped"
    if info.every:
        head += "; every instruction stepped through is recorded too (`history every off`)"
    lines = [head]
    shown = info.position.position if info.position is not None else None
    for number, entry in info.recent:
        mark = ">" if number == shown else " "
        lines.append(mark + entry_line(number, entry))
    if info.count and shown is None:
        lines.append("(at the present; `back [N]` shows earlier stops)")
    return "\n".join(lines)
