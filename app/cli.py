"""Command line: ``dynadbg run|report|demo|diff|learn`` and ``python -m dynadbg SCRIPT``.

Exit status: the script's own; 2 with a one-line error for a missing script or bad flags.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from dynadbg.core import compat
from dynadbg.core.model import BREAK_ON_KINDS, DEFAULT_BREAK_ON

SUBCOMMANDS = ("run", "report", "demo", "diff", "learn")


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def parse_break_on(text: str) -> set[str]:
    kinds = {k.strip() for k in text.split(",") if k.strip()}
    unknown = kinds - set(BREAK_ON_KINDS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown stop kind(s) {', '.join(sorted(unknown))}; choose from {','.join(BREAK_ON_KINDS)}"
        )
    return kinds


def split_commands(text: str) -> list[str]:
    """``"s 3; stack; c"`` → ``["s 3", "stack", "c"]`` (a `;` separates commands).

    An empty part is kept as ``""``: an empty line, which repeats the command before it (pdb's rule; before any
    command, the step): ``"s; ; v; ; c"`` → ``["s", "", "v", "", "c"]``. A `;` at the very end only ends the
    list. A part that starts with an upper-case OPNAME continues the ``insert`` before it:
    ``"insert 9 POP_TOP; LOAD_CONST 7; c"`` → ``["insert 9 POP_TOP; LOAD_CONST 7", "c"]``.
    """
    out: list[str] = []
    parts = [c.strip() for c in text.split(";")]
    if len(parts) > 1 and not parts[-1]:
        parts.pop()  # "s; c;": the last `;` ends the list
    for part in parts:
        if not part:
            out.append("")
            continue
        head = part.split(None, 1)[0]
        if out and out[-1].startswith("insert ") and head.isupper() and head.replace("_", "").isalnum():
            out[-1] += "; " + part
        else:
            out.append(part)
    return out


def build_parser(prog: str = "dynadbg") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Debug the bytecode that torch.compile (Dynamo) generates.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="run a script under the debugger (TUI on a terminal, else --plain)")
    _add_session_flags(run)
    run.add_argument("--rank", type=int, default=None, metavar="R",
                     help="under torchrun: debug rank R only (default 0); the other ranks run without stops")
    run.add_argument("--out", metavar="DIR", help="write each rank's report to DIR/rank{R}.json (JSON report schema)")
    run.add_argument("script", help="the Python script to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")

    report = sub.add_parser("report", help="run a script with no stops, then summarise what Dynamo compiled "
                            "(--full: every compiled frame in detail)")
    report.add_argument("--full", action="store_true", help="the whole detail: bytecode, guard trees, FX graphs, "
                        "every failing guard of every recompile")
    report.add_argument("--frame", type=int, metavar="N", help="the whole detail of frame N alone (the numbers "
                        "the summary shows)")
    report.add_argument("--json", action="store_true", help="print the report as JSON (shape in the README)")
    report.add_argument("--summary", action="store_true", help="with --json: the summary's data instead of the "
                        "whole report (schema dynadbg.report-summary/1)")
    report.add_argument("--width", type=int, metavar="COLS", default=None,
                        help="cut longer lines with a marker (default: the terminal's width for the summary, "
                             "120 off a terminal; 1000 for --full; 0: never)")
    report.add_argument("--out", metavar="DIR", help="write the JSON report to DIR/rank{R}.json under torchrun "
                        "(DIR/report.json otherwise) instead of printing it")
    report.add_argument("script")
    report.add_argument("args", nargs=argparse.REMAINDER)

    demo = sub.add_parser("demo", help="open the debugger on a bundled example")
    demo.add_argument("name", nargs="?", default=None, help="which example (default: the first)")
    _add_session_flags(demo)  # the same flags as `run`
    demo.add_argument("--list", action="store_true", help="list the bundled examples")

    diff = sub.add_parser("diff", help="compare two `report --json` files, or the rank reports of a torchrun job")
    diff.add_argument("reports", nargs="*", metavar="REPORT", help="A.json B.json: what changed from A to B")
    diff.add_argument("--ranks", metavar="DIR", help="compare DIR/rank{R}.json of every rank (exit 1 when they differ)")
    diff.add_argument("--json", action="store_true", help="print the comparison as JSON")
    diff.add_argument("--fail-on", type=parse_fail_on, default=[], metavar="MEASURES",
                      help="exit 1 when B is worse on any of these (comma-separated: recompiles,graph-breaks,guards)")
    learn = sub.add_parser("learn", help="a guided course in Dynamo's internals, in the debugger (lists the "
                           "lessons, opens the next unfinished one)")
    from dynadbg.learn.cli import add_learn_flags

    add_learn_flags(learn)
    return parser


def parse_fail_on(text: str) -> list[str]:
    from dynadbg.core.diff import FAIL_ON

    measures = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in measures if m not in FAIL_ON]
    if unknown or not measures:
        raise argparse.ArgumentTypeError(
            f"unknown measure(s) {', '.join(unknown) or '(none)'}; choose from {','.join(FAIL_ON)}")
    return measures


def _add_session_flags(parser: argparse.ArgumentParser) -> None:
    """The flags `run` and `demo` share: front end, scripted commands, stop kinds, patches, keymap."""
    parser.add_argument("--plain", action="store_true", help="line-mode front end (pipes, CI logs, screen readers)")
    parser.add_argument("--tui", action="store_true", help="the Textual front end even when stdout is not a terminal")
    parser.add_argument("-c", dest="command_string", metavar="CMDS", help='commands to run at stops, ";"-separated')
    parser.add_argument("--commands", metavar="FILE", help="a file of commands, one per line")
    parser.add_argument(
        "--break-on",
        type=parse_break_on,
        default=None,
        metavar="KINDS",
        help=f"comma-separated stop kinds from {','.join(BREAK_ON_KINDS)} "
             f"(default: {','.join(sorted(DEFAULT_BREAK_ON))})",
    )
    parser.add_argument("--patch", metavar="FILE", help="apply the instruction patches of FILE (`patch save`) "
                        "to the compiles they match")
    parser.add_argument("--keymap", metavar="FILE",
                        help='TUI key remapping, JSON {"action id": "key,key"} (or $DYNADBG_KEYMAP)')


def main(argv: Sequence[str] | None = None, prog: str = "dynadbg") -> int:
    """Entry point of the ``dynadbg`` console script. Returns the process exit status."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    compat.quiet_numpy_warning()  # before any thread imports torch (a newcomer saw it over the TUI's footer once)
    # `python -m dynadbg SCRIPT ...` and `dynadbg SCRIPT ...` mean `run SCRIPT ...`
    if args_in and args_in[0] not in SUBCOMMANDS and args_in[0] not in ("-h", "--help"):
        first = args_in[0]
        if not first.startswith("-") and not os.path.exists(first) and not first.endswith(".py"):
            # neither a script nor a subcommand: most likely a mistyped subcommand
            return _fail(f"unknown command {first!r} (choose from {', '.join(SUBCOMMANDS)}, or give a script)")
        args_in.insert(0, "run")
    parser = build_parser(prog)
    try:
        args = parser.parse_args(args_in)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "run":
        return cmd_run(args, parser)
    if args.command == "report":
        return cmd_report(args)
    if args.command == "diff":
        return cmd_diff(args)
    if args.command == "learn":
        from dynadbg.learn.cli import cmd_learn

        return cmd_learn(args)
    return cmd_demo(args)


