"""Build master solution libraries from logic files, as AMD's TensileCreateLibrary does."""

from tensilekit.build.master import (
    BuildOptions,
    architecture_index,
    build_master_libraries,
    build_master_tree,
    kernel_states,
)

__all__ = ["BuildOptions", "architecture_index", "build_master_libraries", "build_master_tree", "kernel_states"]
