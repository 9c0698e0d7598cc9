"""ember: run TensorFlow GraphDefs and .tflite models from Python.

The API follows what TensorFlow users already write, so their code ports by its import::

    import ember
    graph = ember.GraphDef.from_file("model.pb")
    with ember.Session(graph) as sess:
        probs = sess.run("probs:0", feed_dict={"x:0": x})

    interp = ember.lite.Interpreter(model_path="model.tflite")
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
"""

from __future__ import annotations

import contextlib
import os
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ember import errors
from ember._ember import GraphDef, __version__, _Session, _set_error_factory

_set_error_factory(errors._from_status)

from ember import lite  # noqa: E402  (needs the error factory in place)


@dataclass(frozen=True)
class Tensor:
    """A graph tensor by name ("node:0"): what Graph.get_tensor_by_name returns. Usable as a
    fetch or a feed_dict key, as TensorFlow's tensors are."""

    name: str

    @property
    def op(self) -> Operation:
        return Operation(self.name.rsplit(":", 1)[0])


@dataclass(frozen=True)
class Operation:
    """A graph node by name: fetched, it runs as a target (its result is None)."""

    name: str

    @property
    def outputs(self) -> list[Tensor]:
        return [Tensor(f"{self.name}:0")]


class Graph:
    """tf.Graph's inference part: a GraphDef that import_graph_def fills, a default-graph
    context, and lookups by name. ember.Session(graph=...) runs it."""

    def __init__(self) -> None:
        self._graph_def = GraphDef()
        self._names: set[str] | None = None

    def as_graph_def(self) -> GraphDef:
        return self._graph_def

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        _default_graphs().append(self)
        try:
            yield self
        finally:
            _default_graphs().pop()

    def _import(self, graph_def: GraphDef) -> None:
        self._graph_def = self._graph_def._merged(graph_def) if self._graph_def.num_nodes else graph_def
        self._names = None

    def _has(self, node: str) -> bool:
        if self._names is None:
            self._names = set(self._graph_def.node_names())
        return node in self._names

    def get_operation_by_name(self, name: str) -> Operation:
        if not self._has(name):
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
        return Operation(name)

    def get_tensor_by_name(self, name: str) -> Tensor:
        node, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not a Tensor.")
        if not self._has(node):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist.")
        return Tensor(name)

    def get_operations(self) -> list[Operation]:
        return [Operation(n) for n in self._graph_def.node_names()]


_local = threading.local()
_global_default = Graph()


def _default_graphs() -> list[Graph]:
    stack: list[Graph] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def get_default_graph() -> Graph:
    stack = _default_graphs()
    return stack[-1] if stack else _global_default


def reset_default_graph() -> None:
    global _global_default
    _global_default = Graph()


