"""A traced function's repeated call as generated straight-line Python: key lookup, one
program call, wrapping.

A repeated call of a small program is mostly Python (BENCHMARKS.md, "What a compiled call
costs here"): every loop over the argument list, every attribute lookup and every frame is a
share of it. So the path a repeated call takes is written out as code per function and
argument structure instead of loops:

- ``function_caller(structure, ...)``: a ``Function.__call__`` for one argument structure
  (positional tensors, or flat lists/tuples of them), installed by giving the Function
  instance a subclass of its own. It unpacks the arguments, builds the key (class, shape,
  dtype per tensor leaf) as one tuple display and looks it up; a miss, keyword arguments or
  any other structure take the general path.
- ``fast_caller(...)``: a ConcreteFunction's call when nothing watches the thread's ops
  (``recorder.STATE``: no tape, trace or custom_gradient): the leaves' arrays in, the
  program's results wrapped into the output structure. A single-part program whose inputs
  are all scalars is called through its overload's ``entry_point`` (no type dispatch): the
  key pins every argument's dtype, and Numba's scalar unboxing converts any number exactly;
  array inputs go through the dispatcher, which checks layout and dtype.
"""
import enum
import os

import numpy as np

from ..codegen.failures import failure_handler
from ..runtime.recorder import STATE
from ..runtime.tensor import Tensor, Variable, _next_id, wrap
from ..runtime.placement_log import ENABLED as LOG_PLACEMENT
from ..runtime.traceback_filter import drop_internal_frames
from .outputs import ConstLeaf, OutRef


def leaf_key(leaves):
    """The key ``function_caller`` builds, from the flat leaves (for the general path to store)."""
    return tuple([x for a in leaves for x in (a.__class__, a._value.shape, a._value.dtype)])


def structure_of(args):
    """Per positional argument: None for a tensor leaf, (list or tuple, n) for a flat sequence
    of them; None overall if any leaf is something else (such calls always take the general path)."""
    out = []
    for a in args:
        if isinstance(a, (Tensor, Variable)):
            out.append(None)
        elif type(a) in (list, tuple) and all(isinstance(b, (Tensor, Variable)) for b in a):
            out.append((type(a), len(a)))
        else:
            return None
    return tuple(out)


def function_caller(structure, fast_get, general):
    """``__call__(self, *args, **kwargs)`` for ``structure`` (see ``structure_of``)."""
    unpack, checks, leaves = [], [], []
    for k, s in enumerate(structure):
        if s is None:
            leaves.append(f"a{k}")
            continue
        kind, n = s
        checks.append(f"a{k}.__class__ is {kind.__name__}")
        names = [f"a{k}_{j}" for j in range(n)]
        leaves.extend(names)
        unpack.append(f"({''.join(x + ', ' for x in names)}) = a{k}" if n else f"if a{k}: raise ValueError")
    values = [f"{a}_v = {a}._value" for a in leaves]
    key = "".join(f"{a}.__class__, {a}_v.shape, {a}_v.dtype, " for a in leaves)
    args = "".join(f"a{k}, " for k in range(len(structure)))
    lines = ["def __call__(self, *args, **kwargs):",
             f"    if not kwargs and len(args) == {len(structure)}:",
             f"        ({args}) = args"]
    ind = "        "
    if checks:
        lines.append(f"{ind}if {' and '.join(checks)}:")
        ind += "    "
    lines.append(f"{ind}try:")
    lines.extend(f"{ind}    {u}" for u in unpack + values)
    lines.append(f"{ind}    key = ({key})")
    lines.append(f"{ind}except (AttributeError, ValueError):")
    lines.append(f"{ind}    pass")
    lines.append(f"{ind}else:")
    lines.append(f"{ind}    c = fast_get(key)")
    lines.append(f"{ind}    if c is not None and not log_placement[0]:")
    flat = "args" if not checks else f"({''.join(x + ', ' for x in leaves)})"
    lines.append(f"{ind}        return c.fast({flat})")
    lines.append("    return general(self, args, kwargs)")
    # an error leaves without tapeflow's frames (runtime/traceback_filter.py); free until one does
    lines[1:] = ["    try:"] + ["    " + line for line in lines[1:]] + [
        "    except Exception as e:", "        drop_internal_frames(e)", "        raise"]
    return _compile("\n".join(lines), "__call__", fast_get=fast_get, general=general,
                    drop_internal_frames=drop_internal_frames, log_placement=LOG_PLACEMENT)


