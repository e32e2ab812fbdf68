"""Master solution library: the node tree the runtime walks, and its solutions.

``MasterLibrary`` is ``{solutions, library, version?}``. ``library`` is a tree of nodes, each
``{type: <Tag>, …}`` (Tensile ``Serialization/SolutionLibrary.hpp``): ``Hardware`` and ``Problem``
nodes hold predicate rows, ``ProblemMap`` maps operation identifiers to subtrees, and the leaves
are ``Matching`` tables, ``DecisionTree`` forests, ``FreeSize`` pools, ``GranularitySelection``
tables, ``Single`` solutions or lazily loaded ``Placeholder`` files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, ConfigDict, Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError

from tensilekit.errors import child_path
from tensilekit.model.common import MAX_SIZE, MAX_TENSOR_INDICES, Efficiency, StrictModel
from tensilekit.model.predicates import Predicate
from tensilekit.model.solution import MasterSolution
from tensilekit.ranges import SolutionIndexInt

NODE_TYPES = (
    "Hardware",
    "Problem",
    "ProblemMap",
    "Matching",
    "Single",
    "DecisionTree",
    "FreeSize",
    "GranularitySelection",
    "Placeholder",
    "Prediction",
)


class Property(StrictModel):
    """A problem property used as a table key or tree feature (``{type: FreeSizeA, index: 0}``)."""

    type: str
    index: Annotated[int, Field(ge=-1, lt=MAX_TENSOR_INDICES)] | None = None
    value: float | int | dict[str, float | int] | None = None


class _Node(StrictModel):
    """Base of tree nodes: ``type`` always counts as set, so dumps never lose the tag."""

    def model_post_init(self, __context: Any) -> None:
        self.__pydantic_fields_set__.add("type")


class Row(StrictModel):
    """One ``{predicate, library}`` row of a ``Hardware`` or ``Problem`` node."""

    predicate: Predicate
    library: LibraryNode


class HardwareNode(_Node):
    type: Literal["Hardware"] = "Hardware"
    rows: list[Row]


class ProblemNode(_Node):
    type: Literal["Problem"] = "Problem"
    rows: list[Row]


class ProblemMapNode(_Node):
    """Dictionary lookup by a problem property (in practice the operation identifier)."""

    type: Literal["ProblemMap"] = "ProblemMap"
    property: Property
    map: dict[str, LibraryNode]


class SingleNode(_Node):
    """A leaf naming one solution by its master ``index`` (−1 means no solution)."""

    type: Literal["Single"] = "Single"
    index: SolutionIndexInt


class MatchingEntry(StrictModel):
    """A table row: key, the solution (``index``, or an old-style ``value`` Single) and speed."""

    key: list[Annotated[int, Field(ge=0, le=MAX_SIZE)]]
    index: SolutionIndexInt | None = None
    value: SingleNode | None = None
    speed: Efficiency | None = None

    @model_validator(mode="after")
    def _names_a_solution(self) -> MatchingEntry:
        if self.index is None and self.value is None:
            raise PydanticCustomError(
                "missing_solution",
                "a table entry names its solution by 'index' (or a Single 'value')",
                {"field": "index"},
            )
        return self

    @property
    def solution_index(self) -> int:
        if self.index is not None:
            return self.index
        assert self.value is not None  # checked when the entry is read (_names_a_solution)
        return self.value.index


class MatchingNode(_Node):
    """Nearest-key table (``Matching``): properties give the key, ``distance`` the metric."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    type: Literal["Matching"] = "Matching"
    properties: list[Property]
    distance: str
    table: list[MatchingEntry]

    @model_validator(mode="after")
    def _keys_fit_the_properties(self) -> MatchingNode:
        # the runtime reads one key number per property (a shorter key reads past its end)
        width = len(self.properties)
        for number, entry in enumerate(self.table):
            if len(entry.key) != width:
                raise PydanticCustomError(
                    "key_length",
                    "key has {count} numbers but the table has {width} properties",
                    {"count": len(entry.key), "width": width, "at": ["table", number, "key"]},
                )
        return self


