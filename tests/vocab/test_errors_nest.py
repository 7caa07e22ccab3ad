"""tf.errors (every class and code, both constructions) and tf.nest with TensorFlow 2.21's rules
(the expected values are what TF 2.21 printed for the same calls)."""
import collections

import pytest

import tapeflow as tf

CODES = {"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
         "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
         "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
         "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
CLASSES = {"CancelledError": 1, "UnknownError": 2, "InvalidArgumentError": 3,
           "DeadlineExceededError": 4, "NotFoundError": 5, "AlreadyExistsError": 6,
           "PermissionDeniedError": 7, "ResourceExhaustedError": 8, "FailedPreconditionError": 9,
           "AbortedError": 10, "OutOfRangeError": 11, "UnimplementedError": 12,
           "InternalError": 13, "UnavailableError": 14, "DataLossError": 15,
           "UnauthenticatedError": 16}


def test_every_error_class_and_code():
    for name, code in CODES.items():
        assert getattr(tf.errors, name) == code
    for name, code in CLASSES.items():
        cls = getattr(tf.errors, name)
        e = cls(None, None, "went wrong")        # TensorFlow's construction
        assert isinstance(e, tf.errors.OpError)
        assert (e.error_code, e.message, str(e), e.op, e.node_def) == (code, "went wrong", "went wrong", None, None)
        assert cls("short").message == "short"   # tapeflow's own raise sites
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)
    with pytest.raises(tf.errors.OpError):
        tf.gather_nd(tf.constant([1, 2]), [[5]])


P = collections.namedtuple("P", "b a")


def test_nest_flatten_and_pack_in_tensorflows_order():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    s = {"b": [1, (2, 3)], "a": P(b=4, a=5), "c": None, "d": od, "e": "str"}
    assert tf.nest.flatten(s) == [4, 5, 1, 2, 3, None, 2, 1, "str"]
    packed = tf.nest.pack_sequence_as(s, list(range(9)))
    assert packed == {"b": [2, (3, 4)], "a": P(b=0, a=1), "c": 5,
                      "d": collections.OrderedDict([("z", 7), ("a", 6)]), "e": 8}
    assert list(packed["d"]) == ["z", "a"] and type(packed["a"]) is P
    assert tf.nest.flatten(None) == [None] and tf.nest.flatten(3) == [3]
    assert [tf.nest.is_nested(x) for x in ([], "ab", {}, P(1, 2), None)] == [True, False, True, True, False]
    assert tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert tf.nest.map_structure(lambda x: x * 2, od) == collections.OrderedDict([("z", 2), ("a", 4)])
    t = tf.nest.flatten([tf.constant(1.0), {"k": tf.constant([2.0])}])
    assert len(t) == 2 and t[1].shape == (1,)


def test_nest_errors_are_tensorflows():
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.assert_same_structure([1, 2], [1, [2]])
    with pytest.raises(TypeError, match="same nested structure"):
        tf.nest.assert_same_structure([1, 2], (1, 2))
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="same number of elements"):
        tf.nest.assert_same_structure([1], [1, 2])
    with pytest.raises(ValueError, match="Structure had 2 atoms, but flat_sequence had 1 items"):
        tf.nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError):
        tf.nest.map_structure(lambda x, y: x, [1], [1, 2])
    with pytest.raises(TypeError, match="'<' not supported"):
        tf.nest.flatten({1: 1, "a": 2})
