"""tf.debugging.set_log_device_placement (runtime/placement_log.py): each eager op's line and a
function's placement listing plus its per-call line, in TensorFlow 2.21's words (asked of
TensorFlow: its lines are quoted in the comments), and nothing when off."""
import re

import pytest

import tapeflow as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
# absl's header on TensorFlow's stderr lines: "I0000 00:00:<seconds> <thread> <file>:<line>] "
HEADER = re.compile(r"I0000 00:00:\d+\.\d{6} +\d+ placement_log\.py:\d+\] ")


@pytest.fixture(autouse=True)
def _logging_off_after():
    yield
    tf.debugging.set_log_device_placement(False)


def _messages(err):
    """The stderr lines' messages, each line checked to carry the header."""
    lines = [ln for ln in err.splitlines() if ln]
    assert all(HEADER.match(ln) for ln in lines), lines
    return [HEADER.sub("", ln) for ln in lines]


# TF 2.21: get_log_device_placement() is False at start; set_log_device_placement(v) then
# get_log_device_placement() gives, per v: None -> False, 0 -> False, 1 -> True, 2 -> True,
# np.True_ -> True, np.int64(1) -> True, False -> False; 1.5, [], [1], "", "yes": TypeError.
SETTINGS = [(None, False), (0, False), (1, True), (2, True), (True, True), (False, False)]


def test_the_switch_takes_what_tensorflow_takes():
    np = pytest.importorskip("numpy")
    assert tf.debugging.get_log_device_placement() is False
    for value, expected in SETTINGS + [(np.True_, True), (np.int64(1), True)]:
        assert tf.debugging.set_log_device_placement(value) is None
        assert tf.debugging.get_log_device_placement() is expected, value
    tf.debugging.set_log_device_placement(False)
    for bad in (1.5, [], [1], "", "yes"):
        with pytest.raises(TypeError, match="set_log_device_placement"):
            tf.debugging.set_log_device_placement(bad)
    assert tf.debugging.get_log_device_placement() is False   # unchanged by a refused value


def test_eager_ops_log_one_line_each_on_stderr(capsys):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    tf.debugging.set_log_device_placement(True)
    tf.sin(x)
    tf.reduce_sum(x)
    tf.sin(x)
    out, err = capsys.readouterr()
    # TF 2.21 (stderr, absl header from execute.cc), once per execution, for these calls:
    #   Executing op Sin in device /job:localhost/replica:0/task:0/device:CPU:0
    #   Executing op Sum in device /job:localhost/replica:0/task:0/device:CPU:0
    #   Executing op Sin in device /job:localhost/replica:0/task:0/device:CPU:0
    # (plus, the first time it builds a kernel for an op, its placer's lines for the one-op
    # function it wraps the op in: not logged by tapeflow, which has no such function.)
    assert _messages(err) == [f"Executing op Sin in device {CPU}",
                              f"Executing op Sum in device {CPU}",
                              f"Executing op Sin in device {CPU}"]
    assert out == ""
    tf.debugging.set_log_device_placement(False)
    tf.sin(x)
    assert capsys.readouterr() == ("", "")


def test_variable_ops_log_tensorflows_lines(capsys):
    tf.debugging.set_log_device_placement(True)
    v = tf.Variable([1.0, 2.0])
    v.assign([2.0, 3.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([1.0, 1.0])
    v * tf.constant([2.0, 2.0])
    _, err = capsys.readouterr()
    # TF 2.21's "Executing op" lines for the same calls, less the _EagerConst it runs to
    # convert each Python list (tapeflow converts without an op)
    ops = ["VarHandleOp", "AssignVariableOp", "AssignVariableOp", "AssignAddVariableOp",
           "AssignSubVariableOp", "ReadVariableOp", "Mul"]
    assert _messages(err) == [f"Executing op {op} in device {CPU}" for op in ops]


def test_a_function_logs_its_placement_once_and_each_call(capsys, numpy_backend):
    @tf.function
    def scaled_sine(x):
        return tf.sin(x) * 2.0, tf.reduce_sum(x)

    x = tf.constant([1.0, 2.0])
    scaled_sine(x)
    scaled_sine(x)                          # the generated fast path serves calls from here
    assert capsys.readouterr() == ("", "")
    tf.debugging.set_log_device_placement(True)
    scaled_sine(x)
    scaled_sine(x)
    out, err = capsys.readouterr()
    # TF 2.21 for a function called twice: on its first call its placer prints each node,
    # on stdout and (with a header) on stderr, arguments by their names and results as
    # identity_RetVal, identity_1_RetVal; for this function:
    #   x: (_Arg), Sin: (Sin), mul: (Mul), Sum: (Sum), Identity: (Identity),
    #   Identity_1: (Identity), identity_RetVal: (_Retval), identity_1_RetVal: (_Retval),
    #   mul/y: (Const), Const: (Const)          (each followed by ": " + the device)
    # then per call, on stderr: "Executing op __inference_scaled_sine_<n> in device ...".
    # tapeflow's graph names its nodes by op type (FuncGraph.get_operations) and has no
    # Identity nodes for the results.
    listing = [f"x: (_Arg): {CPU}", f"Sin: (Sin): {CPU}", f"Const: (Const): {CPU}",
               f"Mul: (Mul): {CPU}", f"Sum: (Sum): {CPU}",
               f"identity_RetVal: (_Retval): {CPU}", f"identity_1_RetVal: (_Retval): {CPU}"]
    assert out.splitlines() == listing
    messages = _messages(err)
    call = messages[-1]
    assert re.fullmatch(rf"Executing op __inference_scaled_sine_\d+ in device {CPU}", call)
    assert messages == listing + [call, call]
    tf.debugging.set_log_device_placement(False)
    scaled_sine(x)
    assert capsys.readouterr() == ("", "")


def test_a_function_traced_inside_another_is_part_of_its_listing(capsys, numpy_backend):
    @tf.function
    def inner(x):
        return tf.sin(x)

    @tf.function
    def outer(x):
        return inner(x) * 3.0

    tf.debugging.set_log_device_placement(True)
    outer(tf.constant([1.0]))
    out, err = capsys.readouterr()
    # TF 2.21 lists the inner function's nodes in the outer one's placement
    # (PartitionedCall/Sin: (Sin)) and logs one call, the outer's.
    assert f"Sin: (Sin): {CPU}" in out.splitlines()
    calls = [m for m in _messages(err) if m.startswith("Executing op")]
    assert len(calls) == 1 and calls[0].startswith("Executing op __inference_outer_")
