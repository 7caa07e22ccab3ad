"""PrintV2 in a vectorized program prints the stacked values, as TensorFlow's pfor does."""
from .flags import structured
from .registry import batching


@batching("PrintV2")
def _print(b, node, inputs, batched):
    values = [b.dense(v, f) if structured(f) else v for v, f in zip(inputs, batched, strict=True)]
    b.emit("PrintV2", values, node.attrs)
    return []
