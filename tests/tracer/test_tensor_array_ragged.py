"""tf.TensorArray with elements of different shapes: eagerly at tensor indices, and inside
tapeflow.function written in loops on tensors (the padded list of ops/ragged_list.py).

Every expected value, static shape and error text is TensorFlow 2.21's, asked of TensorFlow
itself and written here as a fact. Functions run on the NumPy interpreter
(tests/tracer/conftest.py); a padded list with sizes known only at run time runs there
under the Numba backend too, and one of static sizes compiles
(tests/codegen/test_tensor_array_ragged_programs.py).
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, OutOfRangeError


def ragged_loop(x, n, size=0, dynamic_size=True, infer_shape=False):
    """Element i is ones([i + 1]) * x * (i + 1), written at the loop's tensor index."""
    ta = tf.TensorArray(tf.float32, size=size, dynamic_size=dynamic_size,
                        infer_shape=infer_shape)
    for i in tf.range(n):
        ta = ta.write(i, tf.ones([i + 1]) * x * tf.cast(i + 1, tf.float32))
    return ta


def eager_array(clear_after_read=True):
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=clear_after_read)
    ta = ta.write(tf.constant(0), tf.constant([1.0, 2.0]))
    ta = ta.write(tf.constant(1), tf.constant([3.0]))
    return ta.write(tf.constant(2), tf.constant([4.0, 5.0, 6.0]))


# -- eager ------------------------------------------------------------------------------------

def test_eager_tensor_indices_read_concat_size_and_element_shape():
    """TF 2.21: read(tensor 1) [3], concat [1..6], size 3, element_shape TensorShape(None);
    gather([0, 0]) of one shape stacks it ([[1, 2], [1, 2]])."""
    assert eager_array().read(tf.constant(1)).numpy().tolist() == [3.0]
    assert eager_array().concat().numpy().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert int(eager_array().size()) == 3
    assert repr(eager_array().element_shape) == "TensorShape(None)"
    assert eager_array(False).gather([0, 0]).numpy().tolist() == [[1.0, 2.0], [1.0, 2.0]]


def test_eager_stack_and_gather_of_different_shapes_are_packs_error():
    """TF 2.21: InvalidArgumentError "Shapes of all inputs must match: values[0].shape = [2]
    != values[1].shape = [1] [Op:Pack] name: packed" (gather: "... [3] ... name: stack")."""
    with pytest.raises(InvalidArgumentError, match=r"Shapes of all inputs must match: "
                                                   r"values\[0\]\.shape = \[2\] != values\[1\]"
                                                   r"\.shape = \[1\] \[Op:Pack\] name: packed"):
        eager_array().stack()
    with pytest.raises(InvalidArgumentError, match=r"values\[0\]\.shape = \[2\] != values\[1\]"
                                                   r"\.shape = \[3\] \[Op:Pack\] name: stack"):
        eager_array().gather([0, 2])


def test_eager_tensor_index_errors():
    """TF 2.21 (trailing spaces aside): OutOfRangeError for each."""
    ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    with pytest.raises(OutOfRangeError, match="Tried to write to index 3 but array is not "
                                              "resizeable and size is: 2"):
        ta.write(tf.constant(3), tf.ones([2]))
    with pytest.raises(OutOfRangeError, match=r"Writing to negative indices \(index -1\)"):
        ta.write(tf.constant(-1), tf.ones([2]))
    with pytest.raises(OutOfRangeError, match="Tried to read from index 5 but array size is: 2"):
        ta.read(tf.constant(5))
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
    for i in range(3):
        ta = ta.write(tf.constant(i), tf.ones([i + 1]))
    assert int(ta.size()) == 3 and ta.concat().numpy().tolist() == [1.0] * 6


