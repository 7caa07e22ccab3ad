"""No op lacks any of its parts: every table keyed by op name covers every OpDef, and only OpDefs.

An op is defined once (``ir/defs``: its ``OpDef``, attribute kinds included) and then has
an entry in each per-concern table: a NumPy kernel (``KERNELS``), a gradient rule
(``GRADS``), a batching rule (``BATCHERS``), a codegen template (``CODEGEN``) and gradient
checks (``tests/ops/cases_*.py``). The exceptions below are the only ones, each with why.
"""
import pytest

import tapeflow  # noqa: F401  (registers every op, kernel, rule and template)
from tapeflow.codegen.templates import CODEGEN
from tapeflow.ir.opdef import ATTR_KINDS, GRAPH_KINDS, OPS
from tapeflow.passes.batching import BATCHERS
from tapeflow.runtime.registry import GRADS, KERNELS

from ops.cases import all_cases

# Ops without a batching rule: vectorize runs them as a loop over the batch and reports them.
# CustomGradient: no rule yet (its gradient graph would have to be batched as well).
# EagerPyFunc (tf.py_function): its Python function takes one row at a time.
# WhileWithGrad: made by the last passes (passes/share_loops.py) on programs that run as
# they are, after any vectorize.
# WhileStacks: made only in the forward program of a call under a tape (passes/keep_stacks.py),
# which runs as it is: a traced call inlines the function's own graph instead.
# Const: takes no input, so nothing about it is ever batched (vectorize copies it as it is).
NO_BATCHING_RULE = {"WhileWithGrad", "WhileStacks", "CustomGradient", "EagerPyFunc", "Const"}
# Const: the code generator binds each constant as a literal or an argument of the program
# (codegen/generate.bind_consts); no code is emitted for it.
NO_TEMPLATE = {"Const"}

TABLES = {"kernel (runtime KERNELS)": (KERNELS, set()),
          "gradient rule (GRADS)": (GRADS, set()),
          "batching rule (passes.batching BATCHERS)": (BATCHERS, NO_BATCHING_RULE),
          "codegen template (codegen.templates CODEGEN)": (CODEGEN, NO_TEMPLATE)}


@pytest.mark.parametrize("what", sorted(TABLES))
def test_every_op_has_one_entry_in_each_table(what):
    table, exceptions = TABLES[what]
    assert sorted(set(OPS) - set(table) - exceptions) == [], f"ops without a {what}"
    assert sorted(set(table) - set(OPS)) == [], f"{what} entries for no OpDef"
    assert sorted(exceptions & set(table)) == [], f"listed as lacking a {what}, but have one"


def test_every_attribute_has_a_kind_the_codec_checks():
    """A saved graph's attribute is checked against its kind, so every attribute needs one."""
    unknown = sorted(f"{op.name}.{attr}: {kind!r}" for op in OPS.values()
                     for attr, kind in op.attrs.items()
                     if kind not in ATTR_KINDS and kind not in GRAPH_KINDS)
    assert unknown == []


# Ops TensorFlow registers no gradient for: their rule raises TF's LookupError, which
# tests/ops/test_linalg_decomp.py checks.
LOOKUP_ERROR_GRADIENT = {"Lu"}
# Ops whose gradient is TensorFlow's implicit reparameterization one (the derivative of a sample
# at a fixed CDF), which no finite difference of the sampling path gives: checked against
# TensorFlow's values in tests/api_names/test_random_samplers.py.
IMPLICIT_GRADIENT = {"StatelessRandomGammaV3", "StatelessParameterizedTruncatedNormal"}


def test_every_op_has_a_gradient_check():
    """Differentiable ops have cases; the others are listed as NOT_DIFFERENTIABLE, never both."""
    cases, nondiff = all_cases()
    differentiable = {n for n in OPS if GRADS[n].fn is not None} - LOOKUP_ERROR_GRADIENT
    assert sorted(differentiable - set(cases) - IMPLICIT_GRADIENT) == [], \
        "ops without cases in tests/ops/cases_<family>.py"
    assert sorted(set(OPS) - differentiable - nondiff - LOOKUP_ERROR_GRADIENT) == [], \
        "not differentiable, and not in NOT_DIFFERENTIABLE of tests/ops/cases_<family>.py"
    assert sorted(nondiff & differentiable) == [], "listed in NOT_DIFFERENTIABLE, but have a gradient"
    assert sorted(set(cases) - set(OPS)) == [], "cases for no OpDef"
