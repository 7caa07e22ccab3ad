"""Generated source reads as code with notes, not notes with code (issue 24 item 5): each IR
node's printed form is the comment of its first line only, and the header prints nested
graphs with the names their code uses."""
import re

import numpy as np

import tapeflow as tf
from tapeflow.codegen.generate import generate
from tapeflow.tracer import engine


@tf.function
def rnn_gradient(x, h0, W, U):
    """A 12-line tanh RNN: the loss's gradient through ``for t in tf.range(T)``."""
    with tf.GradientTape() as tape:
        tape.watch([W, U])
        h = h0
        for t in tf.range(tf.shape(x)[0]):
            h = tf.tanh(tf.matmul(h, W) + tf.matmul(x[t], U))
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, [W, U])


def _source():
    rng = np.random.default_rng(0)
    args = [tf.constant(rng.normal(size=(5, 2, 3))), tf.constant(np.zeros((2, 4))),
            tf.constant(rng.normal(size=(4, 4)) * 0.3), tf.constant(rng.normal(size=(3, 4)) * 0.3)]
    graph = engine.optimize(rnn_gradient.lower(*args).concrete.graph)   # what a call compiles
    return generate(graph, "rnn_gradient").source


SOURCE = None


def source():
    global SOURCE
    if SOURCE is None:
        SOURCE = _source()
    return SOURCE


def _split(line):
    """(code, comment) of a generated line (its strings hold no ``#``)."""
    if line.lstrip().startswith("#"):
        return "", line.lstrip()[1:].strip()
    code, _, comment = line.partition("  # ")
    return code.strip(), comment.strip()


def test_tanh_rnn_program_has_no_more_comment_lines_than_code_lines():
    lines = [_split(line) for line in source().split("\n")]
    with_comment = sum(1 for code, comment in lines if comment)
    with_code = sum(1 for code, comment in lines if code)
    assert with_code > 100 and with_comment <= with_code, (with_comment, with_code)
    # every node's printed form, a loop's too, comments one line (no part is cut here)
    body = [comment for code, comment in lines if code and comment]
    assert len(body) == len(set(body))
    assert any("WhileWithGrad" in c for c in body)


_NODE = re.compile(r"^\w+:\w+\[[^\]]*\](?: \w+:\w+\[[^\]]*\])* = ")


def test_header_prints_nested_graphs_with_the_names_of_their_code():
    lines = source().split("\n")
    end = next(k for k, line in enumerate(lines) if line.startswith("import "))
    header = {line.lstrip("# ").strip() for line in lines[:end]}
    nested = [comment for code, comment in map(_split, lines[end:])
              if code and _NODE.match(comment) and "<Graph>" not in comment]
    assert any("GatherV2" in c for c in nested) and any("SelectV2" in c for c in nested)
    assert [c for c in nested if c not in header] == []
