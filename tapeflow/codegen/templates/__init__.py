"""CODEGEN: how each op is emitted, keyed by op name like the kernels and gradient rules.

A template has one of three forms:

- ``scalar(args, ins, out, **attrs) -> expression``: an elementwise op written for ONE
  element. Such ops never get loops of their own: the fusion planner groups them into loops
  (``codegen/loops.py``), which handle broadcasting by index arithmetic.
- ``reduce``: a ``Reduction`` (init / combine / finalize), folded into the loop of the
  elementwise chain that feeds it.
- ``emit(em, node)``: any other op, writing statements through the ``Emitter``.
"""
from dataclasses import dataclass
from typing import Callable

CODEGEN: dict = {}


@dataclass(frozen=True)
class Template:
    op: str
    scalar: Callable | None = None
    emit: Callable | None = None
    reduce: object = None
    cost: int = 1           # rough cost per element relative to an add (parallel threshold)
    may_raise: bool = False  # can raise on integer inputs: such a loop stays serial (prange cannot raise)


def _register(name, **kw):
    if name in CODEGEN:
        raise KeyError(f"codegen template for {name!r} registered twice")
    CODEGEN[name] = Template(name, **kw)


def scalar_op(*names, cost=1, may_raise=False):
    def deco(fn):
        for n in names:
            _register(n, scalar=fn, cost=cost, may_raise=may_raise)
        return fn
    return deco


def stmt_op(*names):
    def deco(fn):
        for n in names:
            _register(n, emit=fn)
        return fn
    return deco


def reduce_op(name, reduction):
    _register(name, reduce=reduction)


from . import elementwise, reduce, array, linalg, nn, custom, control  # noqa: E402,F401  (fill CODEGEN)