def test_eager_partial_element_shapes_check_and_merge():
    """TF 2.21: element_shape [None] takes [2] and [3] with infer_shape=False (concat of 5
    ones; [2, 2] is ValueError "Incompatible shape for value ((2, 2)), expected ((None,))");
    with infer_shape=True the first write fixes it to [2] and [3] is refused."""
    ta = tf.TensorArray(tf.float32, size=2, infer_shape=False, element_shape=[None])
    ta = ta.write(0, tf.ones([2])).write(1, tf.ones([3]))
    assert repr(ta.element_shape) == "TensorShape([None])" and ta.concat().shape == [5]
    with pytest.raises(ValueError, match=r"Incompatible shape for value \(\(2, 2\)\), "
                                         r"expected \(\(None,\)\)"):
        ta.write(0, tf.ones([2, 2]))
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[None]).write(0, tf.ones([2]))
    with pytest.raises(ValueError, match=r"Incompatible shape for value \(\(3,\)\), "
                                         r"expected \(\(2,\)\)"):
        ta.write(1, tf.ones([3]))
    assert repr(ta.element_shape) == "TensorShape([2])"


def test_eager_zeros_of_an_element_shape_not_fully_known():
    """TF 2.21: an unwritten element of a partially known shape is ValueError "Cannot convert
    a partially known TensorShape (None,) to a Tensor." (read and stack); "<unknown>" when
    nothing fixes it (gather over an unwritten one); an empty stack is [0] ([0, 2] with
    element_shape [2]); concat of scalars is InvalidArgumentError "Concat saw a scalar shape
    at index 0 but requires at least vectors."; after split the element shape is unknown."""
    with pytest.raises(ValueError, match=r"^Cannot convert a partially known TensorShape "
                                         r"\(None,\) to a Tensor\.$"):
        tf.TensorArray(tf.float32, size=2, element_shape=[None]).read(0)
    with pytest.raises(ValueError, match=r"partially known TensorShape \(None,\)"):
        tf.TensorArray(tf.float32, size=2, element_shape=[None]).stack()
    with pytest.raises(ValueError, match="partially known TensorShape <unknown> to a Tensor"):
        tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0, 2.0]).gather([0, 1])
    assert tf.TensorArray(tf.float32, size=0, element_shape=[None]).stack().shape == [0]
    assert tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack().shape == [0, 2]
    with pytest.raises(InvalidArgumentError, match="Concat saw a scalar shape at index 0 but "
                                                   "requires at least vectors."):
        tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.0).concat()
    assert repr(tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 2])
                .element_shape) == "TensorShape(None)"


