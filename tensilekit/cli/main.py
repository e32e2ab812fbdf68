"""The ``tensilekit`` command: a click group, global options, and the single error boundary.

Exit codes (one table, :class:`ExitCode`): 0 success; 1 a difference, mismatch or failed check
was found; 2 usage error (click's own); 3 bad input file; 4 an external tool failed or an output
cannot be written (disk full, read-only, no permission); 70 a bug
in tensilekit (printed as one line asking for a report; the traceback only with ``--debug``).
"""

from __future__ import annotations

import enum
import errno
import importlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from tensilekit._version import __version__
from tensilekit.errors import TensilekitError

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class ExitCode(enum.IntEnum):
    OK = 0
    DIFFERENCES = 1
    USAGE = 2
    BAD_INPUT = 3
    TOOL_FAILED = 4
    BUG = 70


# command name -> ("module:function", one-line help). The help is kept here so that `--help` and
# shell completion list the commands without importing them (each pulls numpy, pydantic, ...).
_COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("tensilekit.cli.commands.inspect:info_command", "Summarise logic files and master libraries."),
    "validate": ("tensilekit.cli.commands.inspect:validate_command", "Schema and semantic checks; exit 1 on an error."),
    "lint": (
        "tensilekit.cli.commands.lint:lint_command",
        "Dead, shadowed and unreachable entries, fallbacks, outliers.",
    ),
    "convert": (
        "tensilekit.cli.commands.inspect:convert_command",
        "Convert a master library between YAML and msgpack.",
    ),
    "build-master": ("tensilekit.cli.commands.build:build_master_command", "Build master libraries from logic files."),
    "select": ("tensilekit.cli.commands.select:select_command", "Which kernel the runtime picks for a GEMM, and why."),
    "coverage": (
        "tensilekit.cli.commands.coverage:coverage_command",
        "Is a workload tuned? Kernel and class per GEMM.",
    ),
    "plot": ("tensilekit.cli.commands.plot:plot_group", "Charts: selection and coverage maps (needs [plot])."),
    "merge": ("tensilekit.cli.commands.merge:merge_command", "Merge tuned logic like TensileMergeLibrary."),
    "diff": ("tensilekit.cli.commands.diff:diff_command", "Structural and selection diff of two libraries."),
    "remap": (
        "tensilekit.cli.commands.remap:remap_command",
        "Carry TunableOp/AITER tuning results to another library build.",
    ),
    "prune": ("tensilekit.cli.commands.prune:prune_command", "Drop unused and duplicate kernels from logic files."),
    "tune": ("tensilekit.cli.commands.tune:tune_command", "The tuning pipeline: log -> tuned, merged library."),
    "examples": (
        "tensilekit.cli.commands.examples:examples_command",
        "Write tensilekit's example libraries (the guides' files) into a folder.",
    ),
}


class _LazyGroup(click.Group):
    """Imports a command's module only when that command runs (fast start-up and completion)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target[0].partition(":")
        command = getattr(importlib.import_module(module_name), attribute, None)
        return command if isinstance(command, click.Command) else None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command gets git's answer: the commands it is closest to."""
        name = args[0] if args else ""
        if name and name not in _COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, list(_COMMANDS), n=3, cutoff=0.6)
            if close:
                hint = " or ".join(repr(command) for command in close)
                ctx.fail(f"No such command {name!r}. Did you mean {hint}?")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short_help) for name, (_, short_help) in _COMMANDS.items()])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        if incomplete and not incomplete[0].isalnum():
            return click.Command.shell_complete(self, ctx, incomplete)
        return [
            CompletionItem(name, help=help_) for name, (_, help_) in _COMMANDS.items() if name.startswith(incomplete)
        ]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.ensure_object(dict)
        ctx.obj["json"] = json_requested(args)  # errors then go to stdout as JSON as well
        ctx.obj["debug_anywhere"] = "--debug" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        return _run_guarded(ctx, super().invoke)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tensilekit")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors (accepted anywhere on the line).")
