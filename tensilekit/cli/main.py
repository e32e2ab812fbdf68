"""The ``tensilekit`` command: a click group, global options, and the single error boundary.

Exit codes (one table, :class:`ExitCode`): 0 success; 1 a difference, mismatch or failed check
was found; 2 usage error (click's own); 3 bad input file; 4 an external tool failed; 70 a bug
in tensilekit (printed as one line asking for a report; the traceback only with ``--debug``).
"""

from __future__ import annotations

import enum
import importlib
import sys
from typing import Any

import click
from rich.console import Console

from tensilekit._version import __version__
from tensilekit.errors import TensilekitError


class ExitCode(enum.IntEnum):
    OK = 0
    DIFFERENCES = 1
    USAGE = 2
    BAD_INPUT = 3
    TOOL_FAILED = 4
    BUG = 70


# command name -> "module:function"; commands whose module is missing (optional extras,
# features not installed) are simply not offered.
_COMMANDS = {
    "info": "tensilekit.cli.commands.inspect:info_command",
    "validate": "tensilekit.cli.commands.inspect:validate_command",
    "convert": "tensilekit.cli.commands.inspect:convert_command",
    "select": "tensilekit.cli.commands.select:select_command",
    "plot": "tensilekit.cli.commands.plot:plot_group",
    "build-master": "tensilekit.cli.commands.build:build_master_command",
    "merge": "tensilekit.cli.commands.merge:merge_command",
    "diff": "tensilekit.cli.commands.diff:diff_command",
    "prune": "tensilekit.cli.commands.prune:prune_command",
    "tune": "tensilekit.cli.commands.tune:tune_command",
    "coverage": "tensilekit.cli.commands.coverage:coverage_command",
    "lint": "tensilekit.cli.commands.lint:lint_command",
}


class _LazyGroup(click.Group):
    """Imports a command's module only when that command runs (fast start-up)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in _COMMANDS if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and error.name.startswith("tensilekit"):
                return None
            raise
        command = getattr(module, attribute, None)
        return command if isinstance(command, click.Command) else None

    def invoke(self, ctx: click.Context) -> Any:
        return _run_guarded(ctx, super().invoke)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tensilekit")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
@click.option(
    "--max-input-size",
    metavar="SIZE",
    default=None,
    help="Largest decoded input accepted, e.g. 8G (default 4G; compressed input is also refused "
    "beyond 200:1 unless this is given).",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, max_input_size: str | None) -> None:
    """Typed, fast, scriptable tooling for AMD Tensile / hipBLASLt GEMM libraries."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    from tensilekit.io.limits import parse_size, set_max_input_size

    try:
        set_max_input_size(None if max_input_size is None else parse_size(max_input_size))
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--max-input-size") from None


def exit_code_for(error: TensilekitError) -> int:
    return int(getattr(error, "exit_code", ExitCode.BAD_INPUT))


def _run_guarded(ctx: click.Context, invoke: Any) -> Any:
    """The single error boundary: tensilekit errors become one line and an exit code."""
    stderr = Console(stderr=True, highlight=False, soft_wrap=True)
    debug = bool((ctx.obj or {}).get("debug")) or "--debug" in sys.argv[1:]
    try:
        return invoke(ctx)
    except TensilekitError as error:
        stderr.print(f"error: {error}", markup=False)
        ctx.exit(exit_code_for(error))
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except KeyboardInterrupt:
        stderr.print("interrupted")
        ctx.exit(130)
    except BrokenPipeError:
        ctx.exit(0)
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        if debug:
            raise
        stderr.print(
            f"internal error: {type(error).__name__}: {error} -- this is a bug in tensilekit; "
            "rerun with --debug and report the traceback",
            markup=False,
        )
        ctx.exit(ExitCode.BUG)


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    return cli.main(args=argv, prog_name="tensilekit")


__all__ = ["ExitCode", "cli", "main"]
