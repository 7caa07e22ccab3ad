"""PrintV2: the compiled program leaves Numba for the print (``objmode``), in program order."""
from .registry import stmt_op


@stmt_op("PrintV2")
def _print(em, node, template, summarize, stream):
    values = "".join(f"{em.ref(v)}, " for v in node.inputs)
    with em.block("with objmode():"):
        em.line(f"rt.print_values({template!r}, ({values}), {summarize}, {stream!r})")