def test_eager_gradients_none_and_zeros():
    """TF 2.21: x = 2 gives concat [2, 4, 4, 6, 6, 6]; d read(1)/dx 4, d concat/dx 14,
    d sum(concat^2)/dx 144; with a, b written at 0, 1: d read(1)/[a, b] is [None, [1]]
    (zeros for a with UnconnectedGradients.ZERO), d concat/[a, b] [[1, 1], [1]], weighted by
    [1, 2, 3]: [[1, 2], [3]]; second order of sum(concat(x^2 ...)^2): 96, 192, 288."""
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        ta = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=False)
        for i in range(3):
            ta = ta.write(tf.constant(i), tf.ones([i + 1]) * x * float(i + 1))
        r, c = ta.read(tf.constant(1)), ta.concat()
        s = tf.reduce_sum(c * c)
    assert c.numpy().tolist() == [2.0, 4.0, 4.0, 6.0, 6.0, 6.0]
    assert [float(t.gradient(v, x)) for v in (r, c, s)] == [4.0, 14.0, 144.0]
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([a, b])
        ta = tf.TensorArray(tf.float32, size=2, infer_shape=False, clear_after_read=False)
        ta = ta.write(tf.constant(0), a).write(tf.constant(1), b)
        r, c = ta.read(tf.constant(1)), ta.concat()
    da, db = t.gradient(r, [a, b])
    assert da is None and db.numpy().tolist() == [1.0]
    da, _ = t.gradient(r, [a, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert da.numpy().tolist() == [0.0, 0.0]
    assert [g.numpy().tolist() for g in t.gradient(c, [a, b])] == [[1.0, 1.0], [1.0]]
    weighted = t.gradient(c, [a, b], output_gradients=tf.constant([1.0, 2.0, 3.0]))
    assert [g.numpy().tolist() for g in weighted] == [[1.0, 2.0], [3.0]]
    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            ta = tf.TensorArray(tf.float32, size=3, infer_shape=False)
            for i in range(3):
                ta = ta.write(tf.constant(i), tf.ones([i + 1]) * x * x)
            y = tf.reduce_sum(ta.concat() ** 2)
        g = t1.gradient(y, x)
    assert [float(y), float(g), float(t2.gradient(g, x))] == [96.0, 192.0, 288.0]


def test_eager_gather_reads_only_its_indices_and_an_unwritten_read_clears():
    """TF 2.21: gather([1, 1]) of a, b gives gradients [None, [2, 2]] (eager gather stacks the
    elements it reads, nothing else); reading an unwritten element twice (clear_after_read)
    is InvalidArgumentError "Could not read index 0 twice because it was cleared ..."."""
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([a, b])
        ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, a).write(1, b)
        g = ta.gather([1, 1])
    da, db = t.gradient(g, [a, b])
    assert da is None and db.numpy().tolist() == [2.0, 2.0]
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[2])
    assert ta.read(0).numpy().tolist() == [0.0, 0.0]
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice because it "
                                                   "was cleared after a previous read"):
        ta.read(0)


# -- in a function: a loop on a tensor writes elements of different shapes -------------------

@pytest.mark.parametrize("fixed", [False, True], ids=["dynamic_size", "size_tensor"])
def test_loop_values_static_shapes_and_stack_error(fixed):
    """TF 2.21, x = 2, n = 3, dynamic_size=True or size=n: concat [2, 4, 4, 6, 6, 6], read(1)
    [4, 4], size 3, element_shape <unknown>; stack is InvalidArgumentError
    "PartialTensorShape: Incompatible shapes during merge: [1] vs. [2]" (n = 1: [[2]]).
    Static shapes: concat and read are <unknown> there (here the rank is known: [None])."""
    seen = []       # no assert inside: pytest rewrites them, and a rewritten function is
    #                 not converted (its bytecode is not its source's)

    @tf.function
    def f(x, n):
        ta = ragged_loop(x, n, size=n if fixed else 0, dynamic_size=not fixed)
        c, r = ta.concat(), ta.read(1)
        seen.append([c.shape, r.shape, ta.size().shape, repr(ta.element_shape)])
        return c, r, ta.size()

    @tf.function
    def stacked(x, n):
        return ragged_loop(x, n, size=n if fixed else 0, dynamic_size=not fixed).stack()

    c, r, size = f(tf.constant(2.0), tf.constant(3))
    assert seen == [[[None], [None], [], "TensorShape(None)"]]
    assert c.numpy().tolist() == [2.0, 4.0, 4.0, 6.0, 6.0, 6.0] and r.numpy().tolist() == [4.0, 4.0]
    assert int(size) == 3
    with pytest.raises(InvalidArgumentError, match=r"PartialTensorShape: Incompatible shapes "
                                                   r"during merge: \[1\] vs\. \[2\].*ta\.stack"
                                                   r"|return ragged_loop\(.*\)\.stack\(\)"):
        stacked(tf.constant(2.0), tf.constant(3))
    assert stacked(tf.constant(2.0), tf.constant(1)).numpy().tolist() == [[2.0]]


