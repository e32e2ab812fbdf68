"""Build master solution libraries from logic files, as AMD's TensileCreateLibrary does."""

from tensilekit.build.master import (
    BuildOptions,
    architecture_index,
    build_master_libraries,
    build_master_tree,
    kernel_states,
)
from tensilekit.build.tensilelite import build_tensilelite_libraries

__all__ = [
    "BuildOptions",
    "architecture_index",
    "build_master_libraries",
    "build_master_tree",
    "build_tensilelite_libraries",
    "kernel_states",
]
