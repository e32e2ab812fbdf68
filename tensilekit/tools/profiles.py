"""Tool profiles: what each AMD release's tools accept, so tensilekit speaks the installed version.

AMD's tools change their command lines, data-type letters and config rules between releases, and
a command line that one release reads means something else (or nothing) to another. A
:class:`ToolProfile` is one release's answers; every builder that talks to a tool asks the
profile instead of assuming:

* **hipblaslt-bench** (``clients/benchmarks/client.cpp``): how ``--scaleA``/``--scaleB`` take
  their mode (hipBLASLt 7d9fb68: ``s``/``v`` strings, anything else silently means *no scaling*,
  client.cpp:484-490,826-834; newer: integers 0..8), which flags exist at all (7d9fb68 has no
  ``--scaleC``/``--scaleD``/``--swizzleA``/``--swizzleB``/``--aux_type``/``--batch_mode``/
  ``--alphai``/``--betai``/``--bias_stride``: "Option --scaleC is not defined."), and which type
  names it reads (7d9fb68: ``f8_r``/``bf8_r`` only).
* **Tensile benchmark driver** configs: the dialect, the ``(DataType, DestDataType,
  ComputeDataType)`` triples its ``validGEMMTypes`` accepts, the type letters its ``DataType``
  table knows (``F8N``/``B8N`` only in newer tensilelite: ``KeyError: 'f8n'`` elsewhere), the
  architectures it knows, and the ``MinimumRequiredVersion`` its ``versionIsCompatible`` accepts
  (same major, minor.patch not above its own: Common.py:1821-1835 @7d9fb68).
* **TensileCreateLibrary**'s flavour (:class:`~tensilekit.tools.create_library.CreateLibraryFlavor`).

A GEMM a profile cannot express is reported as such (:meth:`ToolProfile.bench_problem_issue`,
:meth:`ToolProfile.config_type_issue`); it is never replayed or tuned as a different problem.

Profiles (``PROFILES``):

``hipblaslt-7d9fb68``
    hipBLASLt 7d9fb683 (Oct 2024, hipBLASLt 0.11.0), tensilelite 4.33.0; the tensilelite 4.x
    releases (hipBLASLt 0.11 to 0.14) share its command lines. Runnable here (``../shared/amd``).
``hipblaslt-develop``
    current ROCm/rocm-libraries ``projects/hipblaslt`` as read from source (client.cpp @0687ecfd,
    GEKO ``config_sections_generator.py`` @06204e51); not runnable here, so its values are what
    the source says, marked in comments.
``tensile-09ec347`` / ``tensile-a164ed70``
    ROCm/Tensile 4.42.0 (rocBLAS pin) and 4.44.0 (ROCm 6.5 staging): the ``--config-dialect
    tensile`` driver. Runnable here.

Pure data; no I/O.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from tensilekit.errors import TensilekitError

Dialect = Literal["tensilelite", "tensile"]
GemmTypeLetters = tuple[str, str, str]

# validGEMMTypes, tensilelite Common.py:450-463 @7d9fb68.
_TENSILELITE_7D9FB68_GEMM_TYPES: frozenset[GemmTypeLetters] = frozenset(
    {
        ("H", "H", "H"), ("S", "S", "S"), ("D", "D", "D"), ("C", "C", "C"), ("Z", "Z", "Z"),
        ("H", "H", "S"), ("H", "S", "S"), ("B", "B", "S"), ("B", "S", "S"), ("B", "H", "S"),
        ("I8", "I", "I"), ("4xi8", "I", "I"), ("I8", "I8", "I"), ("I8", "I", "S"), ("I8", "I8", "S"),
        ("I8", "H", "S"), ("I8", "B", "S"), ("F8", "S", "S"), ("B8", "S", "S"), ("F8B8", "S", "S"),
        ("B8F8", "S", "S"), ("F8", "H", "S"), ("B8", "H", "S"), ("F8B8", "H", "S"), ("B8F8", "H", "S"),
        ("B8", "B", "S"), ("H", "F8", "S"), ("F8", "B", "S"), ("F8B8", "B", "S"), ("B8F8", "B", "S"),
        ("F8", "F8", "S"), ("B8", "B8", "S"), ("F8B8", "B8", "S"), ("B8F8", "B8", "S"), ("F8", "B8", "S"),
        ("B8", "F8", "S"), ("F8B8", "F8", "S"), ("B8F8", "F8", "S"),
    }
)  # fmt: skip
# validGEMMTypes, ROCm/Tensile Common.py:453-462 @09ec347 (the same list @a164ed70, Common.py:436).
_TENSILE_GEMM_TYPES: frozenset[GemmTypeLetters] = frozenset(
    {
        ("D", "D", "D"), ("S", "S", "S"), ("Z", "Z", "Z"), ("C", "C", "C"), ("H", "H", "H"), ("H", "H", "S"),
        ("H", "S", "S"), ("B", "B", "S"), ("B", "S", "S"), ("I8", "I", "I"), ("4xi8", "I", "I"),
        ("F8", "S", "S"), ("B8", "S", "S"), ("F8B8", "S", "S"), ("B8F8", "S", "S"), ("F8", "F8", "S"),
        ("B8", "B8", "S"), ("F8B8", "B8", "S"), ("B8F8", "B8", "S"), ("F8", "H", "S"), ("B8", "H", "S"),
        ("F8B8", "H", "S"), ("B8F8", "H", "S"),
    }
)  # fmt: skip
# The newest tensilelite adds the FNUZ letters (F8N, B8N) next to OCP F8/B8; its list as read
# from source is the 7d9fb68 one with F8N/B8N wherever F8/B8 appear.
_FNUZ = {"F8": "F8N", "B8": "B8N", "F8B8": "F8B8N", "B8F8": "B8F8N"}
_DEVELOP_GEMM_TYPES: frozenset[GemmTypeLetters] = _TENSILELITE_7D9FB68_GEMM_TYPES | frozenset(
    (_FNUZ.get(a, a), _FNUZ.get(b, b), c) for a, b, c in _TENSILELITE_7D9FB68_GEMM_TYPES if a in _FNUZ
)

_FNUZ_BENCH_TYPES = {"f8_fnuz_r": "f8_r", "bf8_fnuz_r": "bf8_r"}
"""hipBLASLt 7d9fb68 names gfx942's (FNUZ) fp8 ``f8_r``/``bf8_r``; newer releases ``f8_fnuz_r``."""
_FNUZ_ARCHS = frozenset({"gfx940", "gfx941", "gfx942"})
"""Architectures whose hardware fp8 is FNUZ: there an older tool's ``F8``/``f8_r`` *is* ``F8N``."""

