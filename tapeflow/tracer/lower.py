"""``function(...).lower(*args)``: every stage of compiling a function, as text or graphs.

The same object backs ``tapeflow dump``: the traced graph, the graph after each
pass, the joint graph, the min-cut partition, the forward and backward programs a tape
runs as they run (after the final passes, with the residuals and the bytes they keep),
the vectorized jacobians and the generated Numba source of each program.

``figures`` gives the stages that are graphs as ``Figure``s (the graphs with their argument
names, residual links, fused loop groups and generated code lines), which ``dot`` draws as
Graphviz text and ``tracer/picture.py`` as an HTML page.
"""
import difflib
import functools
import warnings
from dataclasses import dataclass, field

from ..codegen.emitter import Unsupported
from ..codegen.fusion import Group, plan
from ..codegen.concretize import concretize
from ..codegen.generate import InterpreterFallbackWarning, generate
from ..ir.dot import INPUT, RESIDUAL, cluster, document, link, statements
from ..ir.graph import Graph, aval_str, line_str, print_graph
from ..ir.opdef import OPS
from ..ir.shapes import num_elements
from ..passes import FINAL, partition, run_passes
from ..runtime import blas_threads
from ..runtime.kernels.loops import describe as loops_describe
from . import engine as backend
from .jacobian import REPORTS


def _bytes(aval):
    n = num_elements(aval.shape)
    return None if n is None else n * aval.dtype.size


def _bytes_text(aval):
    """``24 bytes``, or for a shape with unknown dims ``4 bytes each, ? elements``."""
    n = _bytes(aval)
    return f"{aval.dtype.size} bytes each, ? elements" if n is None else f"{n} bytes"


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
    "loops": "how each loop gradient of the programs that run keeps its values, per iteration",
    "sizes": "the size classes of each program that runs: which input sizes make another program",
    "source": "the generated Numba source of each program that runs",
}
DEFAULT_STAGES = ("traced", "jacobians", "forward", "backward", "loops")
# the stages that are graphs (the others are text only: the passes, jacobians, sizes, source)
GRAPH_STAGES = ("traced", "program", "joint", "min-cut", "forward", "backward")


@dataclass
class Part:
    """One graph of a figure, with what a drawing shows besides the graph itself.

    ``prefix``: the ids of its drawn nodes (see ``ir/dot.py``); ``arg_names``/``out_names``:
    labels per input/output; ``input_style``: {input index: (label, style)} (residuals);
    ``skip_outputs``: outputs drawn as links to another part instead; ``groups``: the fused
    loops [(label, [node index])]; ``code``: {node index: [(line number, generated line)]}.
    """
    title: str
    graph: object
    prefix: str
    arg_names: list = None
    out_names: list = None
    input_style: dict = field(default_factory=dict)
    skip_outputs: tuple = ()
    groups: list = field(default_factory=list)
    code: dict = field(default_factory=dict)


@dataclass
class Figure:
    """A stage as graphs: ``parts`` side by side; ``links`` [(part, output, part, input,
    label)] join one part's outputs to another's inputs (a forward's residuals)."""
    stage: str
    heading: str
    parts: list
    links: list = field(default_factory=list)

    def statements(self, lines=False, collapse=False):
        """(Graphviz statements of the parts, the link edges between them); ``collapse``
        draws each fused loop as one node."""
        drawn = [statements(p.graph, p.prefix, p.arg_names, p.out_names, lines,
                            p.groups, collapse, p.input_style, p.skip_outputs) for p in self.parts]
        if len(drawn) == 1:
            stmts = drawn[0].stmts
        else:
            stmts = [s for p, d in zip(self.parts, drawn, strict=True)
                     for s in cluster(p.prefix, p.title, d.stmts)]
        links = [link(drawn[a].producers[o], drawn[b].inputs[i], label)
                 for a, o, b, i, label in self.links]
        return stmts, links

    def dot(self, lines=False, collapse=False):
        """Graphviz text of this figure alone."""
        stmts, links = self.statements(lines, collapse)
        return document(self.heading, stmts + links)