@pytest.mark.parametrize("fixed", [False, True], ids=["dynamic_size", "size_tensor"])
def test_loop_gradients_outside_inside_and_second_order(fixed):
    """TF 2.21, x = 2, n = 3: a tape outside gives d concat/dx 14, d read(1)/dx 4,
    d sum(concat^2)/dx 144; inside the function sum(concat^2) + sum(read(2)) is 162 with
    gradient 153; second order of sum(concat^3) through the function: 784, 1176, 1176."""
    def body(x, n):
        ta = ragged_loop(x, n, size=n if fixed else 0, dynamic_size=not fixed)
        return ta.concat(), ta.read(1)

    @tf.function
    def inside(x, n):
        with tf.GradientTape() as t:
            t.watch(x)
            ta = ragged_loop(x, n, size=n if fixed else 0, dynamic_size=not fixed)
            y = tf.reduce_sum(ta.concat() ** 2) + tf.reduce_sum(ta.read(2))
        return y, t.gradient(y, x)

    f = tf.function(body)
    x, n = tf.constant(2.0), tf.constant(3)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        c, r = f(x, n)
        y = tf.reduce_sum(c * c)
    assert [float(t.gradient(v, x)) for v in (c, r, y)] == [14.0, 4.0, 144.0]
    assert [float(v) for v in inside(x, n)] == [162.0, 153.0]
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            c, _ = f(x, n)
            y = tf.reduce_sum(c * c * c)
        g = t1.gradient(y, x)
    assert [float(y), float(g), float(t2.gradient(g, x))] == [784.0, 1176.0, 1176.0]


def test_a_value_written_before_the_loop_gets_zeros_not_none():
    """TF 2.21 (a = [1, 2] at 0, ones([i + 1]) * b at i + 1, n = 2, tape inside): d read(1)/
    [a, b] is [[0, 0], 1] (zeros: the list connects them), d concat/[a, b] [[1, 1], 3]."""
    @tf.function
    def f(a, b, n):
        with tf.GradientTape(persistent=True) as t:
            t.watch([a, b])
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
            ta = ta.write(0, a)
            for i in tf.range(n):
                ta = ta.write(i + 1, tf.ones([i + 1]) * b)
            r, c = ta.read(1), ta.concat()
        return t.gradient(r, [a, b]), t.gradient(c, [a, b])

    (ra, rb), (ca, cb) = f(tf.constant([1.0, 2.0]), tf.constant(3.0), tf.constant(2))
    assert [ra.numpy().tolist(), float(rb)] == [[0.0, 0.0], 1.0]
    assert [ca.numpy().tolist(), float(cb)] == [[1.0, 1.0], 3.0]


def test_infer_shape_true_with_sizes_known_at_run_time():
    """TF 2.21: ones([i + 1]) * x written with infer_shape=True (or element_shape=[None])
    makes the element shape (None,); concat (None,), read (None,), gather (2, None), stack
    (None, None) statically; concat of x = 2, n = 3 is six 2s, read(1) [2, 2]."""
    seen = []

    @tf.function
    def f(x, n, es):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=es)
        seen.append(repr(ta.element_shape))
        for i in tf.range(n):
            ta = ta.write(i, tf.ones([i + 1]) * x)
        seen.append([ta.concat().shape, ta.read(1).shape, ta.gather([0, 1]).shape,
                     ta.stack().shape, repr(ta.element_shape)])
        return ta.concat(), ta.read(1)

    for es in (None, [None]):
        c, r = f(tf.constant(2.0), tf.constant(3), es)
        assert c.numpy().tolist() == [2.0] * 6 and r.numpy().tolist() == [2.0, 2.0]
    after = [[None], [None], [2, None], [None, None], "TensorShape([None])"]
    assert seen == ["TensorShape(None)", after, "TensorShape([None])", after]