_BENCH_FLAGS_7D9FB68: frozenset[str] = frozenset()
_BENCH_FLAGS_DEVELOP: frozenset[str] = frozenset(
    {"--scaleC", "--scaleD", "--swizzleA", "--swizzleB", "--aux_type", "--batch_mode", "--alphai", "--betai",
     "--bias_stride"}
)  # fmt: skip
"""Flags hipblaslt-bench gained after 7d9fb68 (client.cpp @0687ecfd defines them; @7d9fb68 does not)."""


_BENCH_DATA_TYPES_7D9FB68 = frozenset(
    {"f32_r", "f64_r", "f16_r", "bf16_r", "i8_r", "i32_r", "f8_r", "bf8_r"}
)  # fmt: skip
"""Data types hipblaslt-bench @7d9fb68 reads (string_to_hip_datatype, library/src/include/auxiliary.hpp):
no ``f4_r``/``f6_r`` (FP4/FP6 arrived with MX block scaling in later releases)."""


_BENCH_COMPUTE_TYPES_7D9FB68: tuple[tuple[str, str], ...] = (
    ("c_f32_r", "f32_r"), ("c_xf32_r", "xf32_r"), ("c_f64_r", "f64_r"), ("c_i32_r", "i32_r"),
    ("c_f32_fast_f16_r", "f32_f16_r"), ("c_f32_fast_bf16_r", "f32_bf16_r"),
)  # fmt: skip
"""``--compute_type`` of hipblaslt-bench @7d9fb68 (string_to_hipblas_computetype: f32_r/s, xf32_r/x,
f64_r/d, i32_r/i, f32_f16_r, f32_bf16_r; no f16 compute): the bench stand-in's ``CTYPES``. The
2026 bench reads the same spellings (and ``c``/``f32_c``, ``z``/``f64_c`` for complex;
hipblaslt-2026-interfaces.md, S15): the fast types keep ``f32_f16_r``/``f32_bf16_r``."""
_BENCH_COMPUTE_TYPES_DEVELOP = _BENCH_COMPUTE_TYPES_7D9FB68


