"""The one immutable configuration of a tuning run (what ``tensilekit tune`` options build)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tensilekit.errors import TensilekitError
from tensilekit.tools.profiles import DEFAULT_PROFILE, DEFAULT_TENSILE_PROFILE, PROFILES, ToolProfile, tool_profile
from tensilekit.tools.toolset import SimulatorConfig, Toolset, toolset_for

KNOWN_ARCHS = ("gfx90a", "gfx942", "gfx950")


class TuneConfig(BaseModel):
    """Everything a tuning run depends on. Frozen; stages read only their slice of it.

    Thresholds:
        keep_thr: keep the GEMMs that together make up this fraction of the measured GEMM time,
            largest first (1.0 keeps every GEMM; 0.9 drops the long tail that adds up to 10 %).
        err_thr: drop a tuned kernel whose error exceeds ``err_thr`` times the reference
            library's error for the same GEMM (both from ``hipblaslt-bench -v``).
        up_thr: drop a tuned kernel whose uplift (reference time / tuned time - 1) is below this.
        verify_ratio: during the search, a candidate whose error exceeds ``verify_ratio`` times
            the reference error fails verification (a per-candidate result).

    Resilience (:mod:`tensilekit.pipeline.resilience`):
        timeout: seconds one tool run may take in all. stall_timeout: seconds it may go without
            printing anything before it is killed as stalled (None: never).
        retire_after: a job whose attempts have failed this many times over all runs is retired
            -- reported, never started again (0: never retire).
        abort_after: this many jobs failing one after the other stop the run (exit 4; rerun to
            resume; 0: never).

    Modes:
        search: dense search over the solutions the library already has.
        ga: genetic search over new kernels (:mod:`tensilekit.search.ga`): ``population``,
            ``generations``, ``elite``, ``tournament``, ``crossover_rate``, ``mutation_rate``,
            ``stagnation`` and ``time_budget`` (seconds) steer it; ``seed`` makes it reproducible.
        grid: every valid kernel over the profile's tile parameters (at most ``grid_limit``).
        Both kernel-search modes benchmark with the Tensile driver (``tensile_executable``, or the
        SIMULATED driver) using configs in ``search_dialect``; sizes of one GEMM type are
        grouped when within a factor ``2**cluster_distance`` (at most ``cluster_size`` per group).
        ``search_dialect`` ``tensile`` (ROCm/Tensile, rocBLAS) ends the run after the search:
        rocBLAS tuning stops at configs (no rocBLAS build or benchmark path).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    logs: tuple[Path, ...] = ()
    inline: tuple[str, ...] = ()
    """GEMMs given on the command line, each in GEKO's ``--inline`` form
    ``M N batch K DataType DestDataType ComputeDataType transA transB`` (call count 1)."""
    arch: str
    workdir: Path
    simulate: bool = False
    mode: Literal["search", "ga", "grid"] = "search"
    devices: tuple[int, ...] = (0,)
    slots_per_device: int = Field(default=1, ge=1)
    cpu_slots: int = Field(default=1, ge=1)
    retries: int = Field(default=1, ge=0)
    timeout: float | None = Field(default=900.0, gt=0)
    stall_timeout: float | None = Field(default=300.0, gt=0)
    retire_after: int = Field(default=4, ge=0)
    abort_after: int = Field(default=8, ge=0)
    keep_thr: float = Field(default=1.0, gt=0.0, le=1.0)
    err_thr: float = Field(default=2.0, gt=0.0)
    up_thr: float = 0.03
    """GEKO's keep threshold (3 %): a GPU's run-to-run noise must not pass for an uplift."""
    verify_ratio: float = Field(default=10.0, gt=0.0)
    top_k: int = Field(default=5, ge=1)
    screen_iters: int = Field(default=10, ge=1)
    screen_cold_iters: int = Field(default=2, ge=0)
    accurate_iters: int = Field(default=100, ge=1)
    accurate_cold_iters: int = Field(default=20, ge=0)
    rotating_mb: int | None = Field(default=512, ge=0)
    """Rotating buffer of every verified run, in MB (GEKO: 512): no run times a warm cache."""
    flush: bool = True
    """``--flush`` on every verified run (GEKO's ``flush=True``)."""
    bench_duration: float = Field(default=0.5, ge=0.0)
    """Seconds each of the cold and the timed phase of a verified run lasts: iterations are
    ``ceil(duration / baseline time)`` (GEKO ``bench.log.update``); 0 keeps ``accurate_iters``."""
    from_stage: str | None = None
    only: tuple[str, ...] = ()
    no_rerun: bool = False
    merge_into: Path | None = None
    library_logic: Path | None = None
    """Real runs: the logic files the installed hipBLASLt was built from (solutions to reuse)."""
    reference_library: Path | None = None
    """Real runs: the library folder every reference run uses (``HIPBLASLT_TENSILE_LIBPATH``);
    None: the one hipBLASLt finds by itself (:mod:`tensilekit.tools.hipblaslt_library`)."""
    custom_kernels: Path | None = None
    """hipBLASLt's ``tensilelite/Tensile/CustomKernels``: configs of the custom kernels logic files name."""
    seed: int = 0
    bench_executable: str = "hipblaslt-bench"
    create_library_executable: str = "TensileCreateLibrary"
    sim_time_scale: float = Field(default=0.0, ge=0.0)
    """Simulated runs: wall seconds slept per simulated GPU second (benchmarks, kill tests)."""
    sim_startup_s: float = Field(default=0.0, ge=0.0)
    population: int = Field(default=32, ge=2)
    generations: int = Field(default=8, ge=1)
    elite: int = Field(default=2, ge=0)
    tournament: int = Field(default=3, ge=1)
    crossover_rate: float = Field(default=0.9, ge=0.0, le=1.0)
    mutation_rate: float = Field(default=0.2, ge=0.0, le=1.0)
    stagnation: int = Field(default=4, ge=0)
    time_budget: float | None = Field(default=None, gt=0)
    grid_limit: int = Field(default=2048, ge=1)
    cluster_distance: float = Field(default=2.0, gt=0.0)
    cluster_size: int = Field(default=8, ge=1)
    search_dialect: Literal["tensilelite", "tensile"] = "tensilelite"
    tensile_executable: str = "Tensile"
    tool_profile: str | None = None
    """The hipBLASLt release the tools belong to (:mod:`tensilekit.tools.profiles`); None until
    preflight detects it (simulated runs: the newest release that knows ``arch`` among the
    runnable ones, see :meth:`hipblaslt_profile`)."""
    tensile_profile: str = DEFAULT_TENSILE_PROFILE
    """The ROCm/Tensile release of ``--config-dialect tensile``."""

    @field_validator("arch")
    @classmethod
    def _known_arch(cls, value: str) -> str:
        if value not in KNOWN_ARCHS:
            raise ValueError(f"unsupported architecture {value!r} (supported: {', '.join(KNOWN_ARCHS)})")
        return value

    @field_validator("tool_profile", "tensile_profile")
    @classmethod
    def _known_profile(cls, value: str | None) -> str | None:
        if value is not None and value not in PROFILES:
            raise ValueError(f"unknown tool profile {value!r} (profiles: {', '.join(sorted(PROFILES))})")
        return value

    @field_validator("inline")
    @classmethod
    def _inline_gemms(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from tensilekit.workload.geko_list import parse_inline_gemm

        for spec in value:
            try:
                parse_inline_gemm(spec)
            except TensilekitError as error:
                raise ValueError(str(error)) from None
        return tuple(" ".join(spec.split()) for spec in value)

    @field_validator("devices")
    @classmethod
    def _distinct_devices(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 0:
            raise ValueError("devices must be distinct non-negative indices")
        return value

    @model_validator(mode="after")
    def _check(self) -> TuneConfig:
        if not self.logs and not self.inline:
            raise ValueError("no workload: give log files, --inline GEMMs, or both")
        # The accurate phase re-times the screen's best candidates: fewer iterations than the
        # screen would make it the noisier of the two.
        if self.accurate_iters < self.screen_iters:
            raise ValueError(
                f"accurate_iters ({self.accurate_iters}) must not be smaller than screen_iters ({self.screen_iters})"
            )
        # ROCm/Tensile configs are what the kernel search writes; the dense search only replays
        # hipBLASLt's own solutions with hipblaslt-bench (no rocBLAS benchmark path exists).
        if self.search_dialect == "tensile" and self.mode == "search":
            raise ValueError(
                "search_dialect 'tensile' (ROCm/Tensile configs for rocBLAS) needs mode ga or grid: rocBLAS tuning "
                "stops at configs, and the dense search only replays hipBLASLt's own solutions"
            )
        # A work directory inside an input folder becomes input: the next run reads its outputs (tuned logic
        # files, the reference build) as logic files and, the folder's hash having changed, reruns every stage.
        workdir = self.workdir.expanduser().resolve()
        for flag, folder in (("--library-logic", self.library_logic), ("--reference-library", self.reference_library)):
            if folder is not None and workdir.is_relative_to(folder.expanduser().resolve()):
                raise ValueError(
                    f"--workdir {self.workdir} is inside {flag} {folder}: the next run would read this run's outputs "
                    "as logic files; choose a work directory outside it"
                )
        # Elitism is the GA's; grid and search modes do not breed, so the population size is moot.
        if self.mode == "ga" and self.elite >= self.population:
            raise ValueError(f"elite ({self.elite}) must be smaller than the population ({self.population})")
        return self

    def hipblaslt_profile(self) -> ToolProfile:
        """The hipBLASLt release's profile: ``tool_profile``, else 7d9fb68 where it knows the
        architecture and the develop profile (gfx950) elsewhere."""
        if self.tool_profile is not None:
            return tool_profile(self.tool_profile)
        default = tool_profile(DEFAULT_PROFILE)
        return default if self.arch in default.archs else tool_profile("hipblaslt-develop")

    def driver_profile(self) -> ToolProfile:
        """The profile of the benchmark driver the kernel search writes configs for."""
        if self.search_dialect == "tensile":
            return tool_profile(self.tensile_profile)
        return self.hipblaslt_profile()

    @property
    def data_label(self) -> str:
        """``SIMULATED`` or ``measured``: the value of the ``data`` column of every CSV (the label
        of the tools the run drives)."""
        return self.toolset().label

    def toolset(self) -> Toolset:
        """The tools this run drives, real or SIMULATED (:func:`~tensilekit.tools.toolset.toolset_for`)."""
        return toolset_for(self.simulator())

    def simulator(self) -> SimulatorConfig | None:
        """The simulated GPU's configuration, or None for real runs."""
        if not self.simulate:
            return None
        return SimulatorConfig(
            arch=self.arch, seed=self.seed, time_scale=self.sim_time_scale, startup_s=self.sim_startup_s,
            library_logic=None if self.library_logic is None else str(self.library_logic),
            custom_kernels=None if self.library_logic is None or self.custom_kernels is None else str(self.custom_kernels),
        )  # fmt: skip

    def measurement_slice(self) -> dict[str, object]:
        """The options every benchmarking stage's results depend on."""
        values: dict[str, object] = {
            "arch": self.arch,
            "simulate": self.simulate,
            "accurate_iters": self.accurate_iters,
            "accurate_cold_iters": self.accurate_cold_iters,
            "rotating_mb": self.rotating_mb,
            "flush": self.flush,
            "bench_duration": self.bench_duration,
            "tool_profile": self.hipblaslt_profile().name,
        }
        if self.simulate:
            values["seed"] = self.seed
        else:
            values["bench_executable"] = self.bench_executable
            if self.reference_library is not None:
                values["reference_library"] = str(self.reference_library)
        return values

    def kernel_search_slice(self) -> dict[str, object]:
        """The options the kernel search's results depend on (``--mode ga``/``grid``)."""
        values: dict[str, object] = {
            "mode": self.mode, "seed": self.seed, "dialect": self.search_dialect,
            "driver_profile": self.driver_profile().name,
            "cluster_distance": self.cluster_distance, "cluster_size": self.cluster_size,
        }  # fmt: skip
        if self.mode == "ga":
            values.update(
                population=self.population, generations=self.generations, elite=self.elite,
                tournament=self.tournament, crossover_rate=self.crossover_rate, mutation_rate=self.mutation_rate,
                stagnation=self.stagnation, time_budget=self.time_budget,
            )  # fmt: skip
        else:
            values["grid_limit"] = self.grid_limit
        if not self.simulate:
            values["tensile_executable"] = self.tensile_executable
        return values


__all__ = ["KNOWN_ARCHS", "TuneConfig"]
