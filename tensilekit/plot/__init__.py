"""Charts (matplotlib, the optional ``plot`` extra): rendering only, data comes from the core."""

from tensilekit.plot.coverage import plot_coverage_map, render_coverage_map
from tensilekit.plot.selection import plot_selection_map, render_selection_map

__all__ = ["plot_coverage_map", "plot_selection_map", "render_coverage_map", "render_selection_map"]