class ProfileError(TensilekitError):
    """An unknown tool profile name."""

    exit_code = 2


@dataclasses.dataclass(frozen=True)
class ToolProfile:
    """What one AMD release's tools accept (see the module docstring)."""

    name: str
    description: str
    dialect: Dialect
    tensile_version: str
    """The release's ``Tensile.__version__`` (what ``versionIsCompatible`` compares against)."""
    minimum_required_version: str
    archs: tuple[str, ...]
    gemm_types: frozenset[GemmTypeLetters]
    letters: frozenset[str]
    """Type letters its ``DataType`` table knows."""
    scale_mode: Literal["letters", "ints"] = "ints"
    """``--scaleA`` values: ``s``/``v`` (7d9fb68) or integers (newer)."""
    extra_bench_flags: frozenset[str] = frozenset()
    fnuz_type_names: bool = True
    """hipblaslt-bench reads ``f8_fnuz_r``/``bf8_fnuz_r`` (False: only ``f8_r``/``bf8_r``)."""
    create_library_flavor: Literal["hipblaslt-2024", "rocm-libraries"] = "hipblaslt-2024"
    driver_flags: frozenset[str] = frozenset()
    """Optional driver flags it defines (``--use-cache``, ``--logic-format``: tensilelite only)."""
    bench_data_types: frozenset[str] = frozenset()
    """The ``--a_type``/``--b_type``/``--c_type``/``--d_type`` names its hipblaslt-bench reads
    (empty: not restricted, as far as tensilekit knows)."""
    bench_compute_types: tuple[tuple[str, str], ...] = ()
    """``(compute type in the logs' c_* form, --compute_type spelling)`` its hipblaslt-bench reads
    (empty: :func:`~tensilekit.workload.problem.compute_type_for_bench`'s, unrestricted)."""
    input_type_keys: bool = True
    """Its configs' ProblemType reads ``DataTypeA``/``DataTypeB`` (tensilelite
    SolutionStructs.py:116-120 @7d9fb68); ROCm/Tensile's does not (SolutionStructs.py @09ec347)."""
    driver_builds_client: bool = True
    """The Tensile driver builds its benchmark client itself (CMake into ``ClientBuildPath``,
    ``--client-build-path``) unless given ``--prebuilt-client``: tensilelite 4.x
    (ClientExecutable.py:57-90 @7d9fb68). rocm-libraries' driver never builds it: no
    ``--client-build-path`` (argparse exit 2), ``--prebuilt-client`` defaults to the separately
    built ``<tensilelite>/build_tmp/tensilelite/client/tensilelite-client`` (Tensile.py @00cf9f2a)."""
    driver_client_lock: bool = False
    """``--client-lock`` works in a Tensile venv made from the release's ``requirements.txt``.
    It imports ``filelock`` (``ClientExecutionLock``, Common.py:1837-1842 @7d9fb68), which
    tensilelite 4.x's requirements.txt does not list: a driver run with ``--client-lock`` then
    fails with ``ModuleNotFoundError`` once its client is to run. rocm-libraries lists it
    (tensilelite/requirements.txt @5f6fab3f). False: tensilekit locks the GPU itself, for the
    whole driver run (:class:`~tensilekit.search.driver.SharedClient`)."""

    # ------------------------------------------------------------------ configs

    def config_letters(self, letters: str, arch: str) -> str | None:
        """The letter this release uses for a tensilekit type letter on ``arch`` (None: none).

        ``F8N``/``B8N`` (FNUZ fp8) are ``F8``/``B8`` to a release without FNUZ letters on an
        architecture whose fp8 is FNUZ (gfx942: the same bits); elsewhere they cannot be written.
        """
        if letters in self.letters:
            return letters
        plain = {value: key for key, value in _FNUZ.items()}.get(letters)
        if plain is not None and arch in _FNUZ_ARCHS and plain in self.letters:
            return plain
        return None

    def config_type_issue(
        self, letters: tuple[str, str, str], arch: str, inputs: tuple[str, str] | None = None
    ) -> str | None:
        """Why this release's driver cannot benchmark a GEMM type (None: it can).

        ``letters`` is ``(DataType, DestDataType, ComputeDataType)`` in tensilekit's letters,
        ``inputs`` ``(DataTypeA, DataTypeB)`` when A or B differs from ``DataType`` (f8 x f16:
        ``DataType`` H, ``inputs`` (F8, H)).
        """
        if arch not in self.archs:
            return f"{self.description} does not know {arch}"
        if inputs is not None and not self.input_type_keys:
            return f"{self.description} has no DataTypeA/DataTypeB for A and B of different types ({''.join(inputs)})"
        every = (*letters, *(inputs or ()))
        mapped = [self.config_letters(letter, arch) for letter in every]
        missing = [letter for letter, found in zip(every, mapped, strict=True) if found is None]
        if missing:
            return f"{self.description} has no data type {', '.join(missing)}"
        triple = (str(mapped[0]), str(mapped[1]), str(mapped[2]))
        if triple not in self.gemm_types:
            return f"{self.description} does not support the typed GEMM (Ti, To, Tc) = {triple} (validGEMMTypes)"
        return None

    # ------------------------------------------------------------------ hipblaslt-bench

    def has_bench_flag(self, flag: str) -> bool:
        """Whether hipblaslt-bench of this release defines ``flag`` (among the version-dependent ones)."""
        return flag not in _BENCH_FLAGS_DEVELOP or flag in self.extra_bench_flags

    def bench_type_name(self, name: str) -> str:
        """The type name this release's hipblaslt-bench reads for ``name`` (``f8_fnuz_r`` -> ``f8_r``)."""
        if not self.fnuz_type_names:
            return _FNUZ_BENCH_TYPES.get(name, name)
        return name

    def bench_compute_type(self, compute_type: str) -> str | None:
        """The ``--compute_type`` value this release's hipblaslt-bench reads for a compute type (None:
        it has none, e.g. ``c_f16_r`` before the 2026 bench)."""
        if not self.bench_compute_types:
            from tensilekit.workload.problem import compute_type_for_bench

            return compute_type_for_bench(compute_type)
        return dict(self.bench_compute_types).get(compute_type)

    def scale_value(self, mode: int) -> str | None:
        """``--scaleA``'s value for a scale mode (0 none, 1 scalar, 2 vector, 3.. MX); None when the
        release cannot express it (7d9fb68 takes only ``s`` and ``v``)."""
        if self.scale_mode == "ints":
            return str(mode)
        return {1: "s", 2: "v"}.get(mode)