def import_graph_def(
    graph_def: GraphDef,
    input_map: Any = None,
    return_elements: Sequence[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
) -> list[Tensor | Operation] | None:
    """Adds graph_def's nodes to the default graph, named "<name>/node" ("import/node" by
    default, as TensorFlow; name="" keeps the names). input_map is not supported."""
    if input_map:
        raise NotImplementedError("ember's import_graph_def does not support input_map")
    prefix = "import" if name is None else name
    graph = get_default_graph()
    graph._import(graph_def._prefixed(prefix) if prefix else graph_def)
    if return_elements is None:
        return None
    qualify = (lambda n: f"{prefix}/{n}") if prefix else (lambda n: n)
    return [
        graph.get_tensor_by_name(qualify(e)) if ":" in e else graph.get_operation_by_name(qualify(e))
        for e in return_elements
    ]


GraphLike = Union[GraphDef, Graph, str, "os.PathLike[str]", bytes]


@dataclass(frozen=True)
class SessionConfig:
    """Threads and deadline of a Session (tf.compat.v1.ConfigProto's fields, shorter names).

    ``inter_op_threads``: 0 picks the number of hardware threads, -1 runs every step inline on
    the calling thread. ``intra_op_threads``: threads inside one kernel (0: hardware threads).
    ``operation_timeout_in_ms``: deadline of every run (0: none).
    """

    intra_op_threads: int = 0
    inter_op_threads: int = 0
    operation_timeout_in_ms: int = 0


def ConfigProto(  # noqa: N802  (TensorFlow's name)
    intra_op_parallelism_threads: int = 0,
    inter_op_parallelism_threads: int = 0,
    operation_timeout_in_ms: int = 0,
    **_ignored: Any,
) -> SessionConfig:
    """A SessionConfig from tf.compat.v1.ConfigProto's field names; other fields are ignored."""
    return SessionConfig(
        intra_op_threads=intra_op_parallelism_threads,
        inter_op_threads=inter_op_parallelism_threads,
        operation_timeout_in_ms=operation_timeout_in_ms,
    )


def _as_graph(graph: GraphLike) -> GraphDef:
    if isinstance(graph, GraphDef):
        return graph
    if isinstance(graph, Graph):
        return graph.as_graph_def()
    if isinstance(graph, (bytes, bytearray, memoryview)):
        return GraphDef.from_bytes(bytes(graph))
    if isinstance(graph, (str, os.PathLike)):
        return GraphDef.from_file(os.fspath(graph))
    raise TypeError(f"graph must be an ember.GraphDef, a path or GraphDef bytes, not {type(graph).__name__}")


class Session(_Session):
    """Runs a GraphDef, as tf.compat.v1.Session runs a graph.

    ``run(fetches, feed_dict=None)``: fetches is a tensor name (``"probs:0"``), an operation name
    (``"train"``, run as a target; its result is None) or a list, tuple, namedtuple or dict of
    them; the results come back as NumPy arrays (NumPy scalars for 0-d tensors) in the same
    structure. feed_dict maps tensor names (``"x:0"``, or ``"x"`` for output 0) to values, which
    are converted to the fed tensor's dtype as TensorFlow does. The GIL is released while the
    graph runs, so several Python threads may run one session at once.
    """

    def __init__(
        self,
        graph: GraphLike | None = None,
        config: SessionConfig | None = None,
        *,
        target: str = "",
    ) -> None:
        if target:
            raise ValueError(f"ember runs in-process only: target {target!r} is not supported")
        if graph is None:
            graph = get_default_graph()  # as tf.compat.v1.Session()
            if not graph.as_graph_def().num_nodes:
                raise TypeError(
                    "ember.Session needs a graph: ember.Session(ember.GraphDef.from_file(path)), or "
                    "import_graph_def into the default graph first"
                )
        config = config if config is not None else SessionConfig()
        self._graph = graph if isinstance(graph, Graph) else None
        self._graph_def = _as_graph(graph)
        super().__init__(
            self._graph_def, config.inter_op_threads, config.intra_op_threads, config.operation_timeout_in_ms
        )
        self.config = config

    @property
    def graph_def(self) -> GraphDef:
        return self._graph_def

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            self._graph = Graph()
            self._graph._import(self._graph_def)
        return self._graph

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def make_callable(self, fetches: Any, feed_list: Sequence[str] | None = None) -> Callable[..., Any]:
        """A function running ``fetches`` with positional feeds for ``feed_list``, as TF's."""
        names = list(feed_list or [])
        run = self.run

        def call(*values: Any) -> Any:
            if len(values) != len(names):
                raise TypeError(f"expected {len(names)} feed values, got {len(values)}")
            return run(fetches, dict(zip(names, values)))  # lengths checked above

        return call


def _gfile_open(name: str | os.PathLike[str], mode: str = "r") -> Any:
    return open(name, mode)  # noqa: PTH123


io: types.SimpleNamespace = types.SimpleNamespace(gfile=types.SimpleNamespace(GFile=_gfile_open, exists=os.path.exists))

from ember import compat  # noqa: E402  (needs Session)

__all__ = [
    "ConfigProto",
    "Graph",
    "GraphDef",
    "GraphLike",
    "Operation",
    "Session",
    "SessionConfig",
    "Tensor",
    "__version__",
    "compat",
    "errors",
    "get_default_graph",
    "import_graph_def",
    "io",
    "lite",
    "reset_default_graph",
]
