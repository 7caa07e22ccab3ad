"""One source per program (issue 26.4): the generated text depends only on the graph's
structure, so another process, and the compile worker decoding the graph from its job,
generate the very same file (the disk cache's key hashes the whole text).

Before: a custom gradient's graph printed in the header's comment as ``grad=<Graph>`` in the
process that traced it and ``grad=None`` in the worker, so every such program missed the
cache the worker had filled and was compiled a second time in the process. And: the reads of
variables after their assigns (every optimizer's step) shared one identity-gradient graph per
shape, named once in the process's header, while the worker decoded one graph per read and
named each: W14's train step never left the interpreter.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tapeflow.codegen import generate, nested
from tapeflow.tracer import tiers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = textwrap.dedent("""
    import numpy as np
    import tapeflow as tf

    @tf.custom_gradient
    def clip(x):
        def grad(dy):
            return tf.clip_by_value(dy, -1.0, 1.0)
        return tf.tanh(x) * 2.0, grad

    u = tf.Variable(np.zeros(2, np.float32))
    v = tf.Variable(np.ones(2, np.float32))

    @tf.function
    def step(x, w):
        with tf.GradientTape() as tape:
            tape.watch(w)
            loss = tf.reduce_sum(clip(tf.matmul(x, w)) ** 2)
        grad = tape.gradient(loss, w)
        u.assign_add(grad[0])   # reads after assigns (as an optimizer's): two gradient graphs
        v.assign_add(grad[1])   # of one shape, one per read in the worker's decoded job
        return loss + tf.reduce_sum(u * v), grad

    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    w = tf.constant(np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(3, 2))
    step(x, w)
    cf = step.get_concrete_function(x, w)
    graph, name = cf._program.graph, cf.name
""")

OTHER = PROGRAM + textwrap.dedent("""
    import json, sys
    from tapeflow.codegen import generate, nested
    from tapeflow.ir import codec
    job = json.loads(sys.stdin.read())
    worker = codec.decode(job["graph"])
    out = {}
    for elide in (False, True):
        if elide:
            nested.HEADER_BYTES = 0     # the header of a large program: nested graphs elided
        out[str(elide)] = [generate.generate(graph, name).source,
                           generate.generate(worker, job["name"]).source]
    print(json.dumps(out))
""")


class _Job:
    def __init__(self, graph, name):
        self.graph, self.name = graph, name


def test_two_processes_and_the_worker_generate_the_same_source(monkeypatch, numpy_backend):
    scope = {}
    exec(compile(PROGRAM, "<program>", "exec"), scope)    # noqa: S102 - the same text both sides
    graph, name = scope["graph"], scope["name"]
    assert any(n.op == "CustomGradient" for n in graph.nodes)
    mine = {"False": generate.generate(graph, name).source}
    monkeypatch.setattr(nested, "HEADER_BYTES", 0)
    mine["True"] = generate.generate(graph, name).source
    assert "CustomGradient[grad=<Graph>" in mine["True"]
    assert "CustomGradient[grad={ lambda" in mine["False"]
    env = dict(os.environ, PYTHONPATH=ROOT, TAPEFLOW_BACKEND="numpy")   # generated, not compiled
    out = subprocess.run([sys.executable, "-c", OTHER], input=tiers._payload(_Job(graph, name)),
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    for elide in ("False", "True"):
        traced_there, decoded_there = theirs[elide]
        assert traced_there == mine[elide], f"another process traced another source (elided: {elide})"
        assert decoded_there == mine[elide], f"the worker's source differs (elided: {elide})"