def _fail(message: str) -> int:
    sys.stderr.write(f"dynadbg: error: {message}\n")
    return 2


def _commands_from(args: argparse.Namespace) -> list[str] | None:
    if getattr(args, "commands", None):
        try:
            with open(args.commands, encoding="utf-8") as fh:
                lines = [ln.strip() for ln in fh]
        except OSError as exc:
            raise _CliError(f"cannot read commands file {args.commands}: {exc.strerror}") from None
        cmds = [ln for ln in lines if not ln.startswith("#")]  # an empty line repeats, as typed at the prompt
    else:
        cmds = None
    if getattr(args, "command_string", None):
        cmds = (cmds or []) + split_commands(args.command_string)
    return cmds


class _CliError(Exception):
    pass


def _patches_from(args: argparse.Namespace) -> list | None:
    """The patches of ``--patch FILE``, checked before the program starts (a bad file: one line, exit 2)."""
    if not getattr(args, "patch", None):
        return None
    from dynadbg.core.model import EditError
    from dynadbg.core.patchfile import read_patch_file

    specs = read_patch_file(args.patch)
    if isinstance(specs, EditError):
        raise _CliError(str(specs))
    return specs


def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from dynadbg.core.runner import ScriptError, check_script

    try:
        path = check_script(args.script)
        commands = _commands_from(args)
        patch_specs = _patches_from(args)
    except (ScriptError, _CliError) as exc:
        return _fail(str(exc))
    break_on = args.break_on if args.break_on is not None else set(DEFAULT_BREAK_ON)
    script_args = list(args.args)
    from dynadbg.core import compat

    job = compat.torchrun_rank()
    if job is None and args.rank is not None:
        sys.stderr.write("dynadbg: --rank applies under torchrun only (no RANK/WORLD_SIZE here); "
                         "debugging this process\n")
    if job is not None:
        debug_rank = 0 if args.rank is None else args.rank
        if not 0 <= debug_rank < job[1]:
            return _fail(f"--rank {debug_rank}: this job has ranks 0..{job[1] - 1}")
        if job[0] != debug_rank:  # the other ranks run without stops and record
            return _run_report(path, script_args, as_json=False, out=args.out, quiet=True)

    def start(session):  # noqa: ANN001, ANN202
        if patch_specs:
            session.patch_manager.add_pending(patch_specs)
        session.start_script(path, script_args)

    if not args.out:
        return debug_program(
            start, break_on=break_on, commands=commands, plain=args.plain, tui=args.tui, keymap=args.keymap
        )
    from dynadbg.core.recorder import Recorder
    from dynadbg.core.runner import ExitResult

    with Recorder(count_hits=False) as recorder:  # the debugged rank's report, beside the others'
        status = debug_program(
            start, break_on=break_on, commands=commands, plain=args.plain, tui=args.tui, keymap=args.keymap
        )
    _write_report(recorder.result(ExitResult(status)).json(), args.out)
    return status


