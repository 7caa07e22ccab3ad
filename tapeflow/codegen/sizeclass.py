"""Size classes: the speed-only choices a program took on sizes read from its inputs.

The source reads every size from its arguments (shape_free.py), so traces differing only in
sizes share one program, except where generation chose something for speed on a size: a
loop runs in parallel from ``PARALLEL_WORK`` (emitter.py), a fresh array asks for huge pages
from a sixteenth of ``HUGEPAGE_BYTES``, a long program is not cut where big intermediates
would cross the cut (``CUT_BYTES``, generate.py). Such a choice is never a guard (either
side computes the same values), so sizes on its other side generate another source: another
size class, another Numba compile. ``choose`` takes these choices and records each one in
the generation's scope; ``SizeClasses`` (``Program.size_classes``, ``tapeflow dump --stage
sizes``) says which input sizes would produce another program.

The choices on the large side of a threshold (parallel, huge pages, no cut) are the
specialisations: a program that took none is shape-generic below its thresholds.
"""
import ast
import functools
import operator
import re
from dataclasses import dataclass

from .shape_free import Dim, RunDim, code, current, display, value

_CMP = {">=": operator.ge, ">": operator.gt, "<=": operator.le}
_NOT = {">=": "<", ">": "<=", "<=": ">"}
_SYMBOL = re.compile(r"\bv[a-z]+\.shape\[\d+\]")
_LIMIT = 1 << 48      # sizes past this are not searched for a crossover


@dataclass(frozen=True)
class Condition:
    """``size op threshold``: ``code`` is the size's expression (input sizes named by their
    class, as the entry check holds them equal), ``traced`` its value at this trace."""
    quantity: str          # "work", "bytes", ...
    code: str
    traced: int
    op: str                # ">=", ">" or "<="
    threshold: int
    name: str | None       # the constant compared with ("PARALLEL_WORK")
    unit: str = ""         # "B": bytes

    def holds(self, env):
        return _CMP[self.op](_evaluate(self.code, env), self.threshold)

    def text(self):
        shown = _shown(self.code)
        size = _number(self.traced, self.unit)
        amount = shown if shown == str(self.traced) else f"{shown} = {size}"
        op = self.op if _CMP[self.op](self.traced, self.threshold) else _NOT[self.op]
        bound = f"{self.name} {_number(self.threshold, self.unit)}" if self.name else str(self.threshold)
        return f"{self.quantity} {amount} {op} {bound}"


@dataclass(frozen=True)
class Decision:
    """One speed-only choice: ``yes`` if every condition holds, else ``no``; ``held`` says
    which this trace took. ``sizes``: (input size expression, traced value) of those read."""
    what: str
    conditions: tuple
    held: bool
    yes: str
    no: str
    sizes: tuple

    @property
    def choice(self):
        return self.yes if self.held else self.no

    @property
    def specialised(self):
        """Whether this trace took the large-size side (``yes``)."""
        return self.held

    def ranges(self):
        """{input size: (lo, hi)}: the values of that size (the others as traced) for which
        this choice is the same, ``hi`` None when unbounded."""
        env = dict(self.sizes)
        out = {}
        for sym, traced in self.sizes:
            def holds(x, sym=sym):
                return all(c.holds({**env, sym: x}) for c in self.conditions)
            lo, hi = _crossovers(holds, traced, self.held)
            if lo or hi is not None:
                out[sym] = (lo, hi)
        return out

    def text(self):
        conds = "; ".join(c.text() for c in self.conditions)
        other = _range_text(self.ranges(), outside=True)
        tail = f"; {self.no if self.held else self.yes}, another program, for {other}" if other else ""
        return f"{self.what}: {self.choice} ({conds}){tail}"


class SizeClasses:
    """What a generated program's speed choices tie it to: ``decisions`` (``Decision``) and
    its entry check's ``guards`` (source expressions), with ``text()`` for the dump."""

    def __init__(self, decisions=(), guards=()):
        self.decisions, self.guards = list(decisions), list(guards)

    def __iter__(self):
        return iter(self.decisions)

    def __len__(self):
        return len(self.decisions)

    @property
    def specialised(self):
        return [d for d in self.decisions if d.specialised]

    def ranges(self):
        """{input size: (lo, hi)}: the sizes (each with the others as traced) this program
        serves; other sizes generate another program."""
        out = {}
        for d in self.decisions:
            for sym, (lo, hi) in d.ranges().items():
                olo, ohi = out.get(sym, (0, None))
                out[sym] = (max(lo, olo), hi if ohi is None else ohi if hi is None else min(hi, ohi))
        return out

    def text(self, indent="   "):
        check = ([f"entry check (shapes it runs on): {', '.join(_shown(g) for g in self.guards)}"]
                 if self.guards else [])
        if not self.decisions:
            lines = ["shape-generic: one program for all sizes of this rank and dtype "
                     "(no speed choice depends on a size)"] + check
            return "\n".join(indent + ln for ln in lines)
        spec = self.specialised
        if spec:
            head = (f"size class: {len(spec)} speed choice{'s' if len(spec) > 1 else ''} "
                    f"specialised to these sizes")
        else:
            head = "shape-generic below its thresholds: no speed choice specialised to these sizes"
        lines = [head, f"this program serves {_range_text(self.ranges())}; other sizes generate "
                       f"another program (another Numba compile)"]
        if spec:
            lines.append("specialised:")
            lines += [f"   {d.text()}" for d in spec]
        rest = [d for d in self.decisions if not d.specialised]
        if rest:
            lines.append("thresholds not reached:")
            lines += [f"   {d.text()}" for d in rest]
        return "\n".join(indent + ln for ln in lines + check)


