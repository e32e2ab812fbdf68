"""Checks shared by the commands' options: ``--arch``, ``--type`` and output paths (usage errors, exit 2).

Nothing here imports the core: option checks run before a library is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

# gfx processors Tensile / tensilelite name in their architecture maps (Tensile ``Common.py``
# ``architectureMap``, hipBLASLt ``tensilelite/Tensile/Common/Architectures.py``).
KNOWN_ARCHS = (
    "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1031", "gfx1032", "gfx1034", "gfx1035",
    "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
)  # fmt: skip

# product names people type instead of the processor
_PRODUCT_ARCHS = {
    "mi50": "gfx906", "mi60": "gfx906", "mi100": "gfx908", "mi200": "gfx90a", "mi210": "gfx90a",
    "mi250": "gfx90a", "mi250x": "gfx90a", "mi300": "gfx942", "mi300x": "gfx942", "mi300a": "gfx942",
    "mi325x": "gfx942", "mi350": "gfx950", "mi350x": "gfx950", "mi355x": "gfx950",
}  # fmt: skip


def check_arch(arch: str | None, library_archs: Iterable[str] = ()) -> str | None:
    """``arch`` if tensilekit or the library knows it (``gfx90a:xnack-`` feature suffixes allowed).

    Raises:
        click.BadParameter: an unknown processor (exit 2), listing the known ones.
    """
    if arch is None:
        return None
    known = tuple(dict.fromkeys((*library_archs, *KNOWN_ARCHS)))
    if arch.split(":")[0] in known:
        return arch
    hint = _PRODUCT_ARCHS.get(arch.lower().replace("instinct", "").replace("-", "").strip())
    suggestion = f" ({arch} is {hint})" if hint else ""
    raise click.BadParameter(f"unknown processor {arch!r}{suggestion}; known: {', '.join(known)}", param_hint="--arch")


TYPE_HELP = (
    "Types: one name for all (bf16, fp16, fp8, f32, tf32/xf32, int8, a hipBLASLt name such as bf16_r or "
    "HIP_R_16BF, a Tensile name such as Half), a Tensile code string in either case (S, D, H, B, HHS, hhs, "
    "HHS_BH, BBS, I8II, 4xi8II, B8B8S), or a comma list a,b,c,d,compute."
)


def check_type_spec(text: str) -> str:
    """``--type`` checked now (the core's parser reads every spelling: one vocabulary).

    Raises:
        click.BadParameter: an unreadable type (exit 2), listing the accepted spellings.
    """
    from tensilekit.errors import SelectionError
    from tensilekit.selection.problem import SHORT_TYPE_NAMES, parse_type_spec

    spec = text.strip()
    try:
        parse_type_spec(spec)
    except SelectionError as error:
        shorts = ", ".join(sorted(name for name in SHORT_TYPE_NAMES if not name.startswith("hip_")))
        raise click.BadParameter(
            f"{error}. Accepted: short names ({shorts}); hipBLASLt names (f16_r, bf16_r, f32_r, xf32_r, f8_r, "
            "bf8_r, i8_r, i32_r, f64_r, f32_c, f64_c, HIP_R_16BF …); Tensile names (Float, Half, BFloat16, ...) and codes "
            "(S, D, H, B, X, I, I8, 4xi8, F8, B8, HHS, BBS, I8II, B8B8S); or a comma list a,b,c,d,compute",
            param_hint="--type",
        ) from None
    return spec


def type_spec_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return None if value is None else check_type_spec(value)


def check_output_path(path: Path, *, suffixes: dict[str, str] | None = None, option: str = "-o") -> None:
    """An output path whose parent folder exists and, with ``suffixes``, whose suffix names a format.

    Raises:
        click.BadParameter: a missing parent folder or an unknown suffix (exit 2).
    """
    parent = path.parent
    if not parent.is_dir():
        raise click.BadParameter(f"{path}: folder {parent} does not exist", param_hint=option)
    if suffixes is not None:
        suffix = "".join(path.suffixes[-2:]).lower() if path.suffix.lower() == ".gz" else path.suffix.lower()
        if suffix not in suffixes:
            accepted = ", ".join(f"{key} ({value})" for key, value in suffixes.items())
            raise click.BadParameter(
                f"{path}: cannot tell the output format from {suffix or 'no suffix'!r}; use {accepted}",
                param_hint=option,
            )


class UserPath(click.Path):
    """``click.Path`` for every path a command takes: a leading ``~`` expanded as a shell would
    (also in ``--output=~/x``, where bash leaves it) and a name the system cannot hold refused
    with :class:`~tensilekit.errors.PathTooLong` (one rule: :mod:`tensilekit._arguments`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from tensilekit._arguments import check_path_length, expand_home

        if isinstance(value, str) and value != "-":
            value = expand_home(value)
            check_path_length(value)
        return super().convert(value, param, ctx)


_Command = TypeVar("_Command", bound=Callable[..., Any])


def subtree_options(command: _Command) -> _Command:
    """``--subtree LABEL`` and ``--asic-revision N``: which silicon-revision tree of an installed
    library folder the device loads (``InstalledLibrary.choose``); the command takes ``subtree``
    and ``asic_revision``."""
    command = click.option(
        "--asic-revision",
        type=click.IntRange(min=0),
        default=None,
        metavar="N",
        help="The device's ASIC revision (hipDeviceProp_t::asicRevision): an installed library folder "
        "gives the tree the runtime loads for it (0 on gfx1250: gfx1250v0/, no fallback).",
    )(command)
    command = click.option(
        "--subtree",
        default=None,
        metavar="LABEL",
        help="Installed library folder: load this subtree (e.g. gfx1250v0) for the architecture it serves "
        "instead of the device's default tree (overrides --asic-revision).",
    )(command)
    return command


def workspace_option(who: str) -> Callable[[_Command], _Command]:
    """``--workspace BYTES`` (the command takes ``workspace_size``; None: the runtime's default,
    as :func:`tensilekit.open_library` allows). ``who``: whose calls may use it, for the help."""
    option: Callable[[_Command], _Command] = click.option(
        "--workspace",
        "workspace_size",
        type=click.IntRange(min=0),
        default=None,
        help=f"Workspace bytes {who} may use (default: hipBLASLt 128 MiB, hipblaslt-bench's max_workspace_size; "
        "Tensile unlimited).",
    )
    return option


def full_names_option(command: _Command) -> _Command:
    """``--full-names``: kernel names whole on a terminal too (the short form is the default
    there, as git abbreviates hashes; a pipe and --json always get whole names)."""

    def remember(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        from tensilekit.cli.output import FULL_NAMES

        ctx.meta[FULL_NAMES] = value
        return value

    option: Callable[[_Command], _Command] = click.option(
        "--full-names",
        is_flag=True,
        expose_value=False,
        callback=remember,
        help="Show kernel names whole on a terminal (default there: the problem type and the MT, MI, GSU, WGM "
        "settings, '…' for the rest; pipes and --json always get whole names).",
    )
    return option(command)


# selection.hipblaslt_versions.HIPBLASLT_VERSIONS' names, spelled out: a command's --help imports no
# selection core (importing that module loads the whole tensilekit.selection package)
HIPBLASLT_VERSION_NAMES = ("7d9fb683", "0.12.1", "5.x")


def hipblaslt_version_option(command: _Command) -> _Command:
    """``--hipblaslt-version 7d9fb683|0.12.1|5.x``: the hipBLASLt runtime to answer as (the command
    takes ``hipblaslt_version``; None: what the library shows, as :func:`tensilekit.open_library`)."""
    return hipblaslt_version_choice(
        "Answer as this hipBLASLt runtime does (default: what the library shows: a master with 0.12.1's "
        "fields such as SwizzleTensorA is 0.12.1's, one with task predicates 5.x's, any other 7d9fb683's)."
    )(command)


def hipblaslt_version_choice(help_text: str) -> Callable[[_Command], _Command]:
    """``--hipblaslt-version 7d9fb683|0.12.1|5.x`` with the command's own help (the command takes
    ``hipblaslt_version``, None when not given)."""
    return click.option(
        "--hipblaslt-version",
        "hipblaslt_version",
        type=click.Choice(list(HIPBLASLT_VERSION_NAMES), case_sensitive=False),
        default=None,
        help=help_text,
    )


def solution_selection_method_option(command: _Command) -> _Command:
    """``--solution-selection-method N``: the command takes ``solution_selection_method`` and
    passes it on; None (not given) leaves it to the API, which reads
    ``$TENSILE_SOLUTION_SELECTION_METHOD`` as hipBLASLt does (:func:`tensilekit.api.solution_selection_method_of`)."""
    option: Callable[[_Command], _Command] = click.option(
        "--solution-selection-method",
        "solution_selection_method",
        type=click.IntRange(min=0),
        default=None,
        help="hipBLASLt's solution selection method: 0 default, 1 decision tree, 2 StreamK (0.12.1 takes "
        "ExperimentalStreamK rows only under 2; 7d9fb683 does not read it). Default: "
        "$TENSILE_SOLUTION_SELECTION_METHOD, as hipBLASLt reads it.",
    )
    return option(command)


__all__ = [
    "HIPBLASLT_VERSION_NAMES",
    "KNOWN_ARCHS",
    "TYPE_HELP",
    "UserPath",
    "check_arch",
    "check_output_path",
    "check_type_spec",
    "full_names_option",
    "hipblaslt_version_choice",
    "hipblaslt_version_option",
    "solution_selection_method_option",
    "subtree_options",
    "workspace_option",
    "type_spec_callback",
]
