"""TensorFlow's stateless samplers, its op-type names, its values bit for bit
(runtime/philox_samplers.py).

``StatelessMultinomial(logits, seed)``: [batch, num_samples] class indices.
``StatelessRandomGammaV3(key, counter, alpha)``: gamma(alpha, 1) samples of ``shape``, which
ends with alpha's shape (the key and counter of ``StatelessRandomGetKeyCounter``).
``StatelessRandomPoisson(seed, lam)``, ``StatelessRandomBinomial(seed, counts, probs)``,
``StatelessParameterizedTruncatedNormal(seed, means, stddevs, minvals, maxvals)``: samples
of ``shape``, which ends with the parameters' shape; unlike TensorFlow's ops the parameters
come already broadcast to one shape (the public functions broadcast them).
``RandomIndexShuffle(index, seed, max_index)``: the position of ``index`` in the permutation
of [0, max_index] that ``seed`` (3 words, or a row of 3 per index) picks.
Shapes are static attributes, as for the other stateless ops. ``threads`` (categorical and
the truncated normal): the intra-op thread count TensorFlow would split the work between,
which decides where their Philox stream restarts (runtime/philox_samplers.shard_starts).
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import FLOATS, AVal, defop
from .random import _key_counter

_SEEDS = (D.int32, D.int64)


def _seed(seed):
    if seed.dtype not in _SEEDS:
        raise InferError(f"Value for attr 'Tseed' of {seed.dtype.name} is not in the list of "
                         f"allowed values: int32, int64")
    if tuple(seed.shape) != (2,):
        raise InferError(f"seed must have shape [2], not {list(seed.shape)}")


def _ends_with(shape, params):
    shape, params = tuple(shape), tuple(params)
    if len(params) > len(shape) or shape[len(shape) - len(params):] != params:
        raise InferError(f"Shape passed in must end with broadcasted shape: {list(shape)} does "
                         f"not end with {list(params)}")


def _multinomial(avals, num_samples, output_dtype, threads):
    logits, seed = avals
    _seed(seed)
    if len(logits.shape) != 2:
        raise InferError(f"logits should be a matrix, got shape {list(logits.shape)}")
    if logits.dtype not in FLOATS:
        raise InferError(f"logits must be a floating type, got {logits.dtype.name}")
    if output_dtype not in (D.int32, D.int64):
        raise InferError(f"output_dtype must be int32 or int64, got {output_dtype.name}")
    if num_samples < 0:
        raise InferError(f"num_samples should be non-negative, got {num_samples}")
    if logits.shape[1] == 0:
        raise InferError("num_classes should be positive, got 0")
    return AVal((logits.shape[0], num_samples), output_dtype)


def _gamma(avals, shape):
    key, counter, alpha = avals
    _key_counter(key, counter)
    if alpha.dtype not in FLOATS:
        raise InferError(f"alpha must be a floating type, got {alpha.dtype.name}")
    _ends_with(shape, alpha.shape)
    return AVal(tuple(shape), alpha.dtype)


def _poisson(avals, shape, dtype):
    seed, lam = avals
    _seed(seed)
    if lam.dtype not in FLOATS + (D.int32, D.int64):
        raise InferError(f"lam must be float16, float32, float64, int32 or int64, got "
                         f"{lam.dtype.name}")
    if dtype not in FLOATS + (D.int32, D.int64):
        raise InferError(f"dtype must be float16, float32, float64, int32 or int64, got "
                         f"{dtype.name}")
    _ends_with(shape, lam.shape)
    return AVal(tuple(shape), dtype)


def _same_params(params, names):
    first = params[0]
    for p, n in zip(params, names):
        if p.dtype not in FLOATS or p.dtype != first.dtype:
            raise InferError(f"{', '.join(names)} must be of one floating type, got "
                             f"{', '.join(q.dtype.name for q in params)}")
        if tuple(p.shape) != tuple(first.shape):
            raise InferError(f"{', '.join(names)} must come broadcast to one shape, got "
                             f"{', '.join(str(list(q.shape)) for q in params)}")


def _binomial(avals, shape, dtype):
    seed, counts, probs = avals
    _seed(seed)
    _same_params([counts, probs], ["counts", "probs"])
    if dtype not in FLOATS + (D.int32, D.int64):
        raise InferError(f"dtype must be float16, float32, float64, int32 or int64, got "
                         f"{dtype.name}")
    _ends_with(shape, counts.shape)
    return AVal(tuple(shape), dtype)


def _truncated_normal(avals, shape, threads):
    seed, *params = avals
    _seed(seed)
    _same_params(params, ["means", "stddevs", "minvals", "maxvals"])
    if params[0].dtype == D.float16:
        raise InferError("StatelessParameterizedTruncatedNormal: float16 is not provided "
                         "(TensorFlow samples in half precision, which tapeflow does not "
                         "reproduce); use float32 or float64")
    _ends_with(shape, params[0].shape)
    return AVal(tuple(shape), params[0].dtype)


_INDEX = (D.int32, D.int64, D.uint32, D.uint64)


def _index_shuffle(avals, rounds):
    index, seed, max_index = avals
    if index.dtype not in _INDEX or max_index.dtype != index.dtype:
        raise InferError(f"index and max_index must be one of int32, int64, uint32, uint64, "
                         f"got {index.dtype.name} and {max_index.dtype.name}")
    if seed.dtype not in _INDEX:
        raise InferError(f"Invalid seed type: {seed.dtype.name}")
    if rounds < 4 or rounds % 2:
        raise InferError(f"rounds must be an even number >= 4, got {rounds}")
    scalar = index.shape == () and len(seed.shape) == 1 and max_index.shape == ()
    n = max(1 if index.shape == () else index.shape[0],
            1 if max_index.shape == () else max_index.shape[0],
            (seed.shape[0] if len(seed.shape) == 2 else 1) if len(seed.shape) else 1)
    if len(index.shape) > 1 or (index.shape != () and index.shape[0] != n):
        raise InferError("Index bust be a scalar or vector.")
    if not (tuple(seed.shape) == (3,) or tuple(seed.shape) == (n, 3)):
        raise InferError(f"Seed must be a vector of size [3] or a matrix of size [{n}, 3] but "
                         f"got {list(seed.shape)}.")
    if len(max_index.shape) > 1 or (max_index.shape != () and max_index.shape[0] != n):
        raise InferError(f"Maxval must be a scalar or a vector of the same size as index but "
                         f"got {list(max_index.shape)}")
    return AVal(() if scalar else (n,), index.dtype)


defop("StatelessMultinomial", _multinomial, arity=2,
      attrs={"num_samples": "int", "output_dtype": "dtype", "threads": "int"})
defop("StatelessRandomGammaV3", _gamma, arity=3, attrs={"shape": "ints"})
defop("StatelessRandomPoisson", _poisson, arity=2, attrs={"shape": "ints", "dtype": "dtype"})
defop("StatelessRandomBinomial", _binomial, arity=3, attrs={"shape": "ints", "dtype": "dtype"})
defop("StatelessParameterizedTruncatedNormal", _truncated_normal, arity=5,
      attrs={"shape": "ints", "threads": "int"})
defop("RandomIndexShuffle", _index_shuffle, arity=3, attrs={"rounds": "int"})