@click.option(
    "--max-input-size",
    metavar="SIZE",
    default=None,
    help="Largest decoded input accepted, e.g. 8G (default 4G; compressed input is also refused "
    "beyond 200:1 unless this is given).",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, max_input_size: str | None) -> None:
    """Typed, fast, scriptable tooling for AMD Tensile / hipBLASLt GEMM libraries.

    Shell completion: eval "$(_TENSILEKIT_COMPLETE=bash_source tensilekit)" (zsh_source, fish_source).
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug or ctx.obj.get("debug_anywhere", False)
    from tensilekit.io.limits import parse_size, set_max_input_size

    try:
        set_max_input_size(None if max_input_size is None else parse_size(max_input_size))
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--max-input-size") from None


def exit_code_for(error: TensilekitError) -> int:
    return int(getattr(error, "exit_code", ExitCode.BAD_INPUT))


def json_requested(args: list[str]) -> bool:
    """``--json`` among the options (not after ``--``): errors then go to stdout as JSON too."""
    return "--json" in args[: args.index("--")] if "--" in args else "--json" in args


def print_json_error(message: str, location: str | None, code: int) -> None:
    click.echo(json.dumps({"error": message, "location": location, "exit_code": code}))


def _run_guarded(ctx: click.Context, invoke: Any) -> Any:
    """The single error boundary: tensilekit errors become one line and an exit code."""
    options = ctx.obj or {}
    debug = bool(options.get("debug") or options.get("debug_anywhere"))
    as_json = bool(options.get("json"))
    try:
        try:
            return invoke(ctx)
        except OSError as error:
            if error.errno != errno.ENAMETOOLONG or not error.filename or debug:
                raise
            from tensilekit._arguments import path_too_long

            # a name made inside tensilekit (the paths the options take are checked as parsed)
            raise path_too_long(os.fsdecode(error.filename)) from error
    except TensilekitError as error:
        click.echo(f"error: {error}", err=True)
        code = exit_code_for(error)
        if as_json:
            print_json_error(error.message, str(error.location) if error.location else None, code)
        ctx.exit(code)
    except click.UsageError as error:
        if as_json:
            print_json_error(error.format_message(), None, ExitCode.USAGE)
        raise
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        ctx.exit(130)
    except BrokenPipeError:
        ctx.exit(0)
    except OSError as error:
        # the system refused something outside io.atomic (a folder made, a cache entry, a file
        # opened): said with its path, exit 4; any other OSError is still a bug below
        from tensilekit.io.atomic import OUTPUT_ERRNOS, output_not_writable

        if error.errno not in OUTPUT_ERRNOS or debug:
            _report_bug(error, debug)
        path = os.fsdecode(error.filename) if error.filename else "<output>"
        if error.errno in (errno.EACCES, errno.EPERM):  # a read or a run as well as a write
            message, location = f"{os.strerror(error.errno or 0).lower()} (check its permissions)", path
            click.echo(f"error: {path}: {message}", err=True)
        else:
            refused = output_not_writable(error, path)
            message, location = refused.message, str(refused.location)
            click.echo(f"error: {refused}", err=True)
        if as_json:
            print_json_error(message, location, ExitCode.TOOL_FAILED)
        ctx.exit(ExitCode.TOOL_FAILED)
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        _report_bug(error, debug)


def _report_bug(error: Exception, debug: bool) -> NoReturn:
    if debug:
        raise error
    click.echo(
        f"internal error: {type(error).__name__}: {error} -- this is a bug in tensilekit; "
        "rerun with --debug and report the traceback",
        err=True,
    )
    click.get_current_context().exit(ExitCode.BUG)


def hoist_debug(args: list[str]) -> list[str]:
    """``--debug`` anywhere on the line (before ``--``) becomes the group's option."""
    end = args.index("--") if "--" in args else len(args)
    if "--debug" not in args[:end]:
        return args
    return ["--debug", *[arg for arg in args[:end] if arg != "--debug"], *args[end:]]


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    args = hoist_debug(list(sys.argv[1:] if argv is None else argv))
    return cli.main(args=args, prog_name="tensilekit")


def run() -> NoReturn:
    """The console script and ``python -m tensilekit``: :func:`main`, then the process ends
    without tearing its heap down.

    A command on a big master leaves hundreds of MB of small objects (rocBLAS_Full's ~21 000
    solutions, tables, answers); freeing them one by one at interpreter exit took ~1 s of a 10 s
    ``select --queries``, with every output already written. So, when the command is done and no
    other thread runs, the exit handlers run (as at a normal exit), stdout and stderr are
    flushed, and the process leaves with the status Python would have given. Anything unusual
    (another thread alive, an exit message, an exception) takes Python's normal way out.
    :func:`main` itself (called in-process, e.g. by tests) exits as usual.

    What this relies on: a command closes what it writes (outputs go through ``io.atomic`` or
    with-blocks; the tune log flushes each line). A file left open with buffered data would lose
    its tail here, as objects are not finalised."""
    import atexit
    import threading

    try:
        main()
    except SystemExit as leaving:
        if threading.active_count() > 1 or not (leaving.code is None or isinstance(leaving.code, int)):
            raise  # threads to join first, or a message to print: Python's own exit
        status = exit_status(leaving.code)
    else:  # pragma: no cover - click's standalone mode always exits
        status = 0
    atexit._run_exitfuncs()  # what a normal exit runs (temporary folders' cleanup, …)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away, as in _run_guarded: not a failure
            pass
        except (OSError, ValueError):
            status = status or 120  # what Python exits with when its final flush fails
    os._exit(status)


def exit_status(code: object) -> int:
    """The process exit status of ``SystemExit(code)``, as Python computes it (None: 0; an
    integer: itself, as the system truncates it; anything else is printed: 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1


__all__ = ["ExitCode", "cli", "exit_status", "main", "run"]