class Result(enum.Enum):
    """How ``fast`` turns one program result (the Python expression ``r[k]``, converted) into
    a Tensor: by ``wrap`` (arrays: read-only, 0-d arrays unwrapped), or as a scalar Tensor
    (a NumPy scalar the fast path made itself: built in place when that is safe)."""
    WRAPPED = "wrap"
    SCALAR = "scalar"


def _result(kind, k, ns):
    """(Result, expression) for result ``k`` of a program whose ``out_kinds`` entry is ``kind``."""
    if kind == "any":       # the interpreter: NumPy scalars or arrays
        return Result.WRAPPED, f"asarray(r[{k}])"
    if kind == "copy":      # an array the program also keeps: the caller gets its own
        return Result.WRAPPED, f"r[{k}].copy()"
    if kind == "array":
        return Result.WRAPPED, f"r[{k}]"
    if kind is np.float32:
        # Numba returns a Python float holding a float32 value; adding float32 -0.0 gives
        # that value as np.float32 exactly (NumPy 2's weak Python scalars) without the
        # constructor's argument parsing; -0.0 keeps the sign of zeros
        ns["neg0_f32"] = np.float32(-0.0)
        return Result.SCALAR, f"r[{k}] + neg0_f32"
    ns[f"c{k}"] = kind      # another scalar type: Numba returns Python numbers
    return Result.SCALAR, f"c{k}(r[{k}])"


def assigns_inline(concrete, program):
    """Whether ``fast_caller`` may write ``concrete``'s assigns itself: every assigned variable
    captured (not an argument) and a plain ``Variable`` (its ``assign`` only stores the value),
    and a compiled program (its results are arrays it made, or copies: never an array that
    something else may write)."""
    return (getattr(program, "out_kinds", None) is not None
            and all(kind == "var" and type(ref) is Variable for kind, ref in concrete.assigned))


def _stored(kind, k, ns):
    """The expression of result ``k`` as a variable's stored value (what ``Variable.assign``
    keeps of the wrapped result: a read-only array, or a NumPy scalar)."""
    if kind in ("array", "copy"):
        return f"readonly(r[{k}]{'.copy()' if kind == 'copy' else ''})"
    return _result(kind, k, ns)[1]


def _readonly(a):
    a.flags.writeable = False
    return a


