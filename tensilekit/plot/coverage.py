"""Draw a workload's GEMMs on the selection map: where they fall, how they were served, how much they weigh.

The background is :func:`~tensilekit.plot.selection.draw_selection_map` (kernel per M x N cell
at one K); each GEMM of the slice is a circle coloured by its coverage class and sized by its
share of the workload (area proportional to weight), filled at the map's K, hollow at other K.
"""

from __future__ import annotations

import math
import os

from tensilekit.coverage.model import CoverageClass
from tensilekit.coverage.slice import MapSlice
from tensilekit.plot.selection import draw_selection_map, finish_png
from tensilekit.selection.grid import SelectionMap

CLASS_COLOURS = {
    CoverageClass.EXACT: "#1a9850",
    CoverageClass.NEAR: "#66bd63",
    CoverageClass.FAR: "#fdae61",
    CoverageClass.FALLBACK: "#d73027",
    CoverageClass.NONE: "#000000",
}
_BIGGEST = 900.0  # marker area (points²) of the heaviest GEMM


def render_coverage_map(smap: SelectionMap, cut: MapSlice, *, title: str | None = None, dpi: int = 120) -> bytes:
    """The map with the slice's GEMMs on it, as PNG bytes.

    Raises:
        MissingDependency: matplotlib is not installed.
    """
    heading = title or f"{cut.gemm_type} GEMMs on the kernel map at K={cut.k} (colour: coverage, size: share)"
    plt, figure, axes, handles, labels = draw_selection_map(smap, title=heading)
    heaviest = max((item.share for item in cut.gemms), default=0.0) or 1.0
    for member in CoverageClass:
        items = [item for item in cut.gemms if item.coverage_class is member]
        if not items:
            continue
        colour = CLASS_COLOURS[member]
        handles.append(plt.Line2D([0], [0], marker="o", linestyle="", markerfacecolor=colour, markeredgecolor=colour))
        labels.append(f"{member.value}: {len(items)} GEMM(s), {sum(item.share for item in items):.1%} of the workload")
        for at_k in (True, False):
            chosen = [item for item in items if (item.gemm.problem.k == cut.k) is at_k]
            if not chosen:
                continue
            axes.scatter(
                [item.gemm.problem.m for item in chosen], [item.gemm.problem.n for item in chosen],
                s=[max(12.0, _BIGGEST * math.sqrt(item.share / heaviest)) for item in chosen],
                facecolors=colour if at_k else "none", edgecolors="white" if at_k else colour,
                linewidths=0.8 if at_k else 1.6, alpha=0.9, zorder=3,
            )  # fmt: skip
    return finish_png(plt, figure, axes, handles, labels, dpi=dpi)


def plot_coverage_map(
    smap: SelectionMap, cut: MapSlice, path: str | os.PathLike[str], *, title: str | None = None
) -> None:
    """Write :func:`render_coverage_map` to ``path`` (atomically)."""
    from tensilekit.io.atomic import write_bytes_atomic

    write_bytes_atomic(path, render_coverage_map(smap, cut, title=title))


__all__ = ["CLASS_COLOURS", "plot_coverage_map", "render_coverage_map"]
