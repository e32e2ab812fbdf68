"""Build master solution libraries from logic files, as AMD's TensileCreateLibrary does.

Named ``libbuild`` (not ``build``) so tools and people read it as source: ``build/`` is where
setuptools and many ignore lists put build output."""

from tensilekit.libbuild.master import (
    BuildOptions,
    architecture_index,
    build_logic_master,
    build_master_libraries,
    build_master_tree,
    kernel_states,
)
from tensilekit.libbuild.tensilelite import build_tensilelite_libraries

__all__ = [
    "BuildOptions",
    "architecture_index",
    "build_logic_master",
    "build_master_libraries",
    "build_master_tree",
    "build_tensilelite_libraries",
    "kernel_states",
]