def test_uninitialized_elements_and_tensorlist_errors_name_the_line():
    """TF 2.21 (size 5, elements written at 0..2; InvalidArgumentError when the program runs):
    of one shape [2], read(4) is zeros [0, 0], stack [[1, 1], [2, 2], [3, 3], [0, 0], [0, 0]],
    concat [1, 1, 2, 2, 3, 3, 0, 0, 0, 0]; of shapes [1], [2], [3], read(4) is
    "PartialTensorShape: Incompatible shapes during merge: [1] vs. [2]" and concat "List
    contains uninitialized tensor at index 3 but leading_dims has only 0 elements."; read(5)
    of 3 is "Trying to access element 5 in a list with 3 elements."; a write past a fixed
    size 2 "Trying to modify element 2 in a list with 2 elements."."""
    def one_shape(n):
        ta = tf.TensorArray(tf.float32, size=5, infer_shape=False)
        for i in tf.range(n):
            ta = ta.write(i, tf.ones([2]) * tf.cast(i + 1, tf.float32))
        return ta.read(4), ta.stack(), ta.concat()

    def unwritten_read(n):
        return ragged_loop(1.0, n, size=5, dynamic_size=False).read(4)

    def unwritten_concat(n):
        return ragged_loop(1.0, n, size=5, dynamic_size=False).concat()

    def past_the_end(n):
        return ragged_loop(1.0, n).read(5)

    def past_a_fixed_size(n):
        ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
        for i in tf.range(n):
            ta = ta.write(i, tf.ones([i + 1]))
        return ta.concat()

    n = tf.constant(3)
    r, s, c = tf.function(one_shape)(n)
    assert r.numpy().tolist() == [0.0, 0.0] and c.numpy().tolist() == [1, 1, 2, 2, 3, 3, 0, 0, 0, 0]
    assert s.numpy().tolist() == [[1, 1], [2, 2], [3, 3], [0, 0], [0, 0]]
    cases = [(unwritten_read, r"Incompatible shapes during merge: \[1\] vs\. \[2\].*read\(4\)"),
             (unwritten_concat, r"List contains uninitialized tensor at index 3 but leading_dims "
                                r"has only 0 elements\..*concat\(\)"),
             (past_the_end, r"Trying to access element 5 in a list with 3 elements\..*read\(5\)"),
             (past_a_fixed_size, r"Trying to modify element 2 in a list with 2 elements\..*"
                                 r"ta = ta\.write\(i, tf\.ones")]
    for fn, text in cases:
        with pytest.raises(InvalidArgumentError, match=text):
            tf.function(fn)(n)


def test_concat_rules():
    """TF 2.21 (n = 3): elements ones([i, 2]) * (i + 1) concat to [[2, 2], [3, 3], [3, 3]],
    ones([i]) * (i + 1) to [2, 3, 3], ones([i + 1, 2]) to six rows; ones([2, i + 1]) is
    InvalidArgumentError "PartialTensorShape: Incompatible shapes during merge: [1] vs. [2]";
    scalars "Concat saw a scalar shape at index 0 but requires at least vectors."."""
    def loop(n, shape, x=1.0):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
        for i in tf.range(n):
            ta = ta.write(i, tf.ones(shape(i)) * x * tf.cast(i + 1, tf.float32))
        return ta.concat()

    def leading(n):
        return loop(n, lambda i: [i, 2])

    def vectors(n):
        return loop(n, lambda i: [i])

    def rows(n):
        return loop(n, lambda i: [i + 1, 2])

    def trailing(n):
        return loop(n, lambda i: [2, i + 1])

    def scalars(n):
        return loop(n, lambda i: [])

    n = tf.constant(3)
    assert tf.function(leading)(n).numpy().tolist() == [[2.0, 2.0], [3.0, 3.0], [3.0, 3.0]]
    assert tf.function(vectors)(n).numpy().tolist() == [2.0, 3.0, 3.0]
    assert tf.function(rows)(n).shape == [6, 2]
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes during merge: \[1\] "
                                                   r"vs\. \[2\]"):
        tf.function(trailing)(n)
    with pytest.raises(InvalidArgumentError, match="Concat saw a scalar shape at index 0 but "
                                                   "requires at least vectors."):
        tf.function(scalars)(n)


