"""tf.TensorShape, known and of unknown rank (``TensorShape(None)``).

Every expected value and error text here is TensorFlow 2.21's answer, asked of TensorFlow
itself and written down as a fact.
"""
import copy
import pickle

import pytest

import tapeflow as tf

U = tf.TensorShape(None)


def test_unknown_rank_prints_and_counts_like_tensorflow():
    """TF 2.21: repr "TensorShape(None)", str "<unknown>", rank/ndims/dims None,
    num_elements None, is_fully_defined False."""
    assert repr(U) == "TensorShape(None)" and str(U) == "<unknown>"
    assert U.rank is None and U.ndims is None and U.dims is None
    assert U.num_elements() is None and U.is_fully_defined() is False
    assert repr(tf.TensorShape(U)) == "TensorShape(None)"
    # TF 2.21: known shapes print as before; is_fully_defined needs every dim
    assert (repr(tf.TensorShape([])), str(tf.TensorShape([])), str(tf.TensorShape([None, 3]))) \
        == ("TensorShape([])", "()", "(None, 3)")
    assert tf.TensorShape([None, 3]).is_fully_defined() is False
    assert tf.TensorShape([2, 3]).is_fully_defined() and tf.TensorShape([]).is_fully_defined()
    assert tf.TensorShape([1, None]).dims == [1, None]      # TF: Dimension(1), Dimension(None)
    assert tf.TensorShape(3) == [3]                          # TF 2.21: TensorShape([3])


def test_unknown_rank_has_no_list_length_or_iteration():
    """TF 2.21: each raises ValueError with these texts."""
    with pytest.raises(ValueError,
                       match=r"^as_list\(\) is not defined on an unknown TensorShape\.$"):
        U.as_list()
    with pytest.raises(ValueError, match="^Cannot take the length of shape with unknown rank.$"):
        len(U)
    with pytest.raises(ValueError, match="^Cannot iterate over a shape with unknown rank.$"):
        list(U)
    with pytest.raises(ValueError, match="^Cannot iterate over a shape with unknown rank.$"):
        tuple(U)
    with pytest.raises(ValueError, match="^Cannot iterate over a shape with unknown rank.$"):
        None in U   # noqa: B015


def test_unknown_rank_items_and_slices():
    """TF 2.21: an index gives None; a slice gives stop - start unknown dims when both bounds
    are known and non-negative, else TensorShape(None); a step raises."""
    assert U[0] is None and U[-1] is None
    assert repr(U[1:]) == "TensorShape(None)" and repr(U[:]) == "TensorShape(None)"
    assert repr(U[:2]) == repr(U[1:3]) == "TensorShape([None, None])"
    assert repr(U[-2:]) == "TensorShape(None)" and repr(U[:-1]) == "TensorShape(None)"
    assert repr(U[0:0]) == "TensorShape([])" and repr(U[3:1]) == "TensorShape([])"
    with pytest.raises(ValueError, match="Steps are not yet handled"):
        U[::2]
    assert repr(tf.TensorShape([1, 2])[1:]) == "TensorShape([2])" and tf.TensorShape([1, 2])[0] == 1


def test_equality_and_hash():
    """TF 2.21: TensorShape(None) == TensorShape(None) and == None; != [] and != [1];
    known shapes equal lists and tuples of their dims."""
    assert U == tf.TensorShape(None) and U == None and not (U != tf.TensorShape(None))  # noqa: E711
    assert U != tf.TensorShape([]) and tf.TensorShape([]) != U and U != [1]
    assert tf.TensorShape([]) != None and tf.TensorShape([1]) != None  # noqa: E711
    assert tf.TensorShape([None, 2]) == [None, 2] and tf.TensorShape([1, 2]) == (1, 2)
    assert tf.TensorShape([1]) != "ab"
    assert {U: 1}[tf.TensorShape(None)] == 1 and hash(tf.TensorShape([1, 2])) == hash((1, 2))
    for s in (U, tf.TensorShape([1, None])):
        assert repr(copy.deepcopy(s)) == repr(s) and repr(pickle.loads(pickle.dumps(s))) == repr(s)


