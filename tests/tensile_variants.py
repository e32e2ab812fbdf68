"""Tensile (rocBLAS) logic files for the differential build tests: the corpus pool and problem-type variants.

The pool is every Tensile-dialect logic file of ``masters-sources`` and ``logic/{rocblas,tensile}``
that AMD's Tensile a164ed70 builds here and that is small enough for CI, minus the kinds listed in
:data:`LEFT_OUT`. Variants turn a list-layout file into one that exercises a naming rule the corpus
has few files for: XF32 (``F32XdlMathOp``), stochastic rounding and ``Fp16AltImplRound`` without
``Fp16AltImpl``. They are written as new YAML files (both builds read the same bytes).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

#: Larger files make each build slow; the naming and tree rules do not depend on size.
MAX_BYTES = 120_000

#: architecture -> why files for it are not in the pool
LEFT_OUT: dict[str, str] = {
    "fallback": "Tensile's addFallback copies a fallback library into every architecture's master; "
    "tensilekit writes TensileLibrary_fallback (a known difference)",
    "gfx000": "AMD writes no master for an architecture it does not support; tensilekit writes one "
    "(a known difference)",
    "gfx940": "not in Tensile a164ed70's ROCm 6.4 capability cache: AMD's build fails here (the variant "
    "'gfx942' retargets such files)",
    "gfx941": "as gfx940",
}
#: tensilekit does not model the ConvolutionForward problem type's solution parameters (a known difference).
CONVOLUTION = re.compile(r"^\s*OperationType: Convolution", re.M)

_TOP_ITEM = re.compile(r"^- (.*)$", re.M)
_ARCH_IN_MAP = re.compile(r"Architecture: *(\w+)")
_ARCH_KEY = re.compile(r"^ArchitectureName: *(\w+)", re.M)


def architecture_of(text: str) -> str | None:
    """The architecture field of a logic file's text (list item 2, or ``ArchitectureName``)."""
    key = _ARCH_KEY.search(text)
    if key:
        return key.group(1)
    items = _TOP_ITEM.findall(text[:20_000])
    if len(items) < 3:
        return None
    item = items[2].strip()
    inline = _ARCH_IN_MAP.search(item)
    return inline.group(1) if inline else item


def tensile_pool(corpus: Path) -> list[Path]:
    """Pool files, sorted by their path below the corpus (never by absolute path)."""
    roots = [corpus / "masters-sources", corpus / "logic" / "rocblas", corpus / "logic" / "tensile"]
    found = []
    for root in roots:
        for path in root.rglob("*.yaml"):
            if path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text()
            arch = architecture_of(text)
            if arch is None or arch in LEFT_OUT and arch not in ("gfx940", "gfx941") or CONVOLUTION.search(text):
                continue
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(corpus).as_posix())


# --------------------------------------------------------------------------------------------
# variants of list-layout logic files


def _problem_types(data: list[Any]) -> list[dict[str, Any]]:
    """The file's ProblemType and every solution's own copy (``derive`` copies are left alone)."""
    return [data[4], *(s["ProblemType"] for s in data[5] if isinstance(s.get("ProblemType"), dict))]


def _data_type(value: Any) -> str:
    names = {0: "s", 4: "h", 7: "b", 10: "f8", 11: "b8", 12: "f8b8", 13: "b8f8"}
    return names.get(value, str(value).lower()) if not isinstance(value, str) else value.lower()


def retarget_gfx942(data: list[Any]) -> bool:
    """gfx940/gfx941 → gfx942 (same MFMA kinds; gfx940/941 are missing from AMD's capability cache here)."""
    arch = data[2]["Architecture"] if isinstance(data[2], dict) else data[2]
    if arch not in ("gfx940", "gfx941"):
        return False
    if isinstance(data[2], dict):
        data[2] = {**data[2], "Architecture": "gfx942"}
    else:
        data[2] = "gfx942"
    return True


def toggle_stochastic_rounding(data: list[Any]) -> bool:
    """F8/B8 types: stochastic rounding on ↔ off (the ``_SR`` twin of a plain type, or the reverse)."""
    if not _data_type(data[4]["DataType"]).startswith(("f8", "b8")):  # Tensile: "requires F8 types"
        return False
    on = not data[4].get("StochasticRounding", False)
    for pt in _problem_types(data):
        pt["StochasticRounding"] = on
    return True


def drop_xf32(data: list[Any]) -> bool:
    """An XF32 file's plain single twin: ``F32XdlMathOp`` gone and each xf32 MFMA (32x32x4, 16x16x8)
    turned into its f32 one (32x32x2, 16x16x4); its placeholder is the XF32 one's."""
    if data[4].get("F32XdlMathOp", 0) in (0, "s", "S"):
        return False
    for pt in _problem_types(data):
        pt.pop("F32XdlMathOp", None)
    for solution in data[5]:
        solution.pop("EnableF32XdlMathOp", None)
        instruction = solution.get("MatrixInstruction")
        if instruction and len(instruction) >= 4:
            solution["MatrixInstruction"] = [*instruction[:2], instruction[2] // 2, *instruction[3:]]
    return True


def fp16_round_only(data: list[Any]) -> bool:
    """Half HPA types: ``Fp16AltImplRound`` without ``Fp16AltImpl`` (names ``…_BH_``), with the row marker."""
    pt = data[4]
    if _data_type(pt["DataType"]) != "h" or not pt.get("HighPrecisionAccumulate"):
        return False
    for each in _problem_types(data):
        each["Fp16AltImpl"], each["Fp16AltImplRound"] = False, True
    while len(data) < 14:
        data.append(None)
    data[11], data[13] = None, "Fp16AltImplRound"
    return True


#: name -> transform (returns False when it does not apply to the file)
VARIANTS: dict[str, Callable[[list[Any]], bool]] = {
    "sr": toggle_stochastic_rounding,
    "no-xf32": drop_xf32,
    "fp16-round-only": fp16_round_only,
}


def _drop_from_file_problem_type(key: str) -> Callable[[list[Any]], bool]:
    def drop(data: list[Any]) -> bool:
        return data[4].pop(key, None) is not None  # the file's ProblemType only, as FromOriginalState reads it

    drop.__doc__ = f"The file's ProblemType without {key} (its solutions' copies keep it)."
    return drop


#: transforms the fixed cases name but random draws never take (``VARIANTS`` is what they draw from)
DROPS: dict[str, Callable[[list[Any]], bool]] = {
    f"no-{key}": _drop_from_file_problem_type(key) for key in ("TotalIndices", "IndicesSummation", "ComplexConjugateB")
}


def load(path: Path) -> Any:
    with path.open() as fh:
        return yaml.load(fh, Loader=yaml.CSafeLoader)


def write_variant(data: Any, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w") as fh:
        yaml.dump(data, fh, Dumper=yaml.CSafeDumper, default_flow_style=None, sort_keys=False)
    return target


def variant_file(source: Path, names: list[str], folder: Path, stem: str) -> Path | None:
    """``source`` with the named transforms applied (and gfx940/941 retargeted), written under
    ``folder``; None when a named transform does not apply. With nothing to change, ``source``."""
    data = load(source)
    if not isinstance(data, list):
        return source if not names else None
    changed = retarget_gfx942(data)
    for name in names:
        if not {**VARIANTS, **DROPS}[name](data):
            return None
        changed = True
    return write_variant(copy.deepcopy(data), folder / f"{stem}.yaml") if changed else source
