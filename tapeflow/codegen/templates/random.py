"""Stateless random ops compiled: the program fills a fresh array with the same Numba Philox
functions the NumPy kernels call (runtime/philox.py, as ``rt.philox_*``), so compiled and
eager values are the same bits. float16 is not compiled (Numba has no float16 arithmetic):
such a program runs on the interpreter."""
from ...ir.shapes import num_elements
from ..emitter import Unsupported, np_type, shape_lit
from .registry import stmt_op


def _emit(em, node, fill, dtype, extra=""):
    y = node.outputs[0]
    if dtype.name == "float16":
        raise Unsupported(f"{node.op} in float16 (Numba has no float16)")
    key, counter = em.ref(node.inputs[0]), em.ref(node.inputs[1])
    buf = em.fresh("r")
    n = num_elements(y.aval.shape)
    unsigned = {"int32": "np.uint32", "int64": "np.uint64"}.get(dtype.name) \
        if fill == "full_int" else None
    em.line(f"{buf} = np.empty({n}, dtype={unsigned or np_type(dtype)})")
    em.line(f"rt.philox_{fill}({buf}, rt.philox_from_words({key}.view(np.uint64), "
            f"{counter}.view(np.uint64)){extra})")
    if unsigned:
        em.line(f"{buf} = {buf}.view({np_type(dtype)})")
    if not y.aval.shape:
        em.define(y, f"{buf}[0]")
    else:
        em.define(y, f"{buf}.reshape({shape_lit(y.aval.shape)})")


@stmt_op("StatelessRandomGetKeyCounter")
def _get_key_counter(em, node):
    key, counter = node.outputs
    kc = em.fresh("kc")
    seed = em.ref(node.inputs[0])
    em.line(f"{kc} = rt.philox_key_counter(np.uint64(np.int64({seed}[0])), "
            f"np.uint64(np.int64({seed}[1])))")
    em.define(key, f"np.array([{kc}[0] | ({kc}[1] << np.uint64(32))], dtype=np.uint64)")
    em.define(counter, f"np.array([{kc}[2] | ({kc}[3] << np.uint64(32)), "
                       f"{kc}[4] | ({kc}[5] << np.uint64(32))], dtype=np.uint64)")


@stmt_op("StatelessRandomUniformV2")
def _uniform(em, node, shape, dtype):
    _emit(em, node, "uniform", dtype)


@stmt_op("StatelessRandomNormalV2")
def _normal(em, node, shape, dtype):
    _emit(em, node, "normal", dtype)


@stmt_op("StatelessTruncatedNormalV2")
def _truncated_normal(em, node, shape, dtype):
    _emit(em, node, "truncated_normal", dtype)


@stmt_op("StatelessRandomUniformFullIntV2")
def _full_int(em, node, shape, dtype):
    _emit(em, node, "full_int", dtype)


@stmt_op("StatelessRandomUniformIntV2")
def _uniform_int(em, node, shape):
    lo, hi = em.ref(node.inputs[2]), em.ref(node.inputs[3])
    with em.block(f"if {lo} >= {hi}:"):
        em.line('raise ValueError("StatelessRandomUniformIntV2: need minval < maxval")')
    _emit(em, node, "uniform_int", node.outputs[0].aval.dtype,
          extra=f", np.int64({lo}), np.int64({hi})")
