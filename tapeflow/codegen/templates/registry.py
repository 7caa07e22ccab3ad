"""CODEGEN, the table of templates, and the decorators that fill it.

Its own module so the template modules register into it without importing the package
that imports them (``templates/__init__.py``), and the code generator reads it from there.
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
    # computes an output size only the run knows from its data (a shape tensor), where the
    # output's aval reads it from the output itself (codegen/shape_free.py ``held``, ``reads``)
    sizes_from_data: bool = False


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


def stmt_op(*names, sizes_from_data=False):
    def deco(fn):
        for n in names:
            _register(n, emit=fn, sizes_from_data=sizes_from_data)
        return fn
    return deco


def reduce_op(name, reduction):
    _register(name, reduce=reduction)