def _profiles() -> dict[str, ToolProfile]:
    letters_7d9fb68 = frozenset(
        {"S", "D", "C", "Z", "H", "4xi8", "I", "B", "I8", "F8", "B8", "F8B8", "B8F8", "X"}
    )  # TensileInstructions/DataType.py @7d9fb68
    lite = ToolProfile(
        name="hipblaslt-7d9fb68", description="hipBLASLt 7d9fb68 (tensilelite 4.33.0, ROCm 6.3)",
        dialect="tensilelite", tensile_version="4.33.0", minimum_required_version="4.33.0",
        archs=("gfx90a", "gfx942"), gemm_types=_TENSILELITE_7D9FB68_GEMM_TYPES, letters=letters_7d9fb68,
        scale_mode="letters", extra_bench_flags=_BENCH_FLAGS_7D9FB68, fnuz_type_names=False,
        create_library_flavor="hipblaslt-2024", driver_flags=frozenset({"--use-cache", "--logic-format"}),
        bench_data_types=_BENCH_DATA_TYPES_7D9FB68, bench_compute_types=_BENCH_COMPUTE_TYPES_7D9FB68,
    )  # fmt: skip
    develop = ToolProfile(
        name="hipblaslt-develop",
        description="hipBLASLt develop (rocm-libraries tensilelite, as read from source)",
        # GEKO writes MinimumRequiredVersion '5.0.0' (config_sections_generator.py @06204e51), and so
        # do AMD's own develop test configs (projects/hipblaslt/tensilelite/Tensile/Tests/common/gemm/
        # fp16_tn.yaml @ 5dc77c3d0a11); versionIsCompatible needs the same major, so 4.x is refused.
        dialect="tensilelite", tensile_version="5.0.0", minimum_required_version="5.0.0",
        archs=("gfx90a", "gfx942", "gfx950"), gemm_types=_DEVELOP_GEMM_TYPES,
        letters=letters_7d9fb68 | frozenset(_FNUZ.values()), scale_mode="ints",
        extra_bench_flags=_BENCH_FLAGS_DEVELOP, fnuz_type_names=True, create_library_flavor="rocm-libraries",
        driver_flags=frozenset({"--use-cache", "--logic-format"}), bench_compute_types=_BENCH_COMPUTE_TYPES_DEVELOP,
        driver_builds_client=False, driver_client_lock=True,
    )  # fmt: skip
    tensile_letters = frozenset({"S", "D", "C", "Z", "H", "4xi8", "I", "B", "I8", "F8", "B8", "F8B8", "B8F8", "X"})
    tensile_42 = ToolProfile(
        name="tensile-09ec347", description="ROCm/Tensile 09ec347 (4.42.0, rocBLAS)", dialect="tensile",
        tensile_version="4.42.0", minimum_required_version="4.33.0", archs=("gfx90a", "gfx942"),
        gemm_types=_TENSILE_GEMM_TYPES, letters=tensile_letters, input_type_keys=False,
    )  # fmt: skip
    tensile_44 = dataclasses.replace(
        tensile_42, name="tensile-a164ed70", description="ROCm/Tensile a164ed70 (4.44.0, ROCm 6.5)",
        tensile_version="4.44.0",
    )  # fmt: skip
    return {profile.name: profile for profile in (lite, develop, tensile_42, tensile_44)}