def test_gather_overwrite_and_never_written():
    """TF 2.21 (n = 3 unless said): gather([1, 1]) [[2, 2], [2, 2]]; gather([0, 2]) is
    "PartialTensorShape: Incompatible shapes during merge: [1] vs. [3]", gather([1, 7])
    "Trying to gather element 7 in a list with 3 elements."; overwriting element 2 with [9]
    gives concat [1, 2, 2, 9], and element 1 with [8] too makes stack [[1], [8], [9]];
    n = 0: size 0, stack "Tried to stack elements of an empty list with non-fully-defined
    element_shape: <unknown>", concat "All except the first dimension must be fully defined
    when concating an empty tensor list. element_shape: <unknown>"."""
    def gather_same(n):
        return ragged_loop(1.0, n).gather([1, 1])

    def gather_differ(n):
        return ragged_loop(1.0, n).gather([0, 2])

    def gather_oob(n):
        return ragged_loop(1.0, n).gather([1, 7])

    def overwritten(n):
        ta = ragged_loop(1.0, n).write(2, tf.ones([1]) * 9.0)
        return ta.concat(), ta.write(1, tf.ones([1]) * 8.0).stack()

    def empty(n):
        ta = ragged_loop(1.0, n)
        return ta.size()

    def empty_stack(n):
        return ragged_loop(1.0, n).stack()

    def empty_concat(n):
        return ragged_loop(1.0, n).concat()

    n = tf.constant(3)
    assert tf.function(gather_same)(n).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(InvalidArgumentError, match=r"merge: \[1\] vs\. \[3\]"):
        tf.function(gather_differ)(n)
    with pytest.raises(InvalidArgumentError, match="Trying to gather element 7 in a list with 3 "
                                                   "elements."):
        tf.function(gather_oob)(n)
    c, s = tf.function(overwritten)(n)
    assert c.numpy().tolist() == [1.0, 2.0, 2.0, 9.0]
    assert s.numpy().tolist() == [[1.0], [8.0], [9.0]]
    assert int(tf.function(empty)(tf.constant(0))) == 0
    with pytest.raises(InvalidArgumentError, match="Tried to stack elements of an empty list with "
                                                   "non-fully-defined element_shape: <unknown>"):
        tf.function(empty_stack)(tf.constant(0))
    with pytest.raises(InvalidArgumentError, match="All except the first dimension must be fully "
                                                   "defined when concating an empty tensor list. "
                                                   "element_shape: <unknown>"):
        tf.function(empty_concat)(tf.constant(0))


def test_never_written_in_a_function_raises_tensorflows_errors():
    """TF 2.21, a TensorArray of size 2 never written (InvalidArgumentError): read "Trying to
    read an uninitialized tensor but element_shape is not fully defined: <unknown> and no
    list element is set.", stack "Tried to stack list which only contains uninitialized
    tensors and has a non-fully-defined element_shape: <unknown>" ("[?]" for element_shape
    [None]), concat "Trying to concat list with only uninitialized tensors but
    element_shape_except_first_dim is not fully defined: <unknown>"; element_shape [None, 2]:
    concat "List contains uninitialized tensor at index 0 but leading_dims has only 0
    elements.", and of size 0 a [0, 2] tensor."""
    cases = [(lambda: tf.TensorArray(tf.float32, size=2).read(0),
              "Trying to read an uninitialized tensor but element_shape is not fully defined: "
              "<unknown> and no list element is set."),
             (lambda: tf.TensorArray(tf.float32, size=2).stack(),
              "Tried to stack list which only contains uninitialized tensors and has a "
              "non-fully-defined element_shape: <unknown>"),
             (lambda: tf.TensorArray(tf.float32, size=2, element_shape=[None]).stack(),
              r"non-fully-defined element_shape: \[\?\]"),
             (lambda: tf.TensorArray(tf.float32, size=2).concat(),
              "Trying to concat list with only uninitialized tensors but "
              "element_shape_except_first_dim is not fully defined: <unknown>"),
             (lambda: tf.TensorArray(tf.float32, size=2, element_shape=[None, 2]).concat(),
              "List contains uninitialized tensor at index 0 but leading_dims has only 0 "
              "elements.")]
    for fn, text in cases:
        with pytest.raises(InvalidArgumentError, match=text):
            tf.function(fn)()
    empty = tf.function(lambda: tf.TensorArray(tf.float32, size=0, element_shape=[None, 2])
                        .concat())()
    assert empty.shape == [0, 2]


