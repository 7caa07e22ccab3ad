"""A ConcreteFunction differentiates its graph once: tape_pair, full_vjp and lower share one joint."""
import numpy as np

import tapeflow as tf
from tapeflow.ir.graph import print_graph
from tapeflow.runtime.tensor import wrap
from tapeflow.tracer import concrete_function as concrete_mod
from tapeflow.tracer.lower import Lowered


def _concrete(x):
    f = tf.function(lambda x: tf.reduce_sum(tf.sin(x) * x))
    return f.get_concrete_function(x)


def test_one_vjp_graph_serves_every_gradient_program(monkeypatch):
    built = []
    real = concrete_mod.vjp_graph
    monkeypatch.setattr(concrete_mod, "vjp_graph", lambda g, wrt=None, keep_slices=False:
                        built.append(g) or real(g, wrt, keep_slices))
    x = tf.constant([0.3, -1.2, 2.0])
    c = _concrete(x)
    fwd, bwd, _ = c.tape_pair()
    full = c.full_vjp()
    before = print_graph(c.joint().graph)
    Lowered(c).min_cut()                          # tapeflow dump's min-cut report
    assert built == [c.graph]
    assert bwd.joint is full.joint is c.joint()

    xv = x.numpy()
    want = np.cos(xv) * xv + np.sin(xv)          # d/dx sum(sin(x) x)
    ct = wrap(np.float32(2.0))
    (via_full,) = full.call_tensors([x, ct])
    outs = fwd.run([xv])
    residuals = [wrap(np.asarray(a)) for a in outs[len(c.graph.outputs):]]
    (via_pair,) = bwd.call_tensors(residuals + [ct])
    np.testing.assert_allclose(via_full.numpy(), 2 * want, rtol=1e-6)
    np.testing.assert_allclose(via_pair.numpy(), 2 * want, rtol=1e-6)
    # compiling and running both programs (passes included) left the shared joint as it was
    assert print_graph(c.joint().graph) == before
