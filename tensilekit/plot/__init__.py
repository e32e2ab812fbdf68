"""Charts (matplotlib, the optional ``tensilekit[plot]`` extra): rendering only, data comes from the core."""

from tensilekit.plot.selection import plot_selection_map, render_selection_map

__all__ = ["plot_selection_map", "render_selection_map"]
