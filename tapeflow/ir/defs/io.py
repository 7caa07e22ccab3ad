"""PrintV2: ``tf.print`` as an op, so a traced program prints when it runs, in program order.

It has no outputs and is not pure: no pass may drop, merge, fold or move it. ``template``
is the whole line with one ``str.format`` field per tensor input (the Python values of the
call are already in it), ``stream`` is "stderr" or "stdout".
"""
import re

from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, defop

_TYPE = re.compile(r"([a-z0-9]+)\[([0-9?,]*)\]")


def _print(avals, template, summarize, stream):
    if stream not in ("stderr", "stdout"):
        raise InferError(f"output_stream must be sys.stderr or sys.stdout, got {stream!r}")
    return ()


defop("PrintV2", _print, arity=None, multi_output=True, pure=False,
      attrs={"template": "str", "summarize": "int", "stream": "str"})


# EagerPyFunc: ``tf.py_function`` inside a traced function, an op whose kernel calls the
# Python callable registered under ``token`` (in this process only: a saved or sent program
# cannot carry Python code). ``types`` is the outputs' avals as text, "float32[2,?];int32[]".
def _py_func(avals, token, types):
    out = []
    for part in filter(None, types.split(";")):
        m = _TYPE.fullmatch(part)
        if m is None:
            raise InferError(f"EagerPyFunc: bad output type {part!r}")
        dims = tuple(None if d == "?" else int(d) for d in filter(None, m.group(2).split(",")))
        out.append(AVal(dims, D.as_dtype(m.group(1))))
    return tuple(out)


defop("EagerPyFunc", _py_func, arity=None, multi_output=True, pure=False,
      attrs={"token": "int", "types": "str"})
