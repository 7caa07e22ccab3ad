"""A TensorArray written at row ``i`` with the loop's new state shares its buffer with that
state's history when compiled (``_SharedList`` in codegen/templates/loops.py), which holds
only while the body writes the list in place. Two ways it did not, both silent wrong
gradients w.r.t. the captured ``w`` (the history's rows were never written): a second-order
gradient, whose program calls the loop body as one shared function that copies the list at
each write (~1e+200 for the report's program), and a body reading the list with
``ta.stack()``, whose write then copies it. Compiled == interpreter == TensorFlow 2.21."""
import numpy as np
import pytest

import tapeflow as tf

X = np.array([0.5, -1.0, 2.0, 1.5])
W = 0.7


def loop(x, w, size, at, reads_list=False):
    """a <- a * w + sin(x[i]) (plus a tenth of the list's sum), written at row ``at(i)``."""
    ta = tf.TensorArray(tf.float64, size=size, element_shape=())

    def body(i, a, ta):
        a = a * w + tf.sin(tf.gather(x, i))
        if reads_list:
            a = a + 0.1 * tf.reduce_sum(ta.stack())
        return i + 1, a, ta.write(at(i), a)
    _, _, ta = tf.while_loop(lambda i, a, ta: i < 4, body,
                             (tf.constant(0), tf.constant(0.3, tf.float64), ta))
    return ta


def weighted(ta, size):
    return tf.reduce_sum(ta.stack() * tf.constant([1., 2., 3., 4.] + [5.] * (size - 4),
                                                  tf.float64))


def second(x, w, size, at, after=False):
    """[dy/dx, dy/dw, ds/dx, ds/dw] for s = |dy/dx|^2 (the report's program)."""
    with tf.GradientTape(persistent=True) as t2:
        t2.watch([x, w])
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, w])
            ta = loop(x, w, size, at)
            y = weighted(ta, size)
            if after:                       # rows read again after the loop
                y = y + tf.reduce_sum(ta.gather([1, 3]) ** 2)
        gx, gw = t.gradient(y, [x, w])
        gx = tf.convert_to_tensor(gx)
        s = tf.reduce_sum(gx * gx)
    return [gx, gw] + t2.gradient(s, [x, w])


def report(x, w):
    return second(x, w, 4, lambda i: i)


def variants(x, w):
    return second(x, w, 4, lambda i: i, after=True) + second(x, w, 5, lambda i: i + 1)


def first(x, w):
    """First order only: the plain loop (its list still shares) and one whose body stacks
    the list."""
    out = []
    for reads_list in (False, True):
        with tf.GradientTape() as t:
            t.watch([x, w])
            ta = loop(x, w, 4, lambda i: i, reads_list)
            y = weighted(ta, 4)
        gx, gw = t.gradient(y, [x, w])
        out += [tf.convert_to_tensor(gx), gw, ta.stack()]
    return out


# TF 2.21's values (inside tf.function), per program: dy/dx, dy/dw, ds/dx, ds/dw
TF_SECOND = [
    [[4.600287789429333, 3.274231973560927, -2.4136516519734257, 0.2829488066708116],
     6.3013997442935885,
     [-23.122414310186805, 33.392674983775606, 25.458835942158704, -2.2579201289578754],
     136.00067688579165],
    [[5.037211774615698, 3.658519848875353, -3.2631810898307734, 0.48924046656035747],
     8.12768674438758,
     [-11.084279878159958, 56.32552794924794, 42.49083286402604, -5.768686746326981],
     237.29068697453835],
    [[6.823204418697648, 4.457494023412153, -3.121101274103568, 0.35368600833851455],
     8.619143641978583,
     [-50.86744695100285, 61.88905611332296, 42.57014036107097, -3.5280002014966803],
     256.9878531295517],
]
# TF 2.21's: dy/dx, dy/dw, the stacked list (plain loop); dy/dx, dy/dw (the body stacks it)
TF_FIRST = [
    [4.600287789429333, 3.274231973560927, -2.4136516519734257, 0.2829488066708116],
    6.3013997442935885,
    [0.689425538604203, -0.35887310778495446, 0.6580862513762136, 1.458155362567404],
    [6.939922899429068, 3.976624971189509, -2.580110386592283, 0.2829488066708116],
    8.63418467998072,
]


def run(fn, jit_compile):
    f = tf.function(fn, jit_compile=jit_compile)
    args = tf.constant(X), tf.constant(W, tf.float64)
    program = f.get_concrete_function(*args).program
    return [np.asarray(v) for v in f(*args)], getattr(program, "source", None)


def check_second(fn, programs):
    interpreted, compiled = run(fn, False)[0], run(fn, True)[0]
    for k, tf_values in enumerate(programs):
        for got, want, ref in zip(compiled[4 * k:], interpreted[4 * k:], tf_values, strict=False):
            np.testing.assert_allclose(want, ref, rtol=1e-12)
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_reported_second_order_gradient():
    check_second(report, TF_SECOND[:1])


@pytest.mark.slow
def test_second_order_with_rows_read_after_the_loop_or_written_at_i_plus_1():
    check_second(variants, TF_SECOND[1:])


def test_first_order_shares_the_list_and_a_body_stacking_it_still_keeps_the_history():
    (interpreted, _), (compiled, source) = run(first, False), run(first, True)
    assert "alias" in source               # the plain loop's list is still the history
    want = interpreted[:3] + interpreted[3:5]
    for got, ref, tf_value in zip(compiled[:3] + compiled[3:5], want, TF_FIRST, strict=True):
        np.testing.assert_allclose(ref, tf_value, rtol=1e-12)
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(compiled[5], interpreted[5], rtol=1e-12)
