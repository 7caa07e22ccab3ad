"""keras.utils.model_to_dot / plot_model: Keras 3.15's node labels (model_plot_facts.py), the
edges Keras draws, nested and subclassed models, and Graphviz's rendering."""
import shutil

import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tests.keras import model_plot_facts as F

L = tf.keras.layers


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


def _functional():
    i = tf.keras.Input((4,), name="x")
    shared = L.Dense(4, name="shared", activation="relu")
    a, b = shared(i), L.Dense(4, name="b")(i)
    d = shared(L.Add(name="add")([a, b]))
    return tf.keras.Model(i, L.Dropout(0.5, name="drop")(d), name="func")


def _sequential():
    return tf.keras.Sequential([tf.keras.Input((3,)), L.Dense(5, name="s1"), L.Dense(2, name="s2", trainable=False)],
                               name="seq")


def _labels_and_edges(dot):
    names = {}
    labels = {}
    for node, attrs in dot.get_nodes():
        label = attrs["label"]
        name = label.split("<b>")[1].split("</b>")[0]
        names[node], labels[name] = name, label
    return labels, [(names[s], names[d]) for s, d in dot.get_edges()]


@pytest.mark.parametrize("flags", range(3))
def test_labels_are_keras(flags):
    options = dict(F.FLAGS[flags])
    for model in (_functional(), _sequential()):
        dot = tf.keras.utils.model_to_dot(model, **options)
        for node, attrs in dot.get_nodes():
            name = next(layer.name for layer in _layers(model) if str(id(layer)) == node)
            assert attrs["label"] == F.LABELS[(name, flags)], (name, flags)


def _layers(model):
    return model.layers


def test_edges_and_graph_attributes():
    dot = tf.keras.utils.model_to_dot(_functional())
    _, edges = _labels_and_edges(dot)
    assert edges == [("x", "shared"), ("x", "b"), ("shared", "add"), ("b", "add"), ("add", "shared"),
                     ("shared", "drop")]
    assert (dot.get("rankdir"), dot.get("dpi"), dot.get("splines"), dot.get("concentrate")) == ("TB", 200, "ortho", True)
    _, edges = _labels_and_edges(tf.keras.utils.model_to_dot(_sequential(), rankdir="LR"))
    assert edges == [("s1", "s2")]
    text = tf.keras.utils.model_to_dot(_sequential(), rankdir="LR").to_string()
    assert text.startswith("digraph G {\nrankdir=LR;\nconcentrate=True;\ndpi=200;\nsplines=ortho;\n"
                           "node [shape=record];\n")
    assert "[penwidth=2];" in text and text.endswith("}\n")


def test_nested_and_subclassed_models():
    inner = _sequential()
    i = tf.keras.Input((3,), name="outer_in")
    outer = tf.keras.Model(i, L.Dense(1, name="head")(inner(i)), name="outer")
    flat = tf.keras.utils.model_to_dot(outer)
    _, edges = _labels_and_edges(flat)
    assert edges == [("outer_in", "seq"), ("seq", "head")]
    nested = tf.keras.utils.model_to_dot(outer, expand_nested=True)
    (cluster,) = nested.get_subgraphs()
    assert cluster.get("label") == "seq" and len(cluster.get_nodes()) == 2
    assert "subgraph cluster_seq {" in nested.to_string()
    assert len(nested.get_edges()) == 2                # outer_in -> s1, s2 -> head

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__(name="sub")
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)
    sub = Sub()
    sub(tf.ones((1, 3)))
    dot = tf.keras.utils.model_to_dot(sub)
    assert len(dot.get_nodes()) == 1 and not dot.get_edges()
    with pytest.raises(ValueError, match="not yet been built"):
        tf.keras.utils.model_to_dot(tf.keras.Sequential([L.Dense(2)]))
    with pytest.raises(ValueError, match="layer_range"):
        tf.keras.utils.model_to_dot(sub, layer_range=["a", "b"])


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_plot_model_runs_graphviz(tmp_path):
    model = _functional()
    tf.keras.utils.plot_model(model, to_file=tmp_path / "model.png", show_shapes=True)
    assert (tmp_path / "model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tf.keras.utils.plot_model(model, to_file=str(tmp_path / "model.svg"), show_layer_names=True)
    svg = (tmp_path / "model.svg").read_text()
    assert "<svg" in svg and "shared" in svg and "(Dense)" in svg
    tf.keras.utils.plot_model(model, to_file=str(tmp_path / "model"))         # no extension: png
    assert (tmp_path / "model").read_bytes()[:4] == b"\x89PNG"
