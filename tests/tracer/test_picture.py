"""The HTML page (tracer/picture.py) as text: self-contained, every node described, fused
loops both ways. tests/test_picture_browser.py loads it in Chromium."""
import json
import re

import tapeflow as tf
from tapeflow.tracer.picture import page

from tools import need


@tf.function
def step(x, w):
    h = tf.nn.relu(x @ w)
    return tf.reduce_mean(h * h)


def lowered():
    return step.lower(tf.zeros([4, 3]), tf.zeros([3, 2]))


def test_page_is_self_contained_and_describes_every_node():
    need("dot")
    low = lowered()
    text = page(low)
    # no network: nothing is loaded from anywhere (the only URLs are XML namespace names)
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {
        "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    data = json.loads(re.search(r'id="nodes">(.*?)</script>', text, re.S).group(1))
    for fig in low.figures():
        for part in fig.parts:
            for k, node in enumerate(part.graph.nodes):
                assert data[f"{part.prefix}n{k}"]["title"] == node.op
    # the user's line where it is known, generated code under the fused loops
    assert data["t_n0"]["line"].endswith("h = tf.nn.relu(x @ w)")
    assert "test_picture.py:" in data["t_n0"]["line"]
    assert any("for " in line for _, line in data["f_g0"]["code"])
    assert text.count('class="figure collapsed"') == 2   # program, forward+backward
    # ids unique in the page although two pictures draw the same nodes
    ids = re.findall(r' id="([^"]*)"', text)
    assert len(ids) == len(set(ids))


def test_a_stage_list_picks_what_the_page_draws():
    need("dot")
    text = page(lowered(), ["traced"])
    assert 'id="stage-traced"' in text and "stage-forward" not in text


def test_inputs_are_named_after_arguments_variables_and_captures():
    v, c = tf.Variable([1.0, 2.0], name="v"), tf.constant([3.0, 4.0])

    @tf.function
    def f(xs, y):
        return tf.reduce_sum(xs[0] * v * c + xs[1] * y)

    low = f.lower([tf.zeros([2]), tf.zeros([2])], tf.zeros([2]))
    assert low.input_names() == ["xs[0]", "xs[1]", "y", "variable v:0", "captured 4"]
    _, bwd, _ = low.concrete.tape_pair()
    assert type(low)(bwd).input_names()[:2] == ["arg 0", "arg 1"]   # no sources: positions


def test_a_figure_too_big_to_lay_out_is_text(monkeypatch):
    need("dot")
    from tapeflow.tracer import picture
    monkeypatch.setattr(picture, "MAX_PAGE_NODES", 5)
    text = page(lowered(), ["traced", "forward"])
    # the traced graph (4 nodes) is drawn, the forward and backward (4 + 9) are text
    assert "13 nodes: too many to lay out here (at most 5)" in text and text.count("<svg") == 1
