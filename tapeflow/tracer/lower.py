"""``function(...).lower(*args)``: every stage of compiling a function, as text.

The same object backs ``tapeflow dump``: the traced graph, the graph after each
pass, the forward and backward programs a tape uses (with their residuals and
the bytes they keep), the min-cut partition, and the generated Numba source.
"""
from ..ir.dot import to_dot
from ..ir.graph import aval_str, print_graph
from ..ir.shapes import num_elements
from ..passes import FINAL, partition, run_passes
from . import backend
from .jacobian import REPORTS


def _bytes(aval):
    n = num_elements(aval.shape)
    return None if n is None else n * aval.dtype.size


class Lowered:
    """The stages of one ConcreteFunction; each property computes its stage on demand."""

    def __init__(self, concrete):
        self.concrete = concrete

    @property
    def traced(self):
        return print_graph(self.concrete.graph)

    def passes(self):
        """[(pass name, printed graph after it)] for the program a plain call runs."""
        dump = []
        run_passes(self.concrete.graph, FINAL, dump=dump)
        return dump

    @property
    def optimized(self):
        return self.passes()[-1][1]

    def tape_programs(self):
        """(forward text, backward text, residual lines, total residual bytes) used under a tape."""
        fwd, bwd, n_res = self.concrete.tape_pair()
        residuals = fwd.graph.outputs[len(fwd.graph.outputs) - n_res:]
        total = sum(_bytes(v.aval) or 0 for v in residuals)
        lines = [f"{aval_str(v.aval)}  {_bytes(v.aval)} bytes" for v in residuals]
        return print_graph(fwd.graph), print_graph(bwd.graph), lines, total

    def min_cut(self):
        """The min-cut partition of the joint graph (recomputing cheap ops): its residual report."""
        joint = self.concrete.joint()
        fwd, bwd, info = partition(joint.graph, joint.n_primals, joint.n_outputs)
        return print_graph(fwd), print_graph(bwd), info

    def source(self):
        prog = backend.compile(self.concrete.graph, self.concrete.name)
        return getattr(prog, "source", "(NumPy interpreter backend: no generated source)")

    def vectorized(self):
        """[(report line, printed batched program)] for each jacobian vectorized into this graph."""
        return [(f"{mode} mode, {v.report()}", print_graph(v.graph))
                for mode, v in REPORTS.get(self.concrete.graph, [])]

    def dot(self):
        return to_dot(self.concrete.graph, self.concrete.name)

    def as_text(self, passes=False, source=False):
        out = [f"== traced: {self.concrete.name}", self.traced]
        if passes:
            previous = None
            for name, text in self.passes()[1:]:
                out += [f"== after {name}" + (" (unchanged)" if text == previous else ""),
                        *([] if text == previous else [text])]
                previous = text
        for k, (report, text) in enumerate(self.vectorized()):
            out += [f"== vectorized jacobian {k}: {report}", text]
        try:
            fwd, bwd, lines, total = self.tape_programs()
        except Exception as e:  # e.g. nothing differentiable: say so, do not fail the dump
            out += [f"== no gradient program ({type(e).__name__}: {e})"]
        else:
            if self.concrete.tape_pair()[1].graph.outputs:
                out += ["== forward (outputs + residuals)", fwd, "== backward (residuals + cotangents)",
                        bwd, f"== residuals: {len(lines)}, {total} bytes"] + [f"   {ln}" for ln in lines]
            else:
                out += ["== no gradient program: no floating-point input reaches a floating-point output"]
        if source:
            out += ["== generated source", self.source()]
        return "\n".join(out)