def debug_program(start, *, break_on, commands, plain: bool, tui: bool = False, keymap: str | None = None) -> int:  # noqa: ANN001
    """Run a program under the TUI (a terminal, no scripted commands) or the plain front end."""
    use_tui = not plain and commands is None and (tui or (sys.stdout.isatty() and sys.stdin.isatty()))
    if use_tui:
        try:
            from dynadbg.tui.app import run_tui
        except ImportError as exc:
            sys.stderr.write(f"dynadbg: the TUI is not available ({exc}); using --plain\n")
        else:
            return run_tui(start, break_on=break_on, keymap=keymap)
    from dynadbg.plain import run_plain

    result = run_plain(start, break_on=break_on, commands=commands)
    return result.status


def cmd_report(args: argparse.Namespace) -> int:
    from dynadbg.core.runner import ScriptError, check_script

    try:
        path = check_script(args.script)
    except ScriptError as exc:
        return _fail(str(exc))
    if args.summary and not args.json:
        return _fail("--summary goes with --json (the text report is the summary unless --full)")
    if args.frame is not None and (args.json or args.out):
        return _fail("--frame N is a text view; --json and --out write the whole report")
    if args.full and args.frame is not None:
        return _fail("give either --full or --frame N")
    if args.width is not None and args.width < 0:
        return _fail(f"--width {args.width}: give 0 (never cut) or a positive width")
    return _run_report(path, list(args.args), as_json=args.json, out=args.out,
                       view=_ReportView(full=args.full, frame=args.frame, summary=args.summary, width=args.width))


class _ReportView:
    """Which text or JSON `report` prints (the defaults: the text summary)."""

    def __init__(self, *, full: bool = False, frame: int | None = None, summary: bool = False,
                 width: int | None = None) -> None:
        self.full, self.frame, self.summary, self.width = full, frame, summary, width

    def text_width(self) -> int | None:
        """The summary fits the terminal when stdout is one; otherwise the report's own defaults."""
        if self.width is not None or self.full or self.frame is not None or not sys.stdout.isatty():
            return self.width
        import shutil

        return shutil.get_terminal_size((120, 24)).columns


def _progress_writer():  # noqa: ANN202
    """Progress lines on stderr while the program runs, when stderr is a terminal (else None: logs stay clean)."""
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    from dynadbg.core.format.report import progress_text

    def write(event) -> None:  # noqa: ANN001
        sys.stderr.write(progress_text(event) + "\n")
        sys.stderr.flush()

    return write


