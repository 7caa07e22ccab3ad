"""The padded list of a TensorArray whose elements differ in shape (ops/ragged_list.py) is
not compiled: its sizes are data (a program holding these ops has unknown sizes and runs on
the interpreter), and one written at Python indices with static shapes is already static
slices and pads. A template reaching them (a graph made concrete) falls back the same way."""
from ..emitter import Unsupported
from .registry import stmt_op


@stmt_op("CropOrPad", "RaggedListGetItem", "RaggedListGather", "RaggedListStack",
         "RaggedListConcat", "RaggedListConcatGrad")
def _ragged(em, node, **attrs):
    raise Unsupported(f"{node.op}: the padded list of a TensorArray of ragged elements runs on "
                      f"the interpreter")
