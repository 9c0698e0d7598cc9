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

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ember import errors
from ember._ember import GraphDef, __version__, _Session, _set_error_factory

_set_error_factory(errors._from_status)

from ember import lite  # noqa: E402  (needs the error factory in place)

GraphLike = Union[GraphDef, str, "os.PathLike[str]", bytes]


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
            raise TypeError("ember.Session needs a graph: ember.Session(ember.GraphDef.from_file(path))")
        config = config if config is not None else SessionConfig()
        self._graph_def = _as_graph(graph)
        super().__init__(
            self._graph_def, config.inter_op_threads, config.intra_op_threads, config.operation_timeout_in_ms
        )
        self.config = config

    @property
    def graph_def(self) -> GraphDef:
        return self._graph_def

    @property
    def graph(self) -> GraphDef:
        return self._graph_def

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
            return run(fetches, dict(zip(names, values, strict=True)))

        return call


from ember import compat  # noqa: E402  (needs Session)

__all__ = [
    "ConfigProto",
    "GraphDef",
    "GraphLike",
    "Session",
    "SessionConfig",
    "__version__",
    "compat",
    "errors",
    "lite",
]
