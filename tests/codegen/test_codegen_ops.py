"""Every op, compiled == interpreted, on the gradient cases' inputs (float64 and float32).

Samples are one-node programs (see samples.py); many of them share one graph so one Numba
compile checks them all (compiles cost ~0.1 s per loop nest, and the on-disk cache makes
reruns nearly free).
"""
import numpy as np
import pytest

import tapeflow  # noqa: F401  (registers every op)
from tapeflow.codegen import compile_graph
from tapeflow.ir.opdef import OPS
from tapeflow.runtime.interpret import run_graph

from codegen.samples import (Sample, captured_samples, distinct, extra_samples, samples_graph,
                             special_samples, to_float32)

CHUNK = 30


def _float32(samples):
    out = []
    for s in samples:
        args = [to_float32(a) for a in s.args]
        if any(np.asarray(a).dtype == np.float32 for a in args):
            out.append(Sample(s.op, args, s.attrs, s.note))
    return out


# Ops with graph attributes are whole programs, not one-node samples: CustomGradient is
# compiled in test_programs.py, If and While (f32 and f64) in test_control_flow_programs.py,
# WhileGrad (f32 and f64) in test_loop_grad_programs.py, WhileGradGrad (f32 and f64) in
# tests/tracer/test_loop_second_order.py, WhileStacks and WhileGradStacks (f64) in
# test_loop_grad_programs.py (a tape across the call).
GRAPH_OPS = {"CustomGradient", "If", "While", "WhileGrad", "WhileGradGrad", "WhileWithGrad",
             "WhileStacks", "WhileGradStacks"}
# PrintV2 has no outputs to compare: tests/ops/test_print.py compiles it and checks its text.
NO_OUTPUTS = {"PrintV2"}
# EagerPyFunc (tf.py_function) calls Python: never compiled, its programs run on the
# interpreter (tests/ops/test_py_function.py checks the fallback).
# Const: no code of its own, bound as a literal or an argument of every program that has one.
NOT_COMPILED = {"EagerPyFunc", "Const"}
# The ops taking a shape as a tensor: their samples come from functions traced with None
# dims, whose output shapes are unknown until run time; tests/ops/test_shape_tensors.py
# compiles them with static shapes instead.
SHAPE_TENSOR_OPS = {"DynamicReshape", "DynamicBroadcastTo", "SumToShape", "SplitV",
                    "DynamicStridedSliceGrad", "DynamicUnsortedSegmentSum"}
NOT_COMPILED |= SHAPE_TENSOR_OPS
# The padded list of a TensorArray of ragged elements: its sizes are data, so its programs run
# on the interpreter (codegen/templates/ragged.py); tests/codegen/test_tensor_array_ragged_programs.py
# checks the fallback, and that such a list of static sizes compiles as slices.
NOT_COMPILED |= {"CropOrPad", "RaggedListGetItem", "RaggedListGather", "RaggedListStack",
                 "RaggedListConcat", "RaggedListConcatGrad"}


def _all_samples():
    captured = [s for s in captured_samples() if s.op in OPS and s.op not in GRAPH_OPS | NO_OUTPUTS | NOT_COMPILED]
    f64 = distinct(captured, per_op=3, per_elementwise_op=2) + extra_samples() + special_samples()
    # float32: every op once more, and the unary specials (the fast float32 math lives there;
    # binary float ops have one template for both precisions)
    f32 = _float32(distinct(captured, per_op=1) + extra_samples() + special_samples(binary=False))
    return {"f64": f64, "f32": f32}


SAMPLES = _all_samples()
CHUNKS = [(tag, k, samples[k:k + CHUNK]) for tag, samples in SAMPLES.items()
          for k in range(0, len(samples), CHUNK)]


@pytest.mark.parametrize("tag", ["f64", "f32"])
def test_every_op_has_samples(tag):
    """Each op is compiled on at least one sample in both precisions (float ops in float32)."""
    have = {s.op for s in SAMPLES[tag]}
    expect = set(OPS) - GRAPH_OPS - NO_OUTPUTS - NOT_COMPILED
    if tag == "f32":
        expect = {op for op in expect if any(
            np.asarray(a).dtype.kind == "f" for s in SAMPLES["f64"] if s.op == op for a in s.args)}
    assert sorted(expect - have) == []


def _close(got, want, tag):
    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}"
    if got.dtype.kind in "biu":
        return None if np.array_equal(got, want) else "values differ"
    rtol, atol = (2e-5, 1e-6) if got.dtype == np.float32 else (1e-10, 1e-12)
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return None
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return f"max abs err {np.max(np.abs(got[bad] - want[bad]))} at {np.argwhere(bad)[:3].tolist()}"


@pytest.mark.parametrize("tag,start,samples", CHUNKS, ids=[f"{t}-{k}" for t, k, _ in CHUNKS])
def test_compiled_matches_interpreter(tag, start, samples):
    graph, args = samples_graph(samples)
    prog = compile_graph(graph, f"ops_{tag}_{start}")
    assert prog.fallback is None
    got, want = prog(*args), run_graph(graph, *args)
    assert len(got) == len(want)
    k, failures = 0, []
    for s in samples:
        opdef = OPS[s.op]
        n = len(opdef.infer([_aval(a) for a in s.args], **s.attrs)) if opdef.multi_output else 1
        for _ in range(n):
            why = _close(got[k], want[k], tag)
            if why:
                failures.append(f"{s}: {why}")
            k += 1
    assert failures == []


def _aval(a):
    from tapeflow.ir import dtypes as D
    from tapeflow.ir.opdef import AVal
    a = np.asarray(a)
    return AVal(tuple(a.shape), D.as_dtype(a.dtype))
