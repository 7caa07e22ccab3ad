"""tf.errors (classes, codes, constructors) and tf.nest (TensorFlow's ordering rules and
messages): the facts are TensorFlow 2.21's."""
import collections
import pickle

import pytest

import tapeflow as tf

# TF 2.21: tf.errors' codes
CODES = {"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
         "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
         "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
         "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
CLASSES = {"CancelledError": 1, "UnknownError": 2, "InvalidArgumentError": 3,
           "DeadlineExceededError": 4, "NotFoundError": 5, "AlreadyExistsError": 6,
           "PermissionDeniedError": 7, "ResourceExhaustedError": 8,
           "FailedPreconditionError": 9, "AbortedError": 10, "OutOfRangeError": 11,
           "UnimplementedError": 12, "InternalError": 13, "UnavailableError": 14,
           "DataLossError": 15, "UnauthenticatedError": 16}


def test_error_codes():
    assert {n: getattr(tf.errors, n) for n in CODES} == CODES


@pytest.mark.parametrize("name, code", sorted(CLASSES.items()))
def test_error_classes_take_tensorflows_constructor(name, code):
    cls = getattr(tf.errors, name)
    assert issubclass(cls, tf.errors.OpError)
    e = cls(None, None, "msg")
    assert (str(e), e.message, e.error_code, e.node_def, e.op, e.experimental_payloads) == \
        ("msg", "msg", code, None, None, {})
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cls and again.message == "msg" and again.error_code == code
    with pytest.raises(TypeError):
        cls(None, None, "m", extra_keyword=1)


def test_op_error_and_the_short_form_tapeflow_raises():
    e = tf.errors.OpError(None, None, "m", 3)
    assert (str(e), e.error_code) == ("m", 3)
    e = tf.errors.InvalidArgumentError("bad shape")
    assert (str(e), e.message, e.error_code) == ("bad shape", "bad shape", 3)
    assert isinstance(e, ValueError) and isinstance(tf.errors.OutOfRangeError("x"), IndexError)


def test_operator_not_allowed_in_graph_is_a_type_error_raised_by_bool_of_a_traced_tensor():
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)

    @tf.function
    def f(x):
        return float(x)

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        f(tf.constant(1.0))


P = collections.namedtuple("P", "b a")


def test_nest_flatten_and_pack_sort_mapping_keys():
    s = {"b": [1, (2, 3)], "a": P(b=4, a={"z": 5, "y": 6})}
    assert tf.nest.flatten(s) == [4, 6, 5, 1, 2, 3]          # TF 2.21
    assert tf.nest.pack_sequence_as(s, list("abcdef")) == \
        {"b": ["d", ("e", "f")], "a": P(b="a", a={"z": "c", "y": "b"})}
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tf.nest.flatten(od) == [2, 1]
    packed = tf.nest.pack_sequence_as(od, [10, 20])
    assert type(packed) is collections.OrderedDict and list(packed.items()) == [("b", 20), ("a", 10)]
    assert (tf.nest.flatten(None), tf.nest.flatten(3), tf.nest.flatten([]), tf.nest.flatten({}),
            tf.nest.flatten("abc"), tf.nest.flatten({"a": {1, 2}})) == \
        ([None], [3], [], [], ["abc"], [{1, 2}])
    assert tf.nest.flatten({"a": 1}.keys()) == ["a"]
    with pytest.raises(TypeError, match="not supported between"):
        tf.nest.flatten({"a": 1, 2: 3})


def test_nest_is_nested_and_map_structure():
    assert [tf.nest.is_nested(x) for x in ([], 3, {}, "ab", P(1, 2), tf.constant([1, 2]))] == \
        [True, False, True, False, True, False]
    assert tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert tf.nest.map_structure(lambda *x: sum(x), {"a": 1, "b": 2}, {"b": 3, "a": 4}) == \
        {"a": 5, "b": 5}
    assert tf.nest.map_structure(lambda x: x, [1, None]) == [1, None]
    t = tf.constant([1, 2])
    assert tf.nest.flatten(t)[0] is t


ERRORS = [  # (call, exception type, message start) from TF 2.21
    (lambda: tf.nest.pack_sequence_as([1, 2], [1]), ValueError,
     "Could not pack sequence. Structure had 2 atoms, but flat_sequence had 1 items.  "
     "Structure: [1, 2], flat_sequence: [1]."),
    (lambda: tf.nest.pack_sequence_as([1, 2], 5), TypeError,
     "Attempted to pack value:\n  5\ninto a structure, but found incompatible type "
     "`<class 'int'>` instead."),
    (lambda: tf.nest.pack_sequence_as(1, [1, 2]), ValueError,
     "The target structure is of type `<class 'int'>`\n  1\nHowever the input is a sequence "
     "(<class 'list'>) of length 2.\n  [1, 2]\nnest cannot guarantee that it is safe to map one "
     "to the other."),
    (lambda: tf.nest.map_structure(lambda x: x, [1], foo=1), ValueError,
     "Only valid keyword arguments are `check_types` and `expand_composites`, not: `foo`"),
    (lambda: tf.nest.map_structure(lambda x: x), ValueError, "Must provide at least one structure"),
    (lambda: tf.nest.assert_same_structure([1, [2, 3]], [1, [2]]), ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=list "
     "str=[1, [2, 3]]\n\nSecond structure: type=list str=[1, [2]]\n\nMore specifically: The two "
     "structures don't have the same number of elements. First structure: type=list str=[2, 3]. "
     "Second structure: type=list str=[2]\nEntire first structure:\n[., [., .]]\nEntire second "
     "structure:\n[., [.]]"),
    (lambda: tf.nest.assert_same_structure([1, (2,)], [1, [2]]), TypeError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=list "
     "str=[1, (2,)]\n\nSecond structure: type=list str=[1, [2]]\n\nMore specifically: The two "
     "namedtuples don't have the same sequence type. First structure type=tuple str=(2,) has "
     "type tuple, while second structure type=list str=[2] has type list\nEntire first "
     "structure:\n[., (.,)]\nEntire second structure:\n[., [.]]"),
    (lambda: tf.nest.assert_same_structure({"a": 1}, {"b": 1}), ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=dict "
     "str={'a': 1}\n\nSecond structure: type=dict str={'b': 1}\n\nMore specifically: The two "
     "dictionaries don't have the same set of keys. First structure has keys type=list "
     "str=['a'], while second structure has keys type=list str=['b']\nEntire first "
     "structure:\n{'a': .}\nEntire second structure:\n{'b': .}"),
    (lambda: tf.nest.assert_same_structure(1, [1]), ValueError,
     "The two structures don't have the same nested structure.\n\nFirst structure: type=int "
     "str=1\n\nSecond structure: type=list str=[1]\n\nMore specifically: Substructure "
     "\"type=list str=[1]\" is a sequence, while substructure \"type=int str=1\" is not\nEntire "
     "first structure:\n.\nEntire second structure:\n[.]"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_nest_errors_are_tensorflows(i):
    call, kind, message = ERRORS[i]
    with pytest.raises(kind) as e:
        call()
    assert str(e.value) == message


def test_assert_same_structure_passes():
    tf.nest.assert_same_structure([1, (2,)], [1, [2]], check_types=False)
    tf.nest.assert_same_structure({"a": 1}, collections.OrderedDict(a=1))
    tf.nest.assert_same_structure(P(1, 2), collections.namedtuple("P", "b a")(1, 2))
    tf.nest.assert_same_structure("ab", "cde")
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure((1, 2), collections.namedtuple("P", "a b")(1, 2))
