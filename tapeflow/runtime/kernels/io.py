"""Kernel of PrintV2: print now (eagerly, or when the interpreter reaches the node)."""
from ..printing import print_values
from ..registry import kernel


@kernel("PrintV2")
def _print(*values, template, summarize, stream):
    print_values(template, values, summarize, stream)
    return ()
