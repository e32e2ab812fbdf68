"""hipBLASLt custom-kernel configs (io.custom_kernels): newer tensilelite's folder layout and its
letter type codes (issue 25)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tensilekit.errors import InputNotFound
from tensilekit.io.custom_kernels import custom_kernel_path, custom_kernel_reader

DTVA = "Custom_Cijk_Alik_Bljk_BBS_BH_Bias_AS_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_K1_MIWT4_16_DTVA"

CONFIG = """\
.amdgpu_metadata
---
custom.config:
  InternalSupportParams:
    KernArgsVersion: 2
  ProblemType:
      OperationType: GEMM
      DataType: b
      DestDataType: b
      ComputeDataType: s
  DepthU: 64
amdhsa.version:
  - 1
  - 1
...
.end_amdgpu_metadata
s_endpgm
"""


def test_a_kernel_in_a_sub_folder_is_found(tmp_path: Path) -> None:
    """Newer tensilelite's getCustomKernelFilepath walks sub-folders (CustomKernels.py@0132ec78);
    7d9fb68 looked only at <directory>/<name>.s, and so did tensilekit."""
    nested = tmp_path / "gfx950" / "bf16"
    nested.mkdir(parents=True)
    (nested / "Custom_K.s").write_text(CONFIG)
    config = custom_kernel_reader(tmp_path)("Custom_K")
    assert config["ProblemType"]["DataType"] == "b"
    assert custom_kernel_path(tmp_path, "Custom_K") == nested / "Custom_K.s"


def test_the_flat_file_wins_over_a_nested_one(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Custom_K.s").write_text(CONFIG.replace("DepthU: 64", "DepthU: 32"))
    (tmp_path / "Custom_K.s").write_text(CONFIG)
    assert custom_kernel_reader(tmp_path)("Custom_K")["DepthU"] == 64


def test_a_missing_kernel_names_the_flat_path(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound) as raised:
        custom_kernel_reader(tmp_path)("Custom_Nowhere")
    assert str(tmp_path / "Custom_Nowhere.s") in str(raised.value)


def test_amds_letter_typed_kernel_derives_from_a_sub_folder(amd: Path, tmp_path: Path) -> None:
    """AMD's own `.s` (hipBLASLt 7d9fb683) spells its types `DataType: b`; laid out as newer
    hipBLASLt does (a sub-folder), it is found and its ProblemType read as tensilelite's
    DataType(str) reads it: BFloat16 in, BFloat16 out, Float compute."""
    from tensilekit.model.derive_tensilelite import solution_state

    nested = tmp_path / "gfx942"
    nested.mkdir()
    shutil.copy(amd / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels" / f"{DTVA}.s", nested)
    reader = custom_kernel_reader(tmp_path)
    config = reader(DTVA)
    assert config["ProblemType"]["DataType"] == "b"  # letters: what this test is about
    state = solution_state(
        {"ProblemType": dict(config["ProblemType"]), "CustomKernelName": DTVA},
        isa=(9, 4, 2),
        cu_count=304,
        custom_kernel_config=reader,
    )
    assert state["ProblemType"]["DataType"].enum == "BFloat16"
    assert state["ProblemType"]["ComputeDataType"].enum == "Float"