PROFILES: Mapping[str, ToolProfile] = MappingProxyType(_profiles())
"""Every supported AMD release, by name."""
DEFAULT_PROFILE = "hipblaslt-7d9fb68"
"""The hipBLASLt profile used when the installed version cannot be detected."""
DEFAULT_TENSILE_PROFILE = "tensile-a164ed70"
"""The ROCm/Tensile profile of ``--config-dialect tensile`` when none is named."""


def tool_profile(name: str) -> ToolProfile:
    """The profile called ``name``; :class:`ProfileError` (a usage error) for an unknown one."""
    profile = PROFILES.get(name)
    if profile is None:
        raise ProfileError(f"unknown tool profile {name!r} (profiles: {', '.join(sorted(PROFILES))})")
    return profile


_HIPBLASLT_VERSION = re.compile(r"hipBLASLt version:\s*(\d+)")
_GIT_VERSION = re.compile(r"hipBLASLt git version:\s*(\S+)")
_TENSILE_VERSION = re.compile(r"\bTensile v?(\d+)\.(\d+)\.(\d+)")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")

_CREATE_LIBRARY_2024_OPTIONS = frozenset({"--merge-files", "--separate-architectures", "--lazy-library-loading"})
"""Options only tensilelite 4.x's TensileCreateLibrary has (TensileCreateLibrary.py:1259,1288,1290
@7d9fb68): lazy loading is opt-in there and needs the other two (:1393-1394)."""
_CREATE_LIBRARY_ROCM_LIBRARIES_OPTION = "--no-lazy-library-loading"
"""rocm-libraries' TensileCreateLibrary builds lazily unless told otherwise
(``TensileCreateLibrary/ParseArguments.py`` @2680ace6) and has none of the 2024 options."""