class Lowered:
    """The stages of one ConcreteFunction; each computes on demand (see ``STAGES``).

    ``arg_names``: the Python name of each flat argument (``x``, ``xs[1]``), when known."""

    def __init__(self, concrete, arg_names=None):
        self.concrete = concrete
        self.arg_names = arg_names

    def __repr__(self):
        g = self.concrete.graph
        return (f"<Lowered {self.concrete.name}({', '.join(self.input_names())}): "
                f"{len(g.nodes)} traced nodes, {len(g.outputs)} outputs; stages: {', '.join(STAGES)}>")

    def input_names(self):
        """A label per graph input: the argument's name, a variable's name, or 'captured i'."""
        out, n = [], len(self.concrete.graph.inputs)
        for i, (kind, what) in enumerate(self.concrete.sources or [("arg", k) for k in range(n)]):
            if kind == "arg":
                known = self.arg_names and what < len(self.arg_names)
                out.append(self.arg_names[what] if known else f"arg {what}")
            elif kind == "var":
                out.append(f"variable {getattr(what, 'name', '?')}")
            else:
                out.append(f"captured {i}")
        return out

    @property
    def traced(self):
        return print_graph(self.concrete.graph)

    def passes(self, lines=False):
        """[(pass name, printed graph after it)] for the program a plain call runs; ``lines``:
        each node with its user line."""
        graph = self.concrete.graph
        out = [("input", print_graph(graph, lines))]
        for item in FINAL:   # one pass at a time: the graph after each, not only its text
            dump = []
            graph = run_passes(graph, [item], dump=dump)
            out.append((dump[-1][0], print_graph(graph, lines)))
        return out

    @property
    def optimized(self):
        return self.passes()[-1][1]

    @functools.cached_property
    def _tape(self):
        """(forward, backward, number of residuals): the programs a tape runs, as they run.
        Built once per Lowered: the forward and backward stages and the figures share it."""
        fwd, bwd, n_res = self.concrete.tape_pair()
        return backend.optimize(fwd.graph), backend.optimize(bwd.graph), n_res

    def tape_programs(self, user_lines=False):
        """(forward text, backward text, residual lines, total residual bytes) used under a
        tape; ``user_lines``: each node with the user's ``file:line``."""
        fwd, bwd, n_res = self._tape
        residuals = fwd.outputs[len(fwd.outputs) - n_res:]
        total = sum(_bytes(v.aval) or 0 for v in residuals)
        lines = [f"{aval_str(v.aval)}  {_bytes_text(v.aval)}" for v in residuals]
        return print_graph(fwd, user_lines), print_graph(bwd, user_lines), lines, total

    def min_cut(self, lines=False):
        """The min-cut partition of the joint graph (recomputing cheap ops): its residual report."""
        joint = self.concrete.joint()
        fwd, bwd, info = partition(joint.graph, joint.n_primals, joint.n_outputs)
        return print_graph(fwd, lines), print_graph(bwd, lines), info

    def source(self):
        return _source(backend.compile(self.concrete.graph, self.concrete.name))

    def vectorized(self):
        """[(report line, printed batched program)] for each jacobian vectorized into this graph."""
        return [(f"{mode} mode, {v.report()}", print_graph(v.graph))
                for mode, v in REPORTS.get(self.concrete.graph, [])]

    def dot(self, stages=("traced",), lines=False, collapse=False):
        """Graphviz text of the graph stages ``stages`` (each figure a cluster of one digraph)."""
        figures = self.figures(stages)
        if len(figures) == 1:
            return figures[0].dot(lines, collapse)
        stmts, links = [], []
        for k, f in enumerate(figures):   # several: each in a cluster, links at the top level
            body, more = f.statements(lines, collapse)
            stmts += cluster(f"stage{k}", f.heading, body)
            links += more
        return document(self.concrete.name, stmts + links)

    # -- the stages as graphs -----------------------------------------------------------------

    def figures(self, names=GRAPH_STAGES):
        """[Figure] for the graph stages in ``names`` (forward and backward are one figure)."""
        out, names = [], [n for n in GRAPH_STAGES if n in names]
        for name in names:
            if name == "backward" and "forward" in names:
                continue
            out += getattr(self, "_figure_" + name.replace("-", "_"))()
        return out

    def _outputs(self, graph):
        n = len(graph.outputs)
        return ["output"] if n == 1 else [f"output {i}" for i in range(n)]

    def _figure_traced(self):
        g = self.concrete.graph
        return [Figure("traced", f"traced: {self.concrete.name}",
                       [Part("traced", g, "t_", self.input_names(), self._outputs(g))])]

    def _figure_program(self):
        g = backend.optimize(self.concrete.graph)
        part = Part("program", g, "p_", self.input_names(), self._outputs(g))
        _codegen(part, self.concrete.name)
        return [Figure("program", "program (a plain call)", [part])]

    def _grad_labels(self, graph_outputs):
        """(cotangent input labels, gradient output labels) of this function's backward."""
        g, names = self.concrete.graph, self.input_names()
        outs = self._outputs(g)
        cts = [f"grad of {outs[i]}" for i, v in enumerate(g.outputs) if v.aval.dtype.is_floating]
        grads = [f"grad {names[i]}" for i, v in enumerate(g.inputs) if v.aval.dtype.is_floating]
        return cts, grads if len(grads) == graph_outputs else None

    def _figure_joint(self):
        why = self._no_gradient()
        if why:
            return []
        joint = self.concrete.joint()
        cts, grads = self._grad_labels(len(joint.graph.outputs) - joint.n_outputs)
        g = joint.graph
        return [Figure("joint", "joint (forward + backward)", [Part(
            "joint", g, "j_", self.input_names() + cts,
            self._outputs(self.concrete.graph) + (grads or [f"grad {i}" for i in range(
                len(g.outputs) - joint.n_outputs)]))])]

    def _pair(self, stage, heading, fwd, bwd, n_res, prefix, name):
        """A forward and its backward side by side, each residual a link between them."""
        n_out = len(fwd.outputs) - n_res
        names = self._outputs(self.concrete.graph)
        cts, grads = self._grad_labels(len(bwd.outputs))
        style = {j: (f"residual {j}", RESIDUAL) for j in range(n_res)}
        style.update({n_res + i: (label, INPUT) for i, label in enumerate(cts)})
        f = Part("forward", fwd, prefix + "f_", self.input_names(),
                 names[:n_out] + [f"residual {j}" for j in range(n_res)],
                 skip_outputs=tuple(range(n_out, n_out + n_res)))
        b = Part("backward", bwd, prefix + "b_", None, grads, input_style=style)
        if name:
            _codegen(f, f"{name}_forward")
            _codegen(b, f"{name}_backward")
        links = [(0, n_out + j, 1, j, f"residual {j}: {_bytes_text(v.aval)}")
                 for j, v in enumerate(fwd.outputs[n_out:])]
        return Figure(stage, heading, [f, b], links)

    def _figure_forward(self):
        if self._no_gradient():
            return []
        fwd, bwd, n_res = self._tape
        return [self._pair("forward", "forward and backward (what runs under a tape)",
                           fwd, bwd, n_res, "", self.concrete.name)]

    _figure_backward = _figure_forward

    def _figure_min_cut(self):
        if self._no_gradient():
            return []
        joint = self.concrete.joint()
        fwd, bwd, info = partition(joint.graph, joint.n_primals, joint.n_outputs)
        return [self._pair("min-cut", f"min-cut: {len(info)} residuals, {info.total_bytes} bytes",
                           fwd, bwd, len(info), "m_", None)]

    def stages(self, names=DEFAULT_STAGES, diff=False, lines=False):
        """[(heading, text)] for the stages ``names`` (in ``STAGES`` order); ``diff``: the
        passes as unified diffs against the graph before each; ``lines``: each node with the
        user's ``file:line``."""
        unknown = set(names) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown stage {sorted(unknown)[0]!r}; stages: {', '.join(STAGES)}")
        out = []
        for name in (n for n in STAGES if n in names):
            out += getattr(self, "_stage_" + name.replace("-", "_"))(diff, lines)
        return out

    def as_text(self, passes=False, source=False, stages=None, diff=False, lines=False):
        """The stages as one text: the default ones, plus the passes and the source (with the
        size classes) if asked."""
        if stages is None:
            stages = DEFAULT_STAGES + (("passes",) if passes else ()) + (("sizes", "source") if source else ())
        return "\n".join(f"== {heading}\n{text}" if text else f"== {heading}"
                         for heading, text in self.stages(stages, diff, lines))

    # -- one method per stage: [(heading, text)] ---------------------------------------------

    def _stage_traced(self, diff, lines):
        return [(f"traced: {self.concrete.name}", print_graph(self.concrete.graph, lines))]

    def _stage_passes(self, diff, lines):
        out, previous = [], None
        for name, text in self.passes(lines):
            if previous is not None and text != previous:
                out.append((f"after {name}", _diff(previous, text, name) if diff else text))
            previous = text
        return out or [("passes: none changed the graph", "")]

    def _stage_program(self, diff, lines):
        return [("program (a plain call)", self.passes(lines)[-1][1] if lines else self.optimized)]

    def _stage_jacobians(self, diff, lines):
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

    def _stage_joint(self, diff, lines):
        why = self._no_gradient()
        return [(why, "")] if why else [("joint (forward + backward)",
                                          print_graph(self.concrete.joint().graph, lines))]

    def _stage_min_cut(self, diff, lines):
        why = self._no_gradient()
        if why:
            return [(why, "")]
        fwd, bwd, info = self.min_cut(lines)
        lines = [f"   {r.name}: {aval_str(r.aval)}  {r.nbytes} bytes ({r.kind})" for r in info]
        lines.append(f"   recomputed in the backward: {', '.join(info.recomputed) or 'nothing'}")
        return [("min-cut forward", fwd), ("min-cut backward", bwd),
                (f"min-cut residuals: {len(info)}, {info.total_bytes} bytes", "\n".join(lines))]

    def _stage_forward(self, diff, lines):
        why = self._no_gradient()
        if why:
            return [(why, "")]
        fwd, _, lines, total = self.tape_programs(lines)
        unknown = sum("? elements" in ln for ln in lines)   # sizes known only at run time
        size = f"{total} bytes" + (f" + {unknown} of run-time size" if unknown else "")
        return [("forward (outputs + residuals)", fwd),
                (f"residuals: {len(lines)}, {size}", "\n".join(f"   {ln}" for ln in lines))]

    def _stage_backward(self, diff, lines):
        if self._no_gradient():
            return []
        return [("backward (residuals + cotangents)", self.tape_programs(lines)[1])]

    def _stage_loops(self, diff, lines):
        """Each loop gradient of the programs that run (after the final passes, so a While
        fused with its WhileGrad shows as the WhileWithGrad that runs): its mode and bytes."""
        programs = [("a plain call", backend.optimize(self.concrete.graph))]
        if not self._no_gradient():
            fwd, bwd, _ = self._tape
            programs += [("the forward under a tape", fwd), ("the backward under a tape", bwd)]
        out = []
        for what, graph in programs:
            loops = [n for n in _all_nodes(graph) if n.op in OPS and OPS[n.op].stores_rows]
            if loops:
                out.append((f"loop gradients of {what}: {len(loops)}",
                            "\n".join(_loop_text(n) for n in loops)))
        return out

    def _stage_sizes(self, diff, lines):
        out = [(f"size classes: {self.concrete.name} (a plain call)",
                _size_classes(self.concrete.graph, self.concrete.name))]
        if not self._no_gradient():
            fwd, bwd, _ = self.concrete.tape_pair()
            for what, fn in (("forward", fwd), ("backward", bwd)):
                out.append((f"size classes: {what}", _size_classes(fn.graph, fn.name)))
        return out

    def _stage_source(self, diff, lines):
        out = [(f"generated source: {self.concrete.name} (a plain call)", self.source())]
        if not self._no_gradient():
            fwd, bwd, _ = self.concrete.tape_pair()
            for what, fn in (("forward", fwd), ("backward", bwd)):
                out.append((f"generated source: {what}", _source(backend.compile(fn.graph, fn.name))))
        return out


