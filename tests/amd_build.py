"""AMD's tensilelite build (``../shared/amd/build-master``) for differential tests, and the hipBLASLt logic sets.

``build-master`` runs hipBLASLt 7d9fb683's own TensileCreateLibrary library code (see
``../shared/amd/README.md``); each call costs ~3 s of AMD imports, so tests batch what they can.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: The five ``masters-hipblaslt`` masters: arch and logic files (under logic/hipblaslt) in the order
#: AMD merged them (``select-hipblaslt/README.md``; the equality set is in its README order).
_G = "aquavanjaram/gfx942"
HIPBLASLT_MASTERS: dict[str, tuple[str, list[str]]] = {
    "hipblaslt_aldebaran_all": ("gfx90a", ["aldebaran/*/*/*.yaml"]),
    "hipblaslt_gfx942_grid": ("gfx942", [f"{_G}/GridBased/*.yaml"]),
    "hipblaslt_gfx942_equality": (
        "gfx942",
        [
            f"{_G}/Equality/aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
            f"{_G}/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
            f"{_G}/Equality/aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml",
        ],
    ),
    "hipblaslt_gfx942_freesize": ("gfx942", [f"{_G}/FreeSize/*HSS_BH_Bias_HAS_SAV_Freesize*.yaml"]),
    "hipblaslt_navi31_all": ("gfx1100", ["navi31/*/*.yaml"]),
}


def logic_files(corpus: Path, patterns: list[str]) -> list[Path]:
    """Each pattern's matches sorted (AMD's order), patterns in the given order."""
    root = corpus / "logic" / "hipblaslt"
    out: list[Path] = []
    for pattern in patterns:
        matches = sorted(root.glob(pattern))
        assert matches, f"corpus is missing logic/hipblaslt/{pattern}"
        out += matches
    return out


def has_custom_kernel(path: Path) -> bool:
    """Does the logic file name a hipBLASLt custom kernel (whose config AMD's local tree lacks)?"""
    return any(
        line.strip().startswith("CustomKernelName:") and line.split(":", 1)[1].strip() not in ("", "''", '""')
        for line in path.read_text().splitlines()
    )


def amd_build_master(
    amd: Path, arch: str, files: list[Path], out: Path, *, lazy: bool = False, tool: str = "build-master"
) -> Path:
    """Run AMD's ``build-master`` (one call; ``tool="build-master-0.12.1"``: hipBLASLt 0.12.1's);
    returns its output directory."""
    command = [str(amd / tool), "--arch", arch, "--out", str(out)]
    if lazy:
        command.append("--lazy")
    result = subprocess.run(command + [str(f) for f in files], capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, f"AMD build-master failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    return out


#: Run by AMD's Python, not imported here (see its docstring).
LOAD_LAYOUT_DRIVER = Path(__file__).resolve().parent / "tensilelite_load_layout_driver.py"


def amd_load_layout(amd: Path, tree: str, files: list[Path], out: Path) -> list[Path]:
    """Copies of hand-made tensilelite logic files in ``out`` whose solutions store the load layout
    (``NumLoadsCoalesced*`` …) tensilelite's ``tree`` (``"tensilelite-0.12.1"`` …) derives for them, as
    tuning would have stored it (``tensilelite_load_layout_driver.py``; one AMD process). A file on
    which tensilelite's ``Solution`` fails has no copy but ``out/<name>.error`` (the traceback)."""
    python = subprocess.run([str(amd / "setup-venv")], capture_output=True, text=True, check=True, timeout=1800)
    command = [python.stdout.strip(), str(LOAD_LAYOUT_DRIVER), str(amd), tree, str(out), *map(str, files)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, f"AMD's Solution derivation failed:\n{result.stderr[-4000:]}"
    return [out / path.name for path in files]


def build_both_formats(args: list[str], out: Path, *, name: str | None = None) -> Path:
    """tensilekit's ``build-master ARGS`` as YAML and as msgpack, each into its own folder (a build
    owns its folder's library files, so the second would remove the first's), gathered in
    ``out`` for comparison with AMD's build-master, which writes both formats side by side.
    ``name``: the master's file stem for a single-file build (``-o out/NAME.yaml``); None: a folder."""
    import shutil

    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    out.mkdir(parents=True, exist_ok=True)
    for fmt, suffix in (("yaml", ".yaml"), ("msgpack", ".dat")):
        folder = out.parent / f"{out.name}-{fmt}"
        target = str(folder / f"{name}{suffix}") if name else f"{folder}/"
        folder.mkdir(parents=True, exist_ok=True)
        result = CliRunner().invoke(cli, ["build-master", "--format", fmt, *args, "-o", target])
        assert result.exit_code == 0, result.output
        for path in written(folder):
            shutil.copyfile(path, out / path.name)
    return out


def written(folder: Path) -> list[Path]:
    """The files a tensilekit command wrote into ``folder``, as AMD's tools would list them: tensilekit's
    own hidden record of what it wrote there (``io.atomic.MANIFEST``, which lets the next run remove
    only its own stale files) is no output file and AMD writes none."""
    from tensilekit.io.atomic import MANIFEST

    return sorted(path for path in folder.iterdir() if path.name != MANIFEST)


# --------------------------------------------------------------------------------------------
# Tensile a164ed70 (rocBLAS): TensileCreateLibrary's library step, many builds in one AMD process

#: Run by AMD's Python, not imported here (see its docstring).
TENSILE_DRIVER = Path(__file__).resolve().parent / "tensile_build_driver.py"


def tensile_build_masters(amd: Path, jobs: list[dict[str, object]], scratch: Path) -> list[dict[str, object]]:
    """Build each job ``{"logic": [paths in merge order], "out": folder, "lazy": bool}`` with Tensile
    a164ed70's own library-step functions (``tensile_build_driver.py``), all in one process (AMD's
    imports cost ~3 s a start). Returns per job ``{"out", "written": [file stems]}`` or ``{"out", "error"}``."""
    import json

    python = subprocess.run([str(amd / "setup-venv")], capture_output=True, text=True, check=True, timeout=1800)
    scratch.mkdir(parents=True, exist_ok=True)
    jobs_file, results_file = scratch / "jobs.json", scratch / "results.json"
    jobs_file.write_text(json.dumps(jobs))
    command = [python.stdout.strip(), str(TENSILE_DRIVER), str(amd), str(jobs_file), str(results_file)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0 and results_file.is_file(), f"AMD's Tensile build failed:\n{result.stderr[-4000:]}"
    results: list[dict[str, object]] = json.loads(results_file.read_text())
    return results
