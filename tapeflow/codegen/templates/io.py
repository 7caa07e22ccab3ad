"""PrintV2: the compiled program leaves Numba for the print (``objmode``), in program order.
EagerPyFunc (``tf.py_function``) is not compiled: its program runs on the interpreter."""
from ..emitter import Unsupported
from .registry import stmt_op


@stmt_op("PrintV2")
def _print(em, node, template, summarize, stream):
    values = "".join(f"{em.ref(v)}, " for v in node.inputs)
    with em.block("with objmode():"):
        em.line(f"rt.print_values({template!r}, ({values}), {summarize}, {stream!r})")


@stmt_op("EagerPyFunc")
def _py_func(em, node, token, types):
    # a program calling tf.py_function's Python runs on the interpreter (Program.fallback says so)
    raise Unsupported("EagerPyFunc (tf.py_function) calls Python")