def _codegen(part, name):
    """The fused loop groups of ``part``'s program and the generated lines of each node, as
    the Numba backend generates them (generating is cheap: nothing is compiled)."""
    index = {id(n): k for k, n in enumerate(part.graph.nodes)}
    try:
        steps = plan(part.graph)
        generated = generate(part.graph, name)
    except (Unsupported, KeyError):   # an op without a template: the interpreter runs it
        return
    for step in steps:
        if isinstance(step, Group):
            nodes = sorted(index[id(n)] for n in step.members + step.reductions)
            part.groups.append((f"fused loop over {list(step.shape)}", nodes))
    source = generated.source.split("\n")
    for lineno, node in sorted(generated.line_nodes.items()):
        if id(node) in index:
            part.code.setdefault(index[id(node)], []).append((lineno, source[lineno - 1]))


def _all_nodes(graph):
    """The nodes of ``graph`` and of the graphs its nodes carry (branches, bodies)."""
    for node in graph.nodes:
        yield node
        for attr in node.attrs.values():
            if isinstance(attr, Graph):
                yield from _all_nodes(attr)


def _loop_text(node):
    title, *rest = loops_describe(node)
    where = f" ({line_str(node)})" if node.line else ""
    return "\n".join([f"   {_node_outputs(node)}{where}: {title}"] + [f"      {r}" for r in rest])


def _node_outputs(node):
    return f"{node.op} -> " + ", ".join(aval_str(v.aval) for v in node.outputs)


def _size_classes(graph, name):
    """The size classes of the program the Numba backend generates for ``graph`` (generated,
    not compiled: ``codegen/sizeclass.py``); unknown dims are generated at 1."""
    if backend.get_backend() != "numba":
        return "   (NumPy interpreter backend: no generated program)"
    graph, note = backend.optimize(graph), ""
    shapes = [tuple(1 if d is None else d for d in v.aval.shape) for v in graph.inputs]
    if any(None in v.aval.shape for v in graph.inputs):          # as compile_graph decides
        graph, note = concretize(graph, shapes), "   (unknown dims generated at 1: each call generates for its sizes)\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InterpreterFallbackWarning)   # said below
            generated = generate(graph, name)
    except Unsupported as e:
        return f"   not generated: {e} (a graph the Numba backend cannot generate runs on the interpreter)"
    return note + generated.size_classes.text() + "\n   " + blas_threads.describe()


def _source(program):
    return getattr(program, "source", None) or "(NumPy interpreter backend: no generated source)"


def _diff(before, after, name):
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(), "before", name,
                                          lineterm="", n=1))