def fast_caller(concrete, program):
    """The plain call of ``concrete`` running ``program``: ``fast(flat_args)``. The assigns of
    a compiled program (``assigns_inline``) are stores of its results into the variables: a
    training step's ~20 updated weights, slots and totals cost no ``assign`` calls."""
    ns = {"STATE": STATE, "Tensor": Tensor, "wrap": wrap, "asarray": np.asarray,
          "slow": concrete.call_slow, "new": object.__new__, "next_id": _next_id}
    values = []
    for j, (kind, ref) in enumerate(concrete.sources):
        if kind == "arg":
            values.append(f"a{ref}._value")
        else:          # a captured variable or tensor: read its current value on each call
            ns[f"s{j}"] = ref
            values.append(f"s{j}._value")
    entry = getattr(program, "entry", None)
    direct = entry is not None and all(not v.aval.shape for v in concrete.graph.inputs)
    if direct:
        ns["run"] = entry
        for k, c in enumerate(program.consts):
            ns[f"k{k}"] = c
            values.append(f"k{k}")
    else:
        ns["run"] = program
    kinds = getattr(program, "out_kinds", None) or ["any"] * len(concrete.graph.outputs)
    n_out = concrete.n_out
    results = [_result(kind, k, ns) for k, kind in enumerate(kinds[:n_out])]
    ns["readonly"] = _readonly
    stores = []
    for j, (_, ref) in enumerate(concrete.assigned):
        ns[f"v{j}"] = ref
        stores.append(f"    v{j}._value = {_stored(kinds[n_out + j], n_out + j, ns)}")
    if _simple(concrete.out_template):
        built = _structure_expr(concrete.out_template, ns)
    else:       # dicts, namedtuples, ...: the concrete function's general builder
        ns["build"] = concrete._build
        built = f"build(({''.join(f'o{k}, ' for k in range(len(results)))}))"
    lines = ["def fast(args):",
             "    if STATE.tapes or STATE.var_watchers or STATE.traces:",
             "        return slow(args)"]
    used = sorted({ref for kind, ref in concrete.sources if kind == "arg"})
    lines.extend(f"    a{k} = args[{k}]" for k in used)
    if direct:
        # the program's own caller is bypassed: an op rejecting its data raises from here
        # (``failed`` raises; for a failed check of a size only the run knows it returns the
        # interpreter's results, codegen/failures.py)
        ns["failed"] = failure_handler(program.graph, program.name)
        n_in = len(concrete.graph.inputs)
        lines += ["    try:", f"        r = run({', '.join(values)})",
                  "    except (ValueError, IndexError, ArithmeticError) as e:",
                  f"        r = failed(e, ({''.join(v + ', ' for v in values[:n_in])}))"]
    else:
        lines.append(f"    r = run({', '.join(values)})")
    for k, (how, expr) in enumerate(results):
        if how is Result.WRAPPED:
            lines.append(f"    o{k} = wrap({expr})")
        elif _PLAIN_TENSOR:     # Tensor.__init__'s assignments, without its frame
            lines.extend([f"    o{k} = new(Tensor)", f"    o{k}._value = {expr}",
                          f"    o{k}._id = next_id()"])
        else:
            lines.append(f"    o{k} = Tensor({expr})")
    lines.extend(stores)
    lines.append(f"    return {built}")
    return _compile("\n".join(lines), "fast", **ns)


def _plain_tensor_init():
    """Whether ``Tensor(v)`` only sets ``_value`` and a fresh ``_id``: then fast calls build
    scalar Tensors without the ``__init__`` frame, which for a scalar program is a sizeable
    share of the call. Checked against the class itself, so a richer constructor turns this
    off rather than being skipped."""
    code = Tensor.__init__.__code__
    return (Tensor.__slots__ == ("_value", "_id", "__weakref__")
            and code.co_names == ("_value", "_next_id", "_id"))


_PLAIN_TENSOR = _plain_tensor_init()


def _simple(template):
    """Whether the output structure is tensor and constant leaves in lists and tuples only."""
    if isinstance(template, (OutRef, ConstLeaf)):
        return True
    return type(template) in (list, tuple) and all(_simple(t) for t in template)


def _structure_expr(template, ns):
    """Python expression building the output structure from o0, o1, ... (see ``_simple``)."""
    if isinstance(template, OutRef):
        return f"o{template.index}"
    if type(template) in (list, tuple):
        items = "".join(_structure_expr(t, ns) + ", " for t in template)
        return f"[{items}]" if type(template) is list else f"({items})"
    name = f"q{len(ns)}"       # a ConstLeaf leaf
    ns[name] = template.value
    return name


def _compile(source, name, **ns):
    # a file name inside the package, so errors.user_frame skips these frames as tapeflow's
    code = compile(source, os.path.join(os.path.dirname(__file__), f"<generated {name}>"), "exec")
    exec(code, ns)       # noqa: S102 - our own generated text
    fn = ns[name]
    fn.__source__ = source
    return fn


__all__ = ["function_caller", "fast_caller", "assigns_inline", "structure_of", "leaf_key"]