class TreeNode(StrictModel):
    feature_index: int = Field(alias="featureIdx")
    threshold: float | int
    next_index_lte: int = Field(alias="nextIdxLTE")
    next_index_gt: int = Field(alias="nextIdxGT")


class DecisionTreeEntry(StrictModel):
    tree: list[TreeNode]
    value: LibraryNode


class DecisionTreeNode(_Node):
    """A forest: the first tree (in order) that predicts true returns its ``value``."""

    type: Literal["DecisionTree"] = "DecisionTree"
    features: list[Property]
    trees: list[DecisionTreeEntry]
    null_value: LibraryNode = Field(alias="nullValue")

    @model_validator(mode="after")
    def _nodes_point_inside(self) -> DecisionTreeNode:
        # the runtime follows nextIdx* within the tree (-1 / -2 are the leaves) and reads the
        # feature featureIdx: anything else reads past the end
        features = len(self.features)
        for number, entry in enumerate(self.trees):
            size = len(entry.tree)
            for node_number, node in enumerate(entry.tree):
                if not 0 <= node.feature_index < features or not all(
                    -2 <= n < size for n in (node.next_index_lte, node.next_index_gt)
                ):
                    raise PydanticCustomError(
                        "tree_index",
                        "decision-tree node points outside its tree or feature list",
                        {"at": ["trees", number, "tree", node_number]},
                    )
        return self


class FreeSizeEntry(StrictModel):
    index: SolutionIndexInt