def test_compatibility():
    """TF 2.21: an unknown shape is compatible with everything; assert_is_compatible_with
    raises ValueError "Shapes (1,) and [2] are incompatible" (the other as given)."""
    assert U.is_compatible_with([1, 2]) and U.is_compatible_with(U) and U.is_compatible_with(None)
    assert tf.TensorShape([1]).is_compatible_with(U) and U.is_compatible_with(tf.TensorShape([]))
    assert not tf.TensorShape([1]).is_compatible_with([1, 2])
    U.assert_is_compatible_with([1])
    with pytest.raises(ValueError, match=r"^Shapes \(1,\) and \[2\] are incompatible$"):
        tf.TensorShape([1]).assert_is_compatible_with([2])
    with pytest.raises(ValueError, match=r"^Shapes \(1, 2\) and \(1, 3\) are incompatible$"):
        tf.TensorShape([1, 2]).assert_is_compatible_with(tf.TensorShape([1, 3]))


def test_merge_with():
    """TF 2.21: merging with an unknown shape gives the other; known dims win; a conflict is
    ValueError "Shapes (1,) and (2,) are not compatible"."""
    assert repr(U.merge_with([1, 2])) == "TensorShape([1, 2])"
    assert repr(tf.TensorShape([1, None]).merge_with(U)) == "TensorShape([1, None])"
    assert repr(U.merge_with(U)) == "TensorShape(None)"
    assert repr(tf.TensorShape([None]).merge_with([3])) == "TensorShape([3])"
    assert repr(tf.TensorShape([None, 2]).merge_with([3, None])) == "TensorShape([3, 2])"
    with pytest.raises(ValueError, match=r"^Shapes \(1,\) and \(2,\) are not compatible$"):
        tf.TensorShape([1]).merge_with([2])
    with pytest.raises(ValueError, match=r"^Shapes \(1,\) and \(1, 2\) are not compatible$"):
        tf.TensorShape([1]).merge_with([1, 2])


def test_concatenate_and_most_specific_compatible_shape():
    """TF 2.21: concatenating an unknown shape (either side, or None) is unknown; the most
    specific compatible shape is unknown across an unknown shape or ranks that differ, else
    None where dims differ."""
    assert repr(U.concatenate([1])) == "TensorShape(None)"
    assert repr(tf.TensorShape([1]).concatenate(U)) == "TensorShape(None)"
    assert repr(tf.TensorShape([1]).concatenate(None)) == "TensorShape(None)"
    assert repr(tf.TensorShape([1]).concatenate([2])) == "TensorShape([1, 2])"
    assert repr(U + [1]) == "TensorShape(None)"
    assert repr(U.most_specific_compatible_shape([1, 2])) == "TensorShape(None)"
    assert repr(tf.TensorShape([1, 2]).most_specific_compatible_shape(U)) == "TensorShape(None)"
    assert repr(tf.TensorShape([1, 2]).most_specific_compatible_shape([1, 3])) \
        == "TensorShape([1, None])"
    assert repr(tf.TensorShape([1, 2]).most_specific_compatible_shape([1, 2, 3])) \
        == "TensorShape(None)"


def test_with_rank_at_least():
    """TF 2.21: an unknown shape passes as it is; a known one of lower rank raises."""
    assert repr(U.with_rank_at_least(2)) == "TensorShape(None)"
    with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank at least 2"):
        tf.TensorShape([1]).with_rank_at_least(2)


def test_bool_is_the_tuples_for_known_shapes():
    """TF 2.21: bool(TensorShape(None)) is False, bool(TensorShape([0])) True. (TensorFlow's
    bool(TensorShape([])) is True; here it stays the empty tuple's False, which the runtime
    reads as "a scalar".)"""
    assert not U and tf.TensorShape([0]) and not tf.TensorShape([])
