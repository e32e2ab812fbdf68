"""Readers fold repeated lines as they read: memory grows with the distinct GEMMs, not with the
lines (issue 31 item 9; ``bench/log_memory.py`` measures the commands' peak RSS at 1 M lines).

Each reader reads a file of L lines repeating the same few GEMMs, at L and 10 L: the tracemalloc
peak of the larger read stays within twice the smaller one's (it was ~10x when every line was kept).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from tensilekit.workload import load_workloads

BENCH = (
    "hipblaslt-bench --api_method c -m {m} -n 8 -k 4096 --lda 4096 --ldb 4096 --ldc {m} --ldd {m}  --stride_a 0 "
    "--stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA T --transB N "
    "--batch_count 1  --a_type bf16_r --b_type bf16_r --c_type bf16_r --d_type bf16_r --scale_type f32_r "
    "--bias_type f32_r   --compute_type f32_r\n"
)
SHAPES = (1024, 4096, 6144)
FORMATS: dict[str, tuple[str, Callable[[int], str]]] = {
    "hipblaslt-log": ("", lambda number: BENCH.format(m=SHAPES[number % 3])),
    "tunableop": ("", lambda number: f"GemmTunableOp_BFloat16_TN,tn_{SHAPES[number % 3]}_8_4096,Default,0.5\n"),
    "aiter": (
        "gfx,cu_num,M,N,K,dtype,libtype,solidx,us\n",
        lambda number: f"gfx942,{(80, 304)[number % 2]},8,{SHAPES[number % 3]},4096,torch.bfloat16,asm,1,2.5\n",
    ),
}
LINES = 2_000


def _peak(path: Path) -> int:
    tracemalloc.start()
    try:
        workload, _ = load_workloads([path])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert workload.records_in == int(path.stem)


@pytest.mark.parametrize("name", FORMATS)
def test_reading_ten_times_the_lines_takes_no_more_memory(name: str, tmp_path: Path) -> None:
    header, line = FORMATS[name]
    peaks = []
    for lines in (LINES, 10 * LINES):
        path = tmp_path / f"{lines}"
        path.write_text(header + "".join(line(number) for number in range(lines)))
        peaks.append(_peak(path))
    small, large = peaks
    assert large < 2 * small, f"{name}: peak {large} bytes at {10 * LINES} lines, {small} at {LINES}"
