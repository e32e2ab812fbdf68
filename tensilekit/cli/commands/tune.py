"""``tensilekit tune``: from hipBLASLt logs to a merged tuned library and an uplift report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from tensilekit.cli.options import UserPath
from tensilekit.cli.output import print_table
from tensilekit.cli.workloads import STRICT_HELP, read_workloads
from tensilekit.errors import install_extra_hint
from tensilekit.model.labels import SIZE_HEADER, size_text
from tensilekit.pipeline.config import KNOWN_ARCHS, TuneConfig
from tensilekit.pipeline.executors import Executor
from tensilekit.pipeline.report import TuneReport, workload_headline
from tensilekit.pipeline.stages import STAGE_NAMES


def _devices(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        devices = tuple(int(item) for item in value.replace(" ", "").split(",") if item != "")
    except ValueError:
        raise click.BadParameter("expected a comma-separated list of GPU indices, e.g. 0,1,2,3") from None
    if not devices or len(set(devices)) != len(devices) or min(devices) < 0:
        raise click.BadParameter("expected distinct non-negative GPU indices, e.g. 0,1,2,3")
    return devices


def _stages(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(name for item in value for name in item.split(",") if name)
    unknown = [name for name in names if name not in STAGE_NAMES]
    if unknown:
        raise click.BadParameter(f"unknown stage {unknown[0]!r}; stages: {', '.join(STAGE_NAMES)}")
    return names


def build_executor(kind: str, config: TuneConfig, address: str | None) -> Executor | None:
    """The executor ``--executor`` asks for (None: the API's default local pool)."""
    if kind == "ray":
        from tensilekit.pipeline.executors.ray import RayExecutor

        return RayExecutor(
            address, slots_per_device=config.slots_per_device, cpu_slots=config.cpu_slots,
            retries=config.retries, timeout=config.timeout, stall_timeout=config.stall_timeout,
            local_devices=len(config.devices),
        )  # fmt: skip
    if kind == "serial":
        from tensilekit.pipeline.executors.local import SerialExecutor

        return SerialExecutor(
            config.devices[0], retries=config.retries, timeout=config.timeout, stall_timeout=config.stall_timeout
        )
    return None


def render_summary(report: TuneReport, workdir: Path, console: Console) -> None:
    label = f" ({report.data})" if report.simulated else ""
    tuned = report.tuned
    if tuned:
        table = Table(title=f"Tuned GEMMs{label}", title_justify="left")
        for column in ("id", "type", SIZE_HEADER, "calls", "share", "reference us", "tuned us", "uplift"):
            table.add_column(column, justify="left" if column in ("id", "type", SIZE_HEADER) else "right")
        for gemm in tuned:
            table.add_row(
                gemm.id, gemm.gemm_type, size_text(gemm.m, gemm.n, gemm.k, gemm.batch), str(gemm.call_count),
                "-" if gemm.time_share is None else f"{gemm.time_share:.1%}",
                "-" if gemm.reference_us is None else f"{gemm.reference_us:.4g}",
                "-" if gemm.tuned_us is None else f"{gemm.tuned_us:.4g}",
                "-" if gemm.uplift is None else f"{gemm.uplift:+.2%}",
            )  # fmt: skip
        print_table(console, table)
    weighted = "-" if report.weighted_uplift is None else f"{report.weighted_uplift:+.2%}"
    average = "-" if report.average_uplift is None else f"{report.average_uplift:+.2%}"
    console.print(workload_headline(report.workload_time) + label)  # the headline: what the workload's GEMMs cost
    console.print(
        f"{len(tuned)} of {len(report.gemms)} GEMM(s) tuned{label}; per-GEMM statistics: average uplift {average}, "
        f"time-share-weighted {weighted}, expected GEMM time saving {report.gemm_time_saving:.2%}"
    )
    for note in report.notes:
        if note.startswith("kernel search"):
            console.print(note + label)
    if report.failures:
        console.print(f"{len(report.failures)} job(s) failed; see {workdir / 'report.md'}")
    console.print(
        f"report: {workdir / 'report.md'}  final logic: {workdir / 'final_libs'}  "
        f"full logic: {workdir / 'full_libs'}  merged: {workdir / 'merged'}"
    )


def _check_tunable(problems: Any, sources: list[str], *, strict: bool) -> None:
    """A GEMM no logic file can hold is said now, not after benchmarking it: a warning (the ingest
    stage leaves it out), or with ``--strict`` an error (exit 3)."""
    from tensilekit.errors import Location, WorkloadLineError
    from tensilekit.pipeline.stages.ingest import untunable_reason

    where = ", ".join(sources)
    for problem in problems:
        reason = untunable_reason(problem)
        if reason is None:
            continue
        if strict:
            raise WorkloadLineError(reason, Location(file=where))
        click.echo(f"warning: {where}: {reason} (skipped)", err=True)


def _default(name: str) -> Any:
    """The API's default of a TuneConfig field: one default, however a run is started."""
    return TuneConfig.model_fields[name].default


class _TuneCommand(click.Command):
    """``tune``, whose ``--inline`` also takes one GEMM as one quoted value.

    ``--inline`` is nine values (GEKO's form), but a reader naturally quotes a GEMM as one value
    (``--inline "4096 64 1 4096 H H S T N"``); as nine values click would then swallow the next
    eight arguments (``--arch gfx942 …``) into the GEMM and blame a missing ``--arch``. A value
    holding spaces is split into its words before click parses, so both spellings mean one GEMM.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, split_quoted_inline(args))


def split_quoted_inline(args: list[str]) -> list[str]:
    """``args`` with every ``--inline "M N …"`` (or ``--inline=…``) value split into its words.

    A quoted value is one GEMM: one that is not nine words is a usage error naming it, never
    eked out with the arguments that follow it.
    """
    split: list[str] = []
    position, count = 0, 0
    while position < len(args):
        arg = args[position]
        if arg == "--":
            return split + args[position:]
        quoted: str | None = None
        if arg.startswith("--inline="):
            quoted = arg.partition("=")[2]
        elif arg == "--inline" and position + 1 < len(args) and len(args[position + 1].split()) > 1:
            quoted = args[position + 1]
            position += 1
        if arg == "--inline" or arg.startswith("--inline="):
            count += 1
        if quoted is None:
            split.append(arg)
        else:
            _check_quoted_inline(count, quoted)
            split += ["--inline", *quoted.split()]
        position += 1
    return split


def _check_quoted_inline(position: int, value: str) -> None:
    if len(value.split()) != 9:
        _check_inline([value], first=position)


@click.command("tune", cls=_TuneCommand)
@click.argument("logs", nargs=-1, required=False, type=UserPath(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--inline",
    "inline",
    nargs=9,
    multiple=True,
    metavar="M N BATCH K DATATYPE DESTDATATYPE COMPUTEDATATYPE TRANSA TRANSB",
    help="A GEMM given on the command line, in GEKO's --inline form (Tensile type letters), e.g. "
    '--inline 1024 1024 1 1024 B B S N T or, quoted as one value, --inline "1024 1024 1 1024 B B S N T". '
    "Repeat for more; with or instead of LOG files.",
)
@click.option("--arch", required=True, type=click.Choice(KNOWN_ARCHS), help="Target GPU architecture.")
@click.option(
    "--workdir",
    required=True,
    type=UserPath(file_okay=False, path_type=Path),
    help="Run directory; rerunning with the same one resumes.",
)
@click.option(
    "--simulate", is_flag=True, help="Use tensilekit's SIMULATED GPU instead of hipblaslt-bench (no ROCm needed)."
)
@click.option(
    "--mode",
    type=click.Choice(["search", "ga", "grid"]),
    default="search",
    show_default=True,
    help="search: dense search over existing solutions; ga: genetic search for new kernels with the Tensile "
    "benchmark driver; grid: every valid kernel of the profile's tile parameters (small spaces).",
)
@click.option(
    "--population", type=click.IntRange(min=2), default=32, show_default=True, help="GA: kernels per generation."
)
@click.option(
    "--generations", type=click.IntRange(min=1), default=8, show_default=True, help="GA: generations at most."
)
@click.option(
    "--stagnation",
    type=click.IntRange(min=0),
    default=4,
    show_default=True,
    help="GA: stop after this many generations without improvement (0: never).",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="GA: stop starting generations after this many seconds (results then depend on timing).",
)
@click.option(
    "--grid-limit",
    type=click.IntRange(min=1),
    default=2048,
    show_default=True,
    help="grid: refuse to benchmark more than this many kernels per group.",
)
@click.option(
    "--config-dialect",
    type=click.Choice(["tensilelite", "tensile"]),
    default="tensilelite",
    show_default=True,
    help="ga/grid: write hipBLASLt tensilelite configs, or ROCm/Tensile ones for rocBLAS. rocBLAS tuning stops at "
    "configs: with tensile the run ends after the search stage (configs in WORKDIR/04_search, measured by "
    "ROCm/Tensile's driver); tensilekit has no rocBLAS build or benchmark path (no rocblas-bench), so nothing is "
    "built, benchmarked or merged.",
)
@click.option(
    "--tool-profile",
    type=click.Choice(["hipblaslt-7d9fb68", "hipblaslt-develop"]),
    default=None,
    help="The hipBLASLt release of the installed tools (default: detected from TensileCreateLibrary's options and, "
    "with --mode ga/grid, the Tensile driver's --version; hipblaslt-bench's version is only reported).",
)
@click.option(
    "--tensile-profile",
    type=click.Choice(["tensile-09ec347", "tensile-a164ed70"]),
    default="tensile-a164ed70",
    show_default=True,
    help="ga/grid with --config-dialect tensile: the ROCm/Tensile release of the driver.",
)
@click.option("--devices", default="0", show_default=True, callback=_devices, help="GPU indices to use, e.g. 0,1,2,3.")
@click.option(
    "--slots-per-device",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Benchmarks that may share one GPU at a time.",
)
@click.option(
    "--executor",
    "executor_kind",
    type=click.Choice(["local", "ray", "serial"]),
    default="local",
    show_default=True,
    help=f"local: device-pinned pool; ray: a Ray cluster (the ray extra: {install_extra_hint('ray')}); "
    "serial: one job at a time.",
)
@click.option("--address", default=None, help="Ray cluster address (with --executor ray), e.g. auto.")
@click.option(
    "--retries", type=click.IntRange(min=0), default=1, show_default=True, help="Extra attempts for a failed job."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=900.0,
    show_default=True,
    help="Seconds one tool run may take before it is killed.",
)
@click.option(
    "--stall-timeout",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Kill a tool run that prints nothing for this many seconds, as stalled (0: never).",
)
@click.option(
    "--retire-after",
    type=click.IntRange(min=0),
    default=4,
    show_default=True,
    help="Retire a job (a GEMM's screen or baseline, one candidate) after this many failed attempts over all "
    "runs: reported, never started again (0: never; --from-stage starts counting anew).",
)
@click.option(
    "--abort-after",
    type=click.IntRange(min=0),
    default=8,
    show_default=True,
    help="Stop the run (exit 4) after this many jobs failed in a row: a broken GPU or tool. Rerun to resume (0: never).",
)
@click.option(
    "--keep-thr",
    type=click.FloatRange(0, 1, min_open=True),
    default=1.0,
    show_default=True,
    help="Tune the GEMMs that make up this fraction of the measured GEMM time, largest first.",
)
@click.option(
    "--err-thr",
    type=click.FloatRange(min=0, min_open=True),
    default=2.0,
    show_default=True,
    help="Drop a tuned kernel whose error exceeds this multiple of the reference library's error.",
)
@click.option(
    "--up-thr",
    type=float,
    default=_default("up_thr"),
    show_default=True,
    help="Drop a tuned kernel whose uplift (reference/tuned time - 1) is below this (GEKO: 3 %, above a GPU's noise).",
)
@click.option(
    "--bench-duration",
    type=click.FloatRange(min=0),
    default=_default("bench_duration"),
    show_default=True,
    help="Seconds of the cold and of the timed phase of each compared run (iterations from the baseline time); "
    "0: fixed iterations.",
)
@click.option(
    "--rotating",
    "rotating_mb",
    type=click.IntRange(min=0),
    default=_default("rotating_mb"),
    show_default=True,
    help="Rotating buffer of every verified run, in MB (0: none).",
)
@click.option(
    "--flush/--no-flush",
    default=_default("flush"),
    show_default=True,
    help="Flush the GPU caches between iterations of every verified run.",
)
@click.option(
    "--top-k",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Screened solutions per GEMM that are re-timed accurately and verified.",
)
@click.option(
    "--verify-ratio",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="A search candidate whose error exceeds this multiple of the reference error fails verification.",
)
@click.option(
    "--from-stage", type=click.Choice(STAGE_NAMES), default=None, help="Rerun this stage and everything after it."
)
@click.option("--only", multiple=True, callback=_stages, help="Run only these stages (repeat or comma-separate).")
@click.option("--no-rerun", is_flag=True, help="Fail instead of redoing a completed stage whose inputs changed.")
@click.option(
    "--merge-into",
    type=UserPath(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Logic folder to merge the tuned files into (read only; result in WORKDIR/merged/).",
)
@click.option(
    "--library-logic",
    # checked at preflight: a missing or unreadable folder is bad input (exit 3), not usage
    type=UserPath(path_type=Path),
    default=None,
    help="Logic files the installed hipBLASLt was built from (required without --simulate).",
)
@click.option(
    "--reference-library",
    type=UserPath(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The hipBLASLt library folder to tune against (HIPBLASLT_TENSILE_LIBPATH of every reference run; "
    "default: the one hipBLASLt finds), or a folder of logic files to build it from. Solutions are identified "
    "by their index in it.",
)
@click.option(
    "--custom-kernels",
    type=UserPath(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="hipBLASLt's tensilelite/Tensile/CustomKernels folder, for logic files that name custom kernels.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the GA and of the simulated measurement noise (same seed, same result).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--sim-time-scale", type=click.FloatRange(min=0), default=0.0, hidden=True)
@click.option(
    "--bench-executable",
    default="hipblaslt-bench",
    show_default=True,
    help="hipblaslt-bench to run (name on PATH or path; hipBLASLt's build/release/clients/staging).",
)
@click.option(
    "--create-library-executable",
    default="TensileCreateLibrary",
    show_default=True,
    help="TensileCreateLibrary to run (name on PATH or path; from hipBLASLt's tensilelite).",
)
@click.option(
    "--tensile-executable",
    default="Tensile",
    show_default=True,
    help="ga/grid: the Tensile benchmark driver (hipBLASLt: tensilelite/Tensile/bin/Tensile).",
)
def tune_command(
    logs: tuple[Path, ...],
    inline: tuple[tuple[str, ...], ...],
    arch: str,
    workdir: Path,
    simulate: bool,
    mode: str,
    population: int,
    generations: int,
    stagnation: int,
    time_budget: float | None,
    grid_limit: int,
    config_dialect: str,
    tool_profile: str | None,
    tensile_profile: str,
    devices: tuple[int, ...],
    slots_per_device: int,
    executor_kind: str,
    address: str | None,
    retries: int,
    timeout: float,
    stall_timeout: float,
    retire_after: int,
    abort_after: int,
    keep_thr: float,
    err_thr: float,
    up_thr: float,
    bench_duration: float,
    rotating_mb: int,
    flush: bool,
    top_k: int,
    verify_ratio: float,
    from_stage: str | None,
    only: tuple[str, ...],
    no_rerun: bool,
    merge_into: Path | None,
    library_logic: Path | None,
    reference_library: Path | None,
    custom_kernels: Path | None,
    seed: int,
    as_json: bool,
    sim_time_scale: float,
    bench_executable: str,
    create_library_executable: str,
    tensile_executable: str,
    strict: bool,
) -> None:
    """Tune hipBLASLt for the GEMMs in LOG... (profile logs, GEKO lists, TunableOp/AITER CSVs)
    and/or given with --inline.

    Stages (each resumable in WORKDIR/NN_stage/): ingest, library, baseline, search, build,
    benchmark, postprocess, final, merge, report. With --mode ga or grid the search stage
    generates Tensile tuning configs and searches new kernels with the Tensile benchmark driver.
    rocBLAS tuning (--config-dialect tensile) stops at configs: the run ends after the search stage.
    """
    from tensilekit.cli.tune_progress import TuneProgress
    from tensilekit.pipeline.api import run_tuning

    if from_stage and only:
        raise click.UsageError("--from-stage and --only cannot be combined")
    if address and executor_kind != "ray":
        raise click.UsageError("--address is only used with --executor ray")
    if population <= 2 and mode == "ga":
        raise click.UsageError("--population must be larger than the 2 elite kernels")
    if config_dialect == "tensile" and mode == "search":
        raise click.UsageError(
            "--config-dialect tensile writes ROCm/Tensile configs for rocBLAS, which only --mode ga or grid does; "
            "rocBLAS tuning stops at configs (tensilekit has no rocBLAS benchmark path)"
        )
    if not logs and not inline:
        raise click.UsageError("give the workload: LOG files, --inline GEMMs, or both")
    if logs:
        workload, _ = read_workloads(list(logs), strict=strict)  # bad lines: file:line warnings (or exit 3)
        _check_tunable(workload.problems, [str(log) for log in logs], strict=strict)
    _check_inline(inline)
    from pydantic import ValidationError

    try:
        config = TuneConfig(
            logs=logs, inline=tuple(" ".join(values) for values in inline), arch=arch, workdir=workdir,
            simulate=simulate, mode=mode, devices=devices, slots_per_device=slots_per_device, retries=retries,
            timeout=timeout, stall_timeout=stall_timeout or None, retire_after=retire_after, abort_after=abort_after,
            keep_thr=keep_thr, err_thr=err_thr, up_thr=up_thr, bench_duration=bench_duration,
            rotating_mb=rotating_mb, flush=flush, top_k=top_k, verify_ratio=verify_ratio,
            from_stage=from_stage, only=only, no_rerun=no_rerun, merge_into=merge_into, library_logic=library_logic,
            reference_library=reference_library, custom_kernels=custom_kernels, seed=seed,
            bench_executable=bench_executable,
            create_library_executable=create_library_executable, sim_time_scale=sim_time_scale,
            population=population, generations=generations, stagnation=stagnation, time_budget=time_budget,
            grid_limit=grid_limit, search_dialect=config_dialect, tensile_executable=tensile_executable,
            tool_profile=tool_profile, tensile_profile=tensile_profile,
        )  # fmt: skip
    except ValidationError as error:  # option combinations TuneConfig refuses are usage errors (exit 2)
        problems = "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'options'}: {item['msg'].removeprefix('Value error, ')}"
            for item in error.errors()
        )  # pydantic's "Value error, " prefix says nothing to a user
        raise click.UsageError(problems) from None
    stderr = Console(stderr=True, highlight=False, soft_wrap=True)
    executor = build_executor(executor_kind, config, address)
    try:
        report = run_tuning(config, executor, reporter=TuneProgress(stderr))
    finally:
        if executor is not None:
            executor.close()
    if as_json:
        click.echo(report.model_dump_json(indent=1))
    elif config.search_dialect == "tensile":
        from tensilekit.pipeline.stages import ROCBLAS_STOPS_AT_CONFIGS

        console = Console(highlight=False, soft_wrap=True)
        console.print(f"{ROCBLAS_STOPS_AT_CONFIGS}{' (SIMULATED)' if config.simulate else ''}.")
        console.print(f"configs: {workdir / '04_search' / 'configs'}  search results: {workdir / '04_search'}")
    else:
        render_summary(report, workdir, Console(highlight=False, soft_wrap=True))


def _check_inline(inline: Sequence[str | Sequence[str]], first: int = 1) -> None:
    """Each ``--inline`` GEMM (its values, or one quoted string) reads as one: a usage error naming
    which one (counted from ``first``) and why, exit 2."""
    from tensilekit.errors import InvalidValue
    from tensilekit.workload import parse_inline_gemm

    for position, values in enumerate(inline, start=first):
        try:
            parse_inline_gemm(values)
        except InvalidValue as error:
            raise click.UsageError(f"--inline #{position}: {error.message}") from None


__all__ = ["tune_command"]
