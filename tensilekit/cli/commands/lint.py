"""``lint``: semantic findings for libraries, a thin command over :func:`tensilekit.lint.lint_paths`."""

from __future__ import annotations

import click
from rich.console import Console

from tensilekit.cli.inputs import library_files
from tensilekit.cli.main import ExitCode
from tensilekit.cli.options import UserPath, subtree_options
from tensilekit.cli.output import stdout_console
from tensilekit.cli.phases import phases
from tensilekit.cli.render import print_json
from tensilekit.lint import FileLint, LintCode, LintOptions
from tensilekit.lint.files import lint_file

_CODES = [code.value for code in LintCode]


def _codes(text: str) -> set[str]:
    chosen = {part.strip() for part in text.split(",") if part.strip()}
    if "all" in chosen:
        return set(_CODES)
    unknown = sorted(chosen - set(_CODES))
    if unknown:
        raise click.BadParameter(f"unknown code(s) {', '.join(unknown)}; codes: {', '.join(_CODES)}, all")
    return chosen


def _render_file(result: FileLint, console: Console, show_size: bool) -> None:
    counts = result.codes()
    summary = ", ".join(f"{count} {code}" for code, count in counts.items() if code != LintCode.SIZE.value)
    console.print(f"{result.path} ({result.kind}): {summary or 'no findings'}", markup=False)
    for finding in result.findings:
        if finding.code == LintCode.SIZE.value and not show_size:
            continue
        where = result.path
        if finding.line is not None:
            where += f":{finding.line}"
            if finding.col is not None:
                where += f":{finding.col}"
        elif finding.offset is not None:
            where += f": byte {finding.offset}"
        at = f" (at {finding.path})" if finding.path else ""
        console.print(f"  {finding.severity} {where}: {finding.message}{at} [{finding.code}]", markup=False)


def _render_total(results: list[FileLint], console: Console) -> None:
    totals: dict[str, int] = {}
    for result in results:
        for code, count in result.codes().items():
            totals[code] = totals.get(code, 0) + count
    ordered = [code for code in (*_CODES, *sorted(totals)) if code in totals]
    line = ", ".join(f"{totals[code]} {code}" for code in dict.fromkeys(ordered))
    console.print(f"{len(results)} file(s): {line or 'no findings'}", markup=False)


@click.command("lint")
@click.argument("libraries", nargs=-1, required=True, type=UserPath(), metavar="LIBRARY...")
@click.option("--json", "as_json", is_flag=True, help="Print every finding as JSON (one object per file).")
@click.option(
    "--error-on",
    "error_on",
    default="",
    metavar="CODES",
    help=f"Comma-separated codes that make lint exit 1 ({', '.join(_CODES)}, or all).",
)
@click.option(
    "--grid-factor",
    type=click.FloatRange(min=1.0),
    default=LintOptions.grid_factor,
    show_default=True,
    help="grid-outlier: macro-tile area ratio to every neighbour.",
)
@click.option("--size/--no-size", "show_size", default=False, help="Also print the size findings (always in --json).")
@subtree_options
@click.pass_context
def lint_command(
    ctx: click.Context, libraries: tuple[str, ...], as_json: bool, error_on: str, grid_factor: float, show_size: bool,
    subtree: str | None, asic_revision: int | None,
) -> None:  # fmt: skip
    """Semantic checks of libraries: dead, shadowed and unreachable entries and kernels, problem
    types with no fallback, GridBased outliers, sizes.

    LIBRARY is a master library (YAML, .dat, gzip), a logic file (built like `select` builds it)
    or a directory (file by file). Exits 0 with findings, 1 when a code of --error-on was found,
    3 when a file cannot be read.
    """
    failing = _codes(error_on)
    files = library_files(libraries, subtree=subtree, asic_revision=asic_revision)
    options = LintOptions(grid_factor=grid_factor)
    console = stdout_console()
    results: list[FileLint] = []
    with phases("linting", len(files) if len(files) > 1 else None) as shown:
        for path in files:  # each file's findings as soon as it is linted
            result = lint_file(path, options, stage=shown.stage)
            results.append(result)
            if not as_json:
                _render_file(result, console, show_size)
            shown.advance(1)
    if as_json:
        print_json(results)
    else:
        _render_total(results, console)
    if any(result.kind == "unreadable" for result in results):
        ctx.exit(ExitCode.BAD_INPUT)
    if any(finding.code in failing for result in results for finding in result.findings):
        ctx.exit(ExitCode.DIFFERENCES)
