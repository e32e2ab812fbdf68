"""Draw a :class:`~tensilekit.selection.grid.SelectionMap`: which kernel wins over M x N (log axes).

One colour per kernel (the kernels covering most of the grid get the distinct colours; the rest
share grey), white where no kernel is selected, and the library's own table entries marked:
filled where the entry's K is the mapped K, hollow for entries at other K.
"""

from __future__ import annotations

import importlib
import io
import os
from typing import Any

import numpy as np

from tensilekit.errors import MissingDependency
from tensilekit.selection.grid import SelectionMap

_DISTINCT_COLOURS = 18  # tab20 without its two greys (grey means "another kernel")


def _pyplot() -> Any:
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise MissingDependency.for_extra("plots need matplotlib", "plot") from None
    matplotlib.use("Agg", force=True)
    return importlib.import_module("matplotlib.pyplot")


def _label(index: int, name: str, width: int = 60) -> str:
    """``index: MT…`` — the problem-type prefix every kernel of the map shares is left out."""
    start = name.find("_MT")
    text = f"{index}: {name[start + 1 :] if start >= 0 else name}"
    return text if len(text) <= width else text[: width - 1] + "…"


def render_selection_map(smap: SelectionMap, *, title: str | None = None, dpi: int = 120) -> bytes:
    """The map as PNG bytes.

    Raises:
        MissingDependency: matplotlib is not installed.
    """
    plt, figure, axes, handles, labels = draw_selection_map(smap, title=title)
    return finish_png(plt, figure, axes, handles, labels, dpi=dpi)


def draw_selection_map(smap: SelectionMap, *, title: str | None = None) -> tuple[Any, Any, Any, list[Any], list[str]]:
    """Draw the map on a new figure: (pyplot, figure, axes, legend handles, legend labels).

    Other charts draw over it (``plot coverage`` adds the workload's GEMMs) and finish with
    :func:`finish_png`.
    """
    plt = _pyplot()
    colors_module = importlib.import_module("matplotlib.colors")
    kernels = smap.kernels_by_area()
    slot = {index: position for position, index in enumerate(kernels[:_DISTINCT_COLOURS])}
    tab20 = list(plt.get_cmap("tab20").colors)
    palette = [*tab20[:14], *tab20[16:]][: max(1, min(len(kernels), _DISTINCT_COLOURS))]
    other = len(palette)  # kernels beyond the distinct colours
    none = other + 1
    colours = [*palette, (0.6, 0.6, 0.6), (1.0, 1.0, 1.0)]
    codes = np.full(smap.winners.shape, none, dtype=np.int64)
    for index in kernels:
        codes[smap.winners == index] = slot.get(index, other)

    figure, axes = plt.subplots(figsize=(9.5, 7.0))
    m_edges = _edges(smap.m_values)
    n_edges = _edges(smap.n_values)
    axes.pcolormesh(
        m_edges, n_edges, codes, cmap=colors_module.ListedColormap(colours), vmin=-0.5, vmax=none + 0.5, shading="flat"
    )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("M")
    axes.set_ylabel("N")
    problem = smap.problem
    device = smap.hardware.arch + (f", {smap.hardware.cu_count} CUs" if smap.hardware.cu_count else "")
    axes.set_title(
        title
        or f"kernel selected at K={problem.k}, batch {problem.batch}, {problem.trans_a}{problem.trans_b} "
        f"{problem.a_type.value}, {device}",
        fontsize=10,
    )
    inside = [
        entry for entry in smap.entries if m_edges[0] <= entry.m <= m_edges[-1] and n_edges[0] <= entry.n <= n_edges[-1]
    ]
    at_k = [entry for entry in inside if entry.k == problem.k]
    elsewhere = [entry for entry in inside if entry.k != problem.k]
    if elsewhere:
        axes.scatter(
            [e.m for e in elsewhere], [e.n for e in elsewhere], s=14, facecolors="none", edgecolors="black",
            linewidths=0.6, label=f"table entry, other K ({len(elsewhere)})",
        )  # fmt: skip
    if at_k:
        axes.scatter(
            [e.m for e in at_k],
            [e.n for e in at_k],
            s=18,
            color="black",
            label=f"table entry, K={problem.k} ({len(at_k)})",
        )
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[slot[index]]) for index in kernels[: len(slot)]]
    labels = [_label(index, smap.names.get(index, str(index))) for index in kernels[: len(handles)]]
    if len(kernels) > len(handles):
        handles.append(plt.Rectangle((0, 0), 1, 1, color=(0.6, 0.6, 0.6)))
        labels.append(f"{len(kernels) - len(slot)} more kernels")
    if (smap.winners < 0).any():
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="black"))
        labels.append("no kernel")
    return plt, figure, axes, handles, labels


def finish_png(plt: Any, figure: Any, axes: Any, handles: list[Any], labels: list[str], *, dpi: int = 120) -> bytes:
    """Add the legend (kernel patches, then the axes' labelled markers) and return the PNG bytes."""
    marker_handles, marker_labels = axes.get_legend_handles_labels()
    axes.legend(
        handles + marker_handles, labels + marker_labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
        frameon=False,
    )  # fmt: skip
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    plt.close(figure)
    return buffer.getvalue()


def _edges(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Cell edges on a log scale around each grid value (geometric midpoints)."""
    logs = np.log(values.astype(float))
    middle = (logs[1:] + logs[:-1]) / 2
    first = logs[0] - (middle[0] - logs[0]) if len(middle) else logs[0] - 0.5
    last = logs[-1] + (logs[-1] - middle[-1]) if len(middle) else logs[-1] + 0.5
    edges: np.ndarray[Any, Any] = np.exp(np.concatenate([[first], middle, [last]]))
    return edges


def plot_selection_map(smap: SelectionMap, path: str | os.PathLike[str], *, title: str | None = None) -> None:
    """Write the map as a PNG to ``path`` (atomically: an old file stays until the new one is complete)."""
    from tensilekit.io.atomic import write_bytes_atomic

    write_bytes_atomic(path, render_selection_map(smap, title=title))


__all__ = ["plot_selection_map", "render_selection_map"]
