"""The one immutable configuration of a tuning run (what ``tensilekit tune`` options build)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tensilekit.pipeline.simulate import SIMULATED, SimulatorConfig

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
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    logs: tuple[Path, ...] = Field(min_length=1)
    arch: str
    workdir: Path
    simulate: bool = False
    mode: Literal["search"] = "search"
    devices: tuple[int, ...] = (0,)
    slots_per_device: int = Field(default=1, ge=1)
    cpu_slots: int = Field(default=1, ge=1)
    retries: int = Field(default=1, ge=0)
    timeout: float | None = Field(default=900.0, gt=0)
    keep_thr: float = Field(default=1.0, gt=0.0, le=1.0)
    err_thr: float = Field(default=2.0, gt=0.0)
    up_thr: float = 0.01
    verify_ratio: float = Field(default=10.0, gt=0.0)
    top_k: int = Field(default=5, ge=1)
    screen_iters: int = Field(default=10, ge=1)
    screen_cold_iters: int = Field(default=2, ge=0)
    accurate_iters: int = Field(default=100, ge=1)
    accurate_cold_iters: int = Field(default=20, ge=0)
    rotating_mb: int | None = Field(default=None, ge=0)
    from_stage: str | None = None
    only: tuple[str, ...] = ()
    no_rerun: bool = False
    merge_into: Path | None = None
    library_logic: Path | None = None
    """Real runs: the logic files the installed hipBLASLt was built from (solutions to reuse)."""
    seed: int = 0
    bench_executable: str = "hipblaslt-bench"
    create_library_executable: str = "TensileCreateLibrary"
    sim_time_scale: float = Field(default=0.0, ge=0.0)
    """Simulated runs: wall seconds slept per simulated GPU second (benchmarks, kill tests)."""
    sim_startup_s: float = Field(default=0.0, ge=0.0)

    @field_validator("arch")
    @classmethod
    def _known_arch(cls, value: str) -> str:
        if value not in KNOWN_ARCHS:
            raise ValueError(f"unsupported architecture {value!r} (supported: {', '.join(KNOWN_ARCHS)})")
        return value

    @field_validator("devices")
    @classmethod
    def _distinct_devices(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 0:
            raise ValueError("devices must be distinct non-negative indices")
        return value

    @model_validator(mode="after")
    def _check(self) -> TuneConfig:
        if self.accurate_iters < 50 <= self.screen_iters:
            raise ValueError("accurate_iters must not be smaller than screen_iters")
        return self

    @property
    def data_label(self) -> str:
        """``SIMULATED`` or ``measured``: the value of the ``data`` column of every CSV."""
        return SIMULATED if self.simulate else "measured"

    def simulator(self) -> SimulatorConfig | None:
        """The simulated GPU's configuration, or None for real runs."""
        if not self.simulate:
            return None
        return SimulatorConfig(
            arch=self.arch, seed=self.seed, time_scale=self.sim_time_scale, startup_s=self.sim_startup_s
        )

    def measurement_slice(self) -> dict[str, object]:
        """The options every benchmarking stage's results depend on."""
        values: dict[str, object] = {
            "arch": self.arch,
            "simulate": self.simulate,
            "accurate_iters": self.accurate_iters,
            "accurate_cold_iters": self.accurate_cold_iters,
            "rotating_mb": self.rotating_mb,
        }
        if self.simulate:
            values["seed"] = self.seed
        else:
            values["bench_executable"] = self.bench_executable
        return values


__all__ = ["KNOWN_ARCHS", "TuneConfig"]