def choose(what, conditions, yes, no):
    """Whether every condition ``(quantity, size, op, threshold, name[, unit])`` holds at the
    traced sizes: a choice that changes speed, not results, so it records no guard. Inside a
    generation it is recorded (``SizeClasses``) when it depends on sizes read from the
    inputs; ``what`` is its description, or a function giving it (called only then). A
    condition on a size only the run knows (``symbolic.RunDim``) takes the small side
    (serial loops, no cut, no huge pages asked for) and splits no program."""
    if any(isinstance(c[1], RunDim) for c in conditions):
        return False        # a size only the run knows: the small side, which serves every size
    held = all(_CMP[c[2]](value(c[1]), c[3]) for c in conditions)
    scope = current()
    if scope is None:
        return held
    sized, sizes = [], {}
    for quantity, size, op, threshold, name, *unit in conditions:
        text = _canonical(scope, code(size)) if isinstance(size, Dim) else None
        symbols = _SYMBOL.findall(text) if text else ()
        if not symbols:
            if not _CMP[op](value(size), threshold):
                return held             # a fixed size decides: the same at every size
            continue
        sizes.update((s, scope.sizes[s]) for s in symbols)
        sized.append(Condition(quantity, text, value(size), op, threshold, name, *unit))
    if sized:
        if callable(what):
            with display():
                what = what()
        scope.decisions.append(Decision(what, tuple(sized), held, yes, no, tuple(sizes.items())))
    return held


def _canonical(scope, text):
    """``text`` with each input size read by the expression naming its class (sizes the
    entry check holds equal are one), so crossovers are searched over independent sizes."""
    for _ in range(8):
        new = _SYMBOL.sub(lambda m: _paren(scope.find(m.group(0))), text)
        if new == text:
            break
        text = new
    return text


def _paren(e):
    return e if re.fullmatch(r"-?\d+|[\w.\[\]]+", e) else f"({e})"


def _shown(text):
    """A source expression as the dump writes it: ``va.shape[0]`` is ``a.shape[0]`` (``a`` as
    the printed graph names the input)."""
    return re.sub(r"\bv([a-z]+)\.shape\[", r"\1.shape[", text)


def _evaluate(text, env):
    """The value of source expression ``text`` (integers, + - * // %, input sizes) with the
    input sizes ``env``."""
    def ev(n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.BinOp):
            return _ARITH[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        return env[ast.unparse(n)]
    return ev(_parsed(text))


@functools.lru_cache(maxsize=1024)
def _parsed(text):
    return ast.parse(text, mode="eval").body     # bisection evaluates one text many times


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _crossovers(holds, traced, held):
    """(lo, hi): the values of one size from ``lo`` up to ``hi - 1`` give ``held`` (``hi``
    None: up to any size), found by bisection (the sizes a choice reads grow with each
    input size)."""
    def same(x):
        try:
            return holds(x) == held
        except ArithmeticError:
            return False
    hi, step = None, max(traced, 1)
    while traced + step <= _LIMIT:
        if not same(traced + step):
            hi = _bisect(same, traced, traced + step)
            break
        step *= 2
    lo = 0
    if traced > 0 and not same(0):
        lo = _bisect(lambda x: not same(x), 0, traced)
    return lo, hi


def _bisect(good, a, b):
    """The first x in (a, b] with ``good(x)`` false, given good(a) and not good(b)."""
    while b - a > 1:
        m = (a + b) // 2
        if good(m):
            a = m
        else:
            b = m
    return b


def _range_text(ranges, outside=False):
    """``a.shape[0] from 84 to 3189`` (the sizes served), or with ``outside`` the sizes that
    generate another program (``a.shape[0] under 84 or of 3190 or more``)."""
    parts = []
    for sym, (lo, hi) in ranges.items():
        name = _shown(sym)
        if outside:
            sides = ([f"under {lo}"] if lo else []) + ([f"of {hi} or more"] if hi is not None else [])
            parts.append(f"{name} {' or '.join(sides)}")
        elif hi is None:
            parts.append(f"{name} of {lo} or more")
        elif not lo:
            parts.append(f"{name} under {hi}")
        else:
            parts.append(f"{name} from {lo} to {hi - 1}")
    if not parts:
        return ""
    text = "; ".join(parts)
    return text + " (each with the other sizes as traced)" if len(parts) > 1 else text


def _number(n, unit=""):
    """1536, 196.6K, 31.5M; with unit "B": 40 B, 392.0 KiB, 3.1 MiB."""
    if unit == "B":
        for k, suffix in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
            if n >= 1 << k:
                return f"{n / (1 << k):.1f} {suffix}"
        return f"{n} B"
    for k, suffix in ((9, "G"), (6, "M"), (3, "K")):
        if n >= 10 ** k and n >= 10_000:
            return f"{n / 10 ** k:.1f}{suffix}"
    return str(n)