def _report_path(out: str) -> str:
    """DIR/rank{R}.json under torchrun, DIR/report.json otherwise."""
    from dynadbg.core import compat

    job = compat.torchrun_rank()
    return os.path.join(out, f"rank{job[0]}.json" if job is not None else "report.json")


def _write_report(data: dict, out: str) -> str:
    import json

    os.makedirs(out, exist_ok=True)
    path = _report_path(out)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    return path


def _run_report(path: str, argv: list[str], *, as_json: bool, out: str | None, quiet: bool = False,
                view: _ReportView | None = None) -> int:
    """Run `path` with no stops; print the report (text or JSON), or write the JSON to `out` (a directory)."""
    view = view or _ReportView()
    import contextlib
    import json

    from dynadbg.core.report import run_report
    from dynadbg.core.runner import ScriptError

    # with --json, stdout carries only the JSON document: the program's own output goes to stderr
    redirect = contextlib.redirect_stdout(sys.stderr) if as_json and not out else contextlib.nullcontext()
    try:
        with redirect:
            result = run_report(path, argv, progress=None if quiet else _progress_writer())
    except ScriptError as exc:
        return _fail(str(exc))
    if result.exit.traceback and not result.exit.quit:
        sys.stderr.write(result.exit.traceback)
    sys.stdout.flush()
    if out:
        try:
            written = _write_report(result.summary_json() if view.summary else result.json(), out)
        except OSError as exc:
            return _fail(f"cannot write the report to {out}: {exc.strerror}")
        if not quiet:
            sys.stderr.write(f"dynadbg: report written to {written}\n")
    elif as_json:
        print(json.dumps(result.summary_json() if view.summary else result.json(), indent=2))
    elif not quiet:
        try:
            text = result.text(full=view.full, frame=view.frame, width=view.text_width())
        except ValueError as exc:  # --frame N out of range: known only once the program has run
            sys.stderr.write(f"dynadbg: error: {exc}\n")
            return 2
        print(text, end="")
    return result.status


def cmd_diff(args: argparse.Namespace) -> int:
    """``dynadbg diff A.json B.json`` / ``--ranks DIR``: exit 0, 1 when B is worse on a --fail-on measure (or the
    ranks differ), 2 for unreadable input."""
    import json

    from dynadbg.core import diff as d

    try:
        if args.ranks:
            if args.reports:
                return _fail("give either --ranks DIR or two reports, not both")
            result = d.diff_ranks(d.load_rank_reports(args.ranks))
            print(json.dumps(result, indent=2) if args.json else d.ranks_text(result), end="\n" if args.json else "")
            return 1 if result["diverging"] else 0
        if len(args.reports) != 2:
            return _fail("diff needs two reports (A.json B.json) or --ranks DIR")
        a, b = (d.load_report(p) for p in args.reports)
    except d.DiffError as exc:
        return _fail(str(exc))
    result = d.diff_reports(a, b, name_a=args.reports[0], name_b=args.reports[1])
    print(json.dumps(result, indent=2) if args.json else d.diff_text(result), end="\n" if args.json else "")
    bad = d.worse(result, args.fail_on)
    if bad:
        sys.stderr.write(f"dynadbg diff: B is worse on {', '.join(bad)}\n")
        return 1
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from dynadbg.demos import DEMOS, demo_path

    if args.list:
        for name, doc in DEMOS.items():
            print(f"{name:<12} {doc}")
        return 0
    try:
        path = demo_path(args.name)
    except KeyError:
        return _fail(f"no demo named {args.name!r} (choose from {', '.join(DEMOS)})")
    try:
        commands = _commands_from(args)
        patch_specs = _patches_from(args)
    except _CliError as exc:
        return _fail(str(exc))
    break_on = args.break_on if args.break_on is not None else set(DEFAULT_BREAK_ON)

    def start(session):  # noqa: ANN001, ANN202
        if patch_specs:
            session.patch_manager.add_pending(patch_specs)
        session.start_script(path, [])

    return debug_program(start, break_on=break_on, commands=commands, plain=args.plain, tui=args.tui,
                         keymap=args.keymap)


if __name__ == "__main__":
    raise SystemExit(main())
