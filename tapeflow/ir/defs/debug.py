"""Run-time checks: ``CheckNumerics`` and ``Assert`` (``tf.debugging``), TensorFlow's op names.

``CheckNumerics(x)``: ``x``, once no element is NaN or infinite; otherwise the program
stops with InvalidArgumentError("``message`` : Tensor had NaN values"). ``Assert(cond,
*data)``: nothing, once ``cond`` (a bool scalar) holds; otherwise InvalidArgumentError
("assertion failed: [...] [...]"). tapeflow has no string tensors, so the strings among
TensorFlow's ``data`` live in ``template``: the whole message after "assertion failed: ",
one ``str.format`` field per tensor input, each filled with the tensor's values summarized
as TensorFlow's ``Tensor::SummarizeValue(summarize)`` prints them.

Neither is pure: no pass may drop, merge, fold or move a check.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import FLOATS, defop


def _check_numerics(avals, message):
    (x,) = avals
    if x.dtype not in FLOATS:
        raise InferError(f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed "
                         f"values: half, float, double")
    return x


def _assert(avals, template, summarize):
    if not avals:
        raise InferError("Assert needs a condition")
    cond = avals[0]
    if cond.dtype != D.bool_ or len(cond.shape) != 0:
        raise InferError(f"In[0] expects a scalar bool condition, got "
                         f"{cond.dtype.name}{list(cond.shape)}")
    return ()


# tf.guarantee_const: its input, a hint to TensorFlow's graph optimizer; no gradient in TF
defop("GuaranteeConst", lambda avals: avals[0], moves_data=True)
defop("CheckNumerics", _check_numerics, attrs={"message": "str"}, pure=False, moves_data=True)
defop("Assert", _assert, arity=None, multi_output=True, pure=False,
      attrs={"template": "str", "summarize": "int"})
