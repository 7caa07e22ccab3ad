"""The reduction tree and the program's travelling form, without a cluster."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.distribute import shipped as program, tree


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 33, 64, 65])
@pytest.mark.parametrize("k", [2, 3, 8])
def test_any_split_of_the_chunks_between_workers_gives_the_same_bits(n, k):
    rng = np.random.default_rng(n * 10 + k)
    leaves = {i: (rng.standard_normal(4).astype(np.float32) * 10.0 ** rng.integers(-3, 4),)
              for i in range(n)}
    want = tree.root({(0, i): v for i, v in leaves.items()}, n, k)
    np.testing.assert_allclose(want[0], sum(v[0].astype(np.float64) for v in leaves.values()),
                               rtol=1e-5)
    for _ in range(6):
        owner = rng.integers(0, 3, n)
        parts = {}
        for w in range(3):
            mine = [i for i in range(n) if owner[i] == w]
            got = tree.complete_nodes({i: leaves[i] for i in mine}, n, k)
            assert len(got) == tree.subtree_count(mine, n, k)
            parts.update(got)
        assert tree.root(parts, n, k)[0].tobytes() == want[0].tobytes()


def test_tree_shape_and_a_worker_holding_a_whole_subtree_sends_one_value():
    assert tree.levels(1, 8) == [1, 1] and tree.levels(32, 8) == [32, 4, 1]
    assert tree.levels(9, 8) == [9, 2, 1]
    assert tree.subtree_count(range(8), 32, 8) == 1
    assert tree.subtree_count(range(32), 32, 8) == 1
    assert tree.subtree_count([0, 2, 4], 32, 8) == 3
    with pytest.raises(ValueError, match="no value for chunk 3"):
        tree.root({(0, i): (np.ones(1),) for i in (0, 1, 2)}, 4, 2)


def _saved_square(scale=1.0):
    @tf.function(input_signature=[[tf.TensorSpec([2])], [tf.TensorSpec([None, 2])]])
    def f(params, data):
        return tf.reduce_sum(tf.square(data[0] * params[0])) * scale
    return f


def test_the_program_travels_as_json_and_npy_files_named_by_their_hash():
    key, files = program.program_bytes(_saved_square())
    assert all(p.endswith((".json", ".npy")) for p in files), sorted(files)
    assert key == program.content_hash(files) and len(key) == 64
    fn = program.load_program(key, files)
    assert program.load_program(key, files) is fn          # kept warm: loaded once
    out = fn([tf.constant([1.0, 2.0])], [tf.constant([[1.0, 1.0], [0.0, 3.0]])])
    assert float(out) == pytest.approx(1 + 4 + 36)


def test_bytes_that_do_not_match_their_hash_or_escape_the_directory_are_refused():
    key, files = program.program_bytes(_saved_square(3.0))    # a program not loaded yet
    name = next(p for p in files if b"Square" in files[p])
    tampered = dict(files, **{name: files[name].replace(b"Square", b"Sqrt")})
    with pytest.raises(ValueError, match="do not match their content hash"):
        program.load_program(key, tampered)
    evil = dict(files, **{"../evil.json": b"{}"})
    with pytest.raises(ValueError, match="bad path"):
        program.load_program(program.content_hash(evil), evil)
