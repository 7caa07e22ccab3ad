"""Kernels of PrintV2 (print now: eagerly, or when the interpreter reaches the node) and
EagerPyFunc (call the registered Python function)."""
import itertools

import numpy as np

from ..printing import print_values
from ..registry import kernel
from ..tensor import convert_to_tensor, wrap

# token -> (Python callable, output avals): tf.py_function's functions (ops/py_function.py)
PY_FUNCS = {}
_tokens = itertools.count(1)


def register_py_func(fn, out_avals):
    token = next(_tokens)
    PY_FUNCS[token] = (fn, tuple(out_avals))
    return token


@kernel("PrintV2")
def _print(*values, template, summarize, stream):
    print_values(template, values, summarize, stream)
    return ()


@kernel("EagerPyFunc")
def _py_func(*arrays, token, types):
    if token not in PY_FUNCS:
        raise ValueError(f"the Python function of py_function #{token} is not in this process (a "
                         f"saved or transferred program cannot carry Python code)")
    fn, avals = PY_FUNCS[token]
    out = fn(*[wrap(np.array(a, copy=True)) for a in arrays])
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(avals):
        raise ValueError(f"py_function's {getattr(fn, '__name__', 'function')} returned "
                         f"{len(outs)} values, Tout has {len(avals)}")
    result = []
    for o, aval in zip(outs, avals, strict=True):
        a = np.asarray(convert_to_tensor(o, dtype=aval.dtype)._value)
        if len(a.shape) != len(aval.shape) or any(d is not None and d != n
                                                  for d, n in zip(aval.shape, a.shape)):
            raise ValueError(f"py_function's {getattr(fn, '__name__', 'function')} returned shape "
                             f"{a.shape} where its trace found {aval.shape}")
        result.append(a)
    return tuple(result)
