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