def test_split_and_python_indices_stay_static():
    """TF 2.21: split(range(6), [1, 2, 3]) reads [1, 2] at 1 and concatenates back to range(6),
    and a later loop reading each element sums to 15. Known shapes at Python indices give
    static shapes here (TensorFlow's are <unknown>)."""
    seen = []

    @tf.function
    def split(x):
        ta = tf.TensorArray(tf.float32, size=3).split(x, [1, 2, 3])
        seen.append([ta.read(1).shape, ta.concat().shape, repr(ta.element_shape)])
        return ta.read(1), ta.concat()

    @tf.function
    def summed(x, n):
        ta = tf.TensorArray(tf.float32, size=3).split(x, [1, 2, 3])
        s = tf.constant(0.0)
        for i in tf.range(n):
            s += tf.reduce_sum(ta.read(i))
        return s

    x = tf.range(6, dtype=tf.float32)
    r, c = split(x)
    assert seen == [[[2], [6], "TensorShape(None)"]]
    assert r.numpy().tolist() == [1.0, 2.0] and c.numpy().tolist() == list(range(6))
    assert float(summed(x, tf.constant(3))) == 15.0


def test_while_loop_nested_loops_a_reading_loop_and_a_data_dependent_stop():
    """TF 2.21: tf.while_loop carrying the array (x = 2, n = 3): six 2s, size 3; elements made
    by an inner loop (i + 1 rows x * (j + 1), x = [1, 2]) concat to [[1, 2], [1, 2], [2, 4],
    [1, 2], [2, 4], [3, 6]]; a second loop summing read(i)^2: 144, gradient 144; a `while`
    writing ones([i + 1]) * 1.5 until the sum reaches 10: ten 1.5s, d sum(c^2)/dx 30."""
    @tf.function
    def while_loop(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
        _, ta = tf.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, tf.ones([i + 1]) * x)),
                              [tf.constant(0), ta])
        return ta.concat(), ta.size()

    @tf.function
    def nested(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
        for i in tf.range(n):
            inner = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for j in tf.range(i + 1):
                inner = inner.write(j, x * tf.cast(j + 1, tf.float32))
            ta = ta.write(i, inner.stack())
        return ta.concat()

    @tf.function
    def reader(x, n):
        ta = ragged_loop(x, n)
        s = tf.constant(0.0)
        for i in tf.range(ta.size()):
            s += tf.reduce_sum(ta.read(i) ** 2)
        return s

    @tf.function
    def until(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
        i, s = tf.constant(0), tf.constant(0.0)
        while s < 10.0:
            e = tf.ones([i + 1]) * x
            ta = ta.write(i, e)
            s += tf.reduce_sum(e)
            i += 1
        return ta.concat()

    c, size = while_loop(tf.constant(2.0), tf.constant(3))
    assert c.numpy().tolist() == [2.0] * 6 and int(size) == 3
    assert nested(tf.constant([1.0, 2.0]), tf.constant(3)).numpy().tolist() == \
        [[1, 2], [1, 2], [2, 4], [1, 2], [2, 4], [3, 6]]
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = reader(x, tf.constant(3))
    assert [float(y), float(t.gradient(y, x))] == [144.0, 144.0]
    x = tf.constant(1.5)
    with tf.GradientTape() as t:
        t.watch(x)
        c = until(x)
        y = tf.reduce_sum(c * c)
    assert c.numpy().tolist() == [1.5] * 10 and float(t.gradient(y, x)) == 30.0


def test_jacobian_through_a_ragged_loop():
    """TF 2.21 (experimental_use_pfor=False; its pfor has no rule for TensorListSplit):
    d concat/dx for x = [2] is [[1], [2], [2], [3], [3], [3]]."""
    def concat(x, n):
        return ragged_loop(x, n).concat()
    f = tf.function(concat)
    x = tf.constant([2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        c = f(x, tf.constant(3))
    for pfor in (False, True):
        jac = t.jacobian(c, x, experimental_use_pfor=pfor)
        assert jac.numpy().tolist() == [[1.0], [2.0], [2.0], [3.0], [3.0], [3.0]]


def test_the_padded_list_holds_one_element_rank():
    """TensorFlow's TensorList takes elements of any rank (TF 2.21 reads [2, 2] written after
    [1]-shaped ones); here a padded list keeps one rank, and says so."""
    @tf.function
    def f(n):
        ta = ragged_loop(1.0, n).write(3, tf.ones([2, 2]))
        return ta.read(3)
    with pytest.raises(ValueError, match=r"elements of rank 1 and 2 inside a function .*"
                                         r"keeps one element rank"):
        f(tf.constant(3))


def test_gradient_equals_the_eager_loop_and_finite_differences():
    """The same program eagerly (a Python list) and as a function (the padded list), first
    and second order, against central finite differences in float64."""
    def program(x, n):
        ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True, infer_shape=False)
        for i in tf.range(n):
            ta = ta.write(i, tf.sin(x[:1] * tf.cast(i + 1, tf.float64)) * tf.ones(
                [i + 1], tf.float64))
        c = ta.concat()
        return tf.reduce_sum(c * c) + tf.reduce_sum(ta.read(n - 1) * x[1])

    f = tf.function(program)
    x0, n = np.array([0.3, -0.7]), tf.constant(3)

    def grads(fn, x):
        x = tf.constant(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = fn(x, n)
            g = t1.gradient(y, x)
            s = tf.reduce_sum(g * g)
        return float(y), g.numpy(), t2.gradient(s, x).numpy()

    eager, traced = grads(program, x0), grads(f, x0)
    np.testing.assert_allclose(traced[0], eager[0], rtol=1e-12)
    np.testing.assert_allclose(traced[1], eager[1], rtol=1e-12)
    np.testing.assert_allclose(traced[2], eager[2], rtol=1e-10)
    eps = 1e-6
    fd = [(grads(f, x0 + eps * e)[0] - grads(f, x0 - eps * e)[0]) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(traced[1], fd, rtol=1e-6)


def test_a_size_given_as_a_tensor():
    """TF 2.21: TensorArray(size=n) of a tensor n = 3 written with x * i: stack [[0, 0], [1, 2],
    [2, 4]], size 3, d sum(stack^2)/dx [10, 20]; written at 0 only (n = 2), stack [[1, 2],
    [0, 0]] of static shape [None, 2]."""
    def written(x, n):
        ta = tf.TensorArray(tf.float32, size=n)
        for i in tf.range(n):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        return ta.stack(), ta.size()

    seen = []

    def first(x, n):
        s = tf.TensorArray(tf.float32, size=n).write(0, x).stack()
        seen.append(s.shape)
        return s

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        s, k = tf.function(written)(x, tf.constant(3))
        y = tf.reduce_sum(s * s)
    assert s.numpy().tolist() == [[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]] and int(k) == 3
    assert t.gradient(y, x).numpy().tolist() == [10.0, 20.0]
    assert tf.function(first)(x, tf.constant(2)).numpy().tolist() == [[1.0, 2.0], [0.0, 0.0]]
    assert seen == [[None, 2]]
