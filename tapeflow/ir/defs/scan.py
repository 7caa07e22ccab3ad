"""Cumulative ops along one axis: Cumsum, Cumprod, CumulativeLogsumexp.

``axis`` is an attribute (TF's is a tensor, almost always a constant); ``exclusive`` starts
from the identity (0, 1, -inf) and ``reverse`` scans from the end.
"""
from ...errors import InferError
from ..opdef import AVal, FLOATS, NUMERIC, check_dtype, defop

SCAN_ATTRS = {"axis": "int", "exclusive": "bool", "reverse": "bool"}


def _scan(allowed):
    def infer(avals, axis, exclusive=False, reverse=False):
        (x,) = avals
        check_dtype(x, allowed, "x")
        rank = len(x.shape)
        if not -rank <= axis < rank:
            raise InferError(f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), but "
                             f"got {axis}")
        return AVal(tuple(x.shape), x.dtype)
    return infer


defop("Cumsum", _scan(NUMERIC), attrs=SCAN_ATTRS)
defop("Cumprod", _scan(NUMERIC), attrs=SCAN_ATTRS)
defop("CumulativeLogsumexp", _scan(FLOATS), attrs=SCAN_ATTRS)
