"""``ember.compat.v1``: the names of ``tf.compat.v1`` that ember provides, so code written as
``tf.compat.v1.Session(...)`` ports by replacing ``tf`` with ``ember``."""

from __future__ import annotations

import types

import ember
from ember import errors, lite

v1 = types.SimpleNamespace(
    Session=ember.Session,
    GraphDef=ember.GraphDef,
    ConfigProto=ember.ConfigProto,
    Graph=ember.Graph,
    import_graph_def=ember.import_graph_def,
    get_default_graph=ember.get_default_graph,
    reset_default_graph=ember.reset_default_graph,
    gfile=types.SimpleNamespace(GFile=ember.io.gfile.GFile, Exists=ember.io.gfile.exists),
    errors=errors,
    lite=types.SimpleNamespace(Interpreter=lite.Interpreter, experimental=lite.experimental),
)

__all__ = ["v1"]
