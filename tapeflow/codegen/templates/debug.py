"""CheckNumerics and Assert compiled: the check runs natively; when it fails, Numba raises with
a constant text and the interpreter reruns the program to raise the op's own message
(codegen/failures.py), so no message enters the generated source."""
from .registry import stmt_op


@stmt_op("CheckNumerics")
def _check_numerics(em, node, message):
    (x,), (y,) = node.inputs, node.outputs
    with em.block(f"if not np.all(np.isfinite({em.ref(x)})):"):
        em.line('raise ValueError("CheckNumerics: the tensor had NaN or Inf values")')
    em.bind(y, em.ref(x))


@stmt_op("Assert")
def _assert(em, node, template, summarize):
    with em.block(f"if not {em.ref(node.inputs[0])}:"):
        em.line('raise ValueError("Assert: assertion failed")')


@stmt_op("GuaranteeConst")
def _guarantee_const(em, node):
    em.bind(node.outputs[0], em.ref(node.inputs[0]))