def bench_version(text: str) -> str:
    """What a ``hipblaslt-bench`` banner says about hipBLASLt, for messages (``hipBLASLt 0.11.0 (git 7d9fb683)``).

    ``hipBLASLt version: <N>`` is major * 100000 + minor * 100 + patch (hipblasLtGetVersion:
    7d9fb683 prints 1100, 0.11.0, from ``VERSION_STRING`` in its CMakeLists). It names the
    hipBLASLt release, not the tensilelite inside it: 0.11 to 0.14 all ship tensilelite 4.33.0,
    so the profile is never chosen from it (:func:`profile_for_tools`).
    """
    git = _GIT_VERSION.search(text)
    sha = git.group(1) if git else "unknown"
    found = _HIPBLASLT_VERSION.search(text)
    if found is None:
        return f"hipBLASLt of unknown version (git {sha})"
    number = int(found.group(1))
    return f"hipBLASLt {number // 100000}.{number // 100 % 1000}.{number % 100} (git {sha})"


def create_library_flavor_from_help(text: str) -> Literal["hipblaslt-2024", "rocm-libraries"] | None:
    """Which TensileCreateLibrary command line ``TensileCreateLibrary --help`` shows (None: neither)."""
    options = set(_OPTION.findall(text))
    if options & _CREATE_LIBRARY_2024_OPTIONS:
        return "hipblaslt-2024"
    if _CREATE_LIBRARY_ROCM_LIBRARIES_OPTION in options:
        return "rocm-libraries"
    return None


def tensile_version_from_output(text: str) -> tuple[int, int, int] | None:
    """The version the Tensile driver prints: ``Tensile 4.33.0`` for ``--version`` and the splash
    ``#  Tensile v4.33.0`` (Tensile.py:196,206 @7d9fb68; the same two lines in rocm-libraries)."""
    found = _TENSILE_VERSION.search(text)
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def profile_for_tools(
    create_library_help: str, driver_version: tuple[int, int, int] | None = None
) -> tuple[ToolProfile | None, str]:
    """The hipBLASLt profile of the installed tools, and why; None (with the reason) when they do
    not say, or contradict each other.

    Decided from what the tools are, not from hipBLASLt's version number: TensileCreateLibrary's
    options tell the tensilelite generation (:func:`create_library_flavor_from_help`), and the
    tensilelite driver's ``--version`` (when known) its exact version, whose major is what
    ``versionIsCompatible`` compares (Common.py:1821-1827 @7d9fb68).
    """
    flavor = create_library_flavor_from_help(create_library_help)
    lite = [profile for profile in PROFILES.values() if profile.dialect == "tensilelite"]
    by_flavor = next((profile for profile in lite if profile.create_library_flavor == flavor), None)
    if driver_version is not None:
        text = ".".join(map(str, driver_version))
        by_version = next((p for p in lite if int(p.tensile_version.split(".")[0]) == driver_version[0]), None)
        if by_version is None:
            return None, f"the Tensile driver is tensilelite {text}, a major version no profile knows"
        if by_flavor is not None and by_flavor is not by_version:
            return None, (
                f"the Tensile driver is tensilelite {text} but TensileCreateLibrary has the {flavor} command line "
                f"({by_flavor.description}): the tools come from different releases"
            )
        return by_version, f"the Tensile driver is tensilelite {text}"
    if by_flavor is None:
        return None, "TensileCreateLibrary --help shows neither --lazy-library-loading nor --no-lazy-library-loading"
    if flavor == "hipblaslt-2024":
        return by_flavor, "TensileCreateLibrary has --lazy-library-loading/--merge-files: tensilelite 4.x"
    return by_flavor, "TensileCreateLibrary has --no-lazy-library-loading: rocm-libraries tensilelite"


__all__ = [
    "DEFAULT_PROFILE",
    "DEFAULT_TENSILE_PROFILE",
    "PROFILES",
    "ProfileError",
    "ToolProfile",
    "bench_version",
    "create_library_flavor_from_help",
    "profile_for_tools",
    "tensile_version_from_output",
    "tool_profile",
]