class FreeSizeNode(_Node):
    """A pool of solutions with no size key (tensilelite FreeSize)."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    type: Literal["FreeSize"] = "FreeSize"
    table: list[FreeSizeEntry]


class GranularityExactEntry(StrictModel):
    key: list[int]
    value: SolutionIndexInt


class GranularitySelectionNode(_Node):
    type: Literal["GranularitySelection"] = "GranularitySelection"
    indices: list[SolutionIndexInt]
    exact: list[GranularityExactEntry] = Field(default_factory=list)


class PredictionNode(_Node):
    """A pool hipBLASLt ranks with Origami's analytical model (``LibraryType: Prediction``):
    ``table`` lists the candidate solution indices (tensilelite ``PredictionLibrary.hpp``;
    serialised as ``{type: Prediction, table: [index, …]}``, rocm-libraries
    ``projects/hipblaslt/tensilelite/tests/PredictionLibrary_test.cpp`` @ 6531695acbe4)."""

    type: Literal["Prediction"] = "Prediction"
    table: list[SolutionIndexInt]


# A file-name prefix: no separator, no "..", no hidden or absolute name (Placeholder values are
# ``TensileLibrary_Type_..._<arch>``; the runtime opens ``<folder of the master>/<value><ext>``).
_PLACEHOLDER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_+\-.]{0,250}")


def placeholder_name(value: str) -> str:
    """``value`` if it is a valid Placeholder file prefix, else ValueError."""
    if not _PLACEHOLDER_NAME.fullmatch(value) or ".." in value:
        raise ValueError(
            f"a placeholder names a library file beside the master (letters, digits, _ + - .), not {value[:80]!r}"
        )
    return value


class PlaceholderNode(_Node):
    """Lazy-loading leaf: ``value`` is the file prefix of a separate master in the same folder."""

    type: Literal["Placeholder"] = "Placeholder"
    value: Annotated[str, AfterValidator(placeholder_name)]


def node_type(data: Any) -> str | None:
    """Discriminator for library nodes: the ``type`` tag if it is one tensilekit knows."""
    name = data.get("type") if isinstance(data, dict) else getattr(data, "type", None)
    return name if name in NODE_TYPES else None


LibraryNode = Annotated[
    Union[
        Annotated[HardwareNode, Tag("Hardware")],
        Annotated[ProblemNode, Tag("Problem")],
        Annotated[ProblemMapNode, Tag("ProblemMap")],
        Annotated[MatchingNode, Tag("Matching")],
        Annotated[SingleNode, Tag("Single")],
        Annotated[DecisionTreeNode, Tag("DecisionTree")],
        Annotated[FreeSizeNode, Tag("FreeSize")],
        Annotated[GranularitySelectionNode, Tag("GranularitySelection")],
        Annotated[PlaceholderNode, Tag("Placeholder")],
        Annotated[PredictionNode, Tag("Prediction")],
    ],
    Discriminator(node_type, custom_error_type="unknown_node_type", custom_error_message="unknown library node type"),
]
"""Any node of a master library tree."""

AnyNode = Union[
    HardwareNode,
    ProblemNode,
    ProblemMapNode,
    MatchingNode,
    SingleNode,
    DecisionTreeNode,
    FreeSizeNode,
    GranularitySelectionNode,
    PlaceholderNode,
    PredictionNode,
]

for _model in (Row, ProblemMapNode, DecisionTreeEntry, DecisionTreeNode):
    _model.model_rebuild()


class MasterLibrary(StrictModel):
    """A master solution library (``TensileLibrary*.yaml`` / ``.dat``)."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    solutions: list[MasterSolution]
    library: LibraryNode
    version: str | None = None

    def solutions_by_index(self) -> dict[int, MasterSolution]:
        """``index -> solution`` as the runtime's loader keeps them: of several solutions with one
        index the **last** (``lib.solutions[s->index] = s`` over the file's list in
        ``Serialization/SolutionLibrary.hpp`` ``MappingTraits<MasterSolutionLibrary>::mapping``,
        Tensile 09ec347/a164ed70 and hipBLASLt 7d9fb683 alike; the loader accepts the file)."""
        return {solution.index: solution for solution in self.solutions}

    def iter_nodes(self) -> Iterator[tuple[str, AnyNode]]:
        """Every node with its YAML path, depth first in file order."""
        yield from iter_nodes(self.library, "library")

    def to_raw(self) -> dict[str, Any]:
        """The object tree as it is serialised (file keys, nothing invented)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="python")


def iter_nodes(node: AnyNode, path: str) -> Iterator[tuple[str, AnyNode]]:
    """Depth-first walk of a library subtree, yielding ``(yaml_path, node)``."""
    yield path, node
    if isinstance(node, (HardwareNode, ProblemNode)):
        for number, row in enumerate(node.rows):
            yield from iter_nodes(row.library, f"{path}.rows[{number}].library")
    elif isinstance(node, ProblemMapNode):
        for key, child in node.map.items():
            yield from iter_nodes(child, child_path(f"{path}.map", key))
    elif isinstance(node, DecisionTreeNode):
        for number, tree in enumerate(node.trees):
            yield from iter_nodes(tree.value, f"{path}.trees[{number}].value")
        yield from iter_nodes(node.null_value, f"{path}.nullValue")
    elif isinstance(node, MatchingNode):
        for number, entry in enumerate(node.table):
            if entry.value is not None:
                yield from iter_nodes(entry.value, f"{path}.table[{number}].value")


def join_masters(libraries: Iterable[MasterLibrary]) -> MasterLibrary:
    """One master serving every architecture of ``libraries``: their Hardware rows under one
    Hardware node (a library without one becomes a TruePred row) and their solutions concatenated,
    generic (TruePred) rows last so they do not shadow an architecture's own rows."""
    rows: list[Any] = []
    solutions: list[Any] = []
    for library in libraries:
        raw = library.to_raw()
        node = raw["library"]
        rows.extend(
            node["rows"] if node.get("type") == "Hardware" else [{"predicate": {"type": "TruePred"}, "library": node}]
        )
        solutions.extend(raw["solutions"])
    rows.sort(key=lambda row: row["predicate"].get("type") == "TruePred")
    return MasterLibrary.model_validate({"solutions": solutions, "library": {"type": "Hardware", "rows": rows}})


__all__ = [
    "AnyNode",
    "DecisionTreeEntry",
    "DecisionTreeNode",
    "FreeSizeEntry",
    "FreeSizeNode",
    "GranularityExactEntry",
    "GranularitySelectionNode",
    "HardwareNode",
    "LibraryNode",
    "MasterLibrary",
    "MatchingEntry",
    "MatchingNode",
    "NODE_TYPES",
    "PlaceholderNode",
    "PredictionNode",
    "ProblemMapNode",
    "ProblemNode",
    "Property",
    "Row",
    "SingleNode",
    "join_masters",
    "TreeNode",
    "iter_nodes",
    "placeholder_name",
]
