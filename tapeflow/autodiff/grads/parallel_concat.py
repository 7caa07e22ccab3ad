"""ParallelConcat has no gradient in TensorFlow (LookupError), so neither has parallel_stack."""
from ...runtime.registry import gradient


@gradient("ParallelConcat")
def _parallel_concat(op, g):
    raise LookupError("gradient registry has no entry for: ParallelConcat")
