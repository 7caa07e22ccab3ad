"""``function(...).lower(*args)``: every stage of compiling a function, as text.

The same object backs ``tapeflow dump``: the traced graph, the graph after each
pass, the joint graph, the min-cut partition, the forward and backward programs a tape
runs as they run (after the final passes, with the residuals and the bytes they keep),
the vectorized jacobians and the generated Numba source of each program.
"""
import difflib

from ..ir.dot import to_dot
from ..ir.graph import aval_str, print_graph
from ..ir.shapes import num_elements
from ..passes import FINAL, partition, run_passes
from . import backend
from .jacobian import REPORTS


def _bytes(aval):
    n = num_elements(aval.shape)
    return None if n is None else n * aval.dtype.size


# name -> what the stage shows, in the order a dump prints them
STAGES = {
    "traced": "the graph Python traced",
    "passes": "a plain call's graph after each pass that changed it",
    "program": "what a plain call runs (after the final passes)",
    "jacobians": "each jacobian vectorized into the graph, with any op that loops",
    "joint": "forward and backward traced together (autodiff)",
    "min-cut": "the min-cut partition of the joint graph: residuals kept, values recomputed",
    "forward": "what runs under a tape: outputs and residuals (after the final passes)",
    "backward": "what runs for the gradient: residuals and cotangents in (after the final passes)",
    "source": "the generated Numba source of each program that runs",
}
DEFAULT_STAGES = ("traced", "jacobians", "forward", "backward")


class Lowered:
    """The stages of one ConcreteFunction; each computes on demand (see ``STAGES``)."""

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

    def _tape_graphs(self):
        """(forward, backward, number of residuals): the programs a tape runs, as they run."""
        fwd, bwd, n_res = self.concrete.tape_pair()
        return backend.optimize(fwd.graph), backend.optimize(bwd.graph), n_res

    def tape_programs(self):
        """(forward text, backward text, residual lines, total residual bytes) used under a tape."""
        fwd, bwd, n_res = self._tape_graphs()
        residuals = fwd.outputs[len(fwd.outputs) - n_res:]
        total = sum(_bytes(v.aval) or 0 for v in residuals)
        lines = [f"{aval_str(v.aval)}  {_bytes(v.aval)} bytes" for v in residuals]
        return print_graph(fwd), print_graph(bwd), lines, total

    def min_cut(self):
        """The min-cut partition of the joint graph (recomputing cheap ops): its residual report."""
        joint = self.concrete.joint()
        fwd, bwd, info = partition(joint.graph, joint.n_primals, joint.n_outputs)
        return print_graph(fwd), print_graph(bwd), info

    def source(self):
        return _source(backend.compile(self.concrete.graph, self.concrete.name))

    def vectorized(self):
        """[(report line, printed batched program)] for each jacobian vectorized into this graph."""
        return [(f"{mode} mode, {v.report()}", print_graph(v.graph))
                for mode, v in REPORTS.get(self.concrete.graph, [])]

    def dot(self):
        return to_dot(self.concrete.graph, self.concrete.name)

    def stages(self, names=DEFAULT_STAGES, diff=False):
        """[(heading, text)] for the stages ``names`` (in ``STAGES`` order); ``diff``: the
        passes as unified diffs against the graph before each."""
        unknown = set(names) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown stage {sorted(unknown)[0]!r}; stages: {', '.join(STAGES)}")
        out = []
        for name in (n for n in STAGES if n in names):
            out += getattr(self, "_stage_" + name.replace("-", "_"))(diff)
        return out

    def as_text(self, passes=False, source=False, stages=None, diff=False):
        """The stages as one text: the default ones, plus the passes and the source if asked."""
        if stages is None:
            stages = DEFAULT_STAGES + (("passes",) if passes else ()) + (("source",) if source else ())
        return "\n".join(f"== {heading}\n{text}" if text else f"== {heading}"
                         for heading, text in self.stages(stages, diff))

    # -- one method per stage: [(heading, text)] ---------------------------------------------

    def _stage_traced(self, diff):
        return [(f"traced: {self.concrete.name}", self.traced)]

    def _stage_passes(self, diff):
        out, previous = [], None
        for name, text in self.passes():
            if previous is not None and text != previous:
                out.append((f"after {name}", _diff(previous, text, name) if diff else text))
            previous = text
        return out or [("passes: none changed the graph", "")]

    def _stage_program(self, diff):
        return [("program (a plain call)", self.optimized)]

    def _stage_jacobians(self, diff):
        return [(f"vectorized jacobian {k}: {report}", text)
                for k, (report, text) in enumerate(self.vectorized())]

    def _no_gradient(self):
        """Why there is no gradient program, or None if there is one."""
        try:
            _, bwd, _ = self.concrete.tape_pair()
        except Exception as e:  # e.g. nothing differentiable: say so, do not fail the dump
            return f"no gradient program ({type(e).__name__}: {e})"
        if not bwd.graph.outputs:
            return "no gradient program: no floating-point input reaches a floating-point output"
        return None

    def _stage_joint(self, diff):
        why = self._no_gradient()
        return [(why, "")] if why else [("joint (forward + backward)", print_graph(self.concrete.joint().graph))]

    def _stage_min_cut(self, diff):
        why = self._no_gradient()
        if why:
            return [(why, "")]
        fwd, bwd, info = self.min_cut()
        lines = [f"   {r.name}: {aval_str(r.aval)}  {r.nbytes} bytes ({r.kind})" for r in info]
        lines.append(f"   recomputed in the backward: {', '.join(info.recomputed) or 'nothing'}")
        return [("min-cut forward", fwd), ("min-cut backward", bwd),
                (f"min-cut residuals: {len(info)}, {info.total_bytes} bytes", "\n".join(lines))]

    def _stage_forward(self, diff):
        why = self._no_gradient()
        if why:
            return [(why, "")]
        fwd, _, lines, total = self.tape_programs()
        return [("forward (outputs + residuals)", fwd),
                (f"residuals: {len(lines)}, {total} bytes", "\n".join(f"   {ln}" for ln in lines))]

    def _stage_backward(self, diff):
        if self._no_gradient():
            return []
        return [("backward (residuals + cotangents)", self.tape_programs()[1])]

    def _stage_source(self, diff):
        out = [(f"generated source: {self.concrete.name} (a plain call)", self.source())]
        if not self._no_gradient():
            fwd, bwd, _ = self.concrete.tape_pair()
            for what, fn in (("forward", fwd), ("backward", bwd)):
                out.append((f"generated source: {what}", _source(backend.compile(fn.graph, fn.name))))
        return out


def _source(program):
    return getattr(program, "source", None) or "(NumPy interpreter backend: no generated source)"


def _diff(before, after, name):
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(), "before", name,
                                          lineterm="", n=1))
