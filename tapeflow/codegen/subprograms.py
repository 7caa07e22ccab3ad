"""Repeated steps emitted once: each fused loop of a program becomes a jitted function of the
module, one per distinct text, called where the loop was.

Why: Numba's compile time grows much faster than a function's length (type inference and
LLVM's passes over every variable and block), and a deep network repeats the same layer, and
its derivatives, many times: W15's second-order step (8 x Dense(20, tanh)) generated 3,448
lines in seven parts of up to 650 lines, about a minute of compile. Outlined, a part is a
sequence of calls and GEMMs, and each distinct loop compiles once, however often it runs.

Two loops are the same function when their text is the same after renaming (``canonical``):
arguments ``a0, a1, ...`` and locals ``l0, l1, ...`` in order of first appearance. The text
is all the code, so equal text computes the same thing for the same argument types, and
Numba compiles one version per argument types (a float64 use of a float32 loop is another
overload of the same function, not wrong code). Sizes baked into the text (``range(10000)``)
are part of it. The text depends only on the graph's structure, as the rest of the source.

Errors raised inside a shared loop name the nodes of its first use (the lines map to them).
"""
import ast
import re
import tokenize
from io import StringIO

# Module-level names the generated code reads (generate.HEADER) and Python's builtins it uses.
_GLOBALS = {"math", "np", "njit", "objmode", "prange", "fm", "rt", "range", "len", "min", "max",
            "abs", "int", "float", "bool", "True", "False", "None", "ValueError", "IndexError",
            "ZeroDivisionError", "print", "round", "pow"}
def _parse(lines):
    """The ast of a span's statements, or None when it is no complete block of statements."""
    text = "\n".join("    " * (d - 1) + t for d, t, _ in lines)
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _names(tree):
    """(loaded, stored) plain names of ``tree``, each in order of first appearance."""
    loaded, stored = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            target = stored if isinstance(node.ctx, ast.Store) else loaded
            target.setdefault(node.id, (node.lineno, node.col_offset))
    order = lambda d: [k for k, _ in sorted(d.items(), key=lambda kv: kv[1])]  # noqa: E731
    return order(loaded), order(stored)


def canonical(lines, args, local_names):
    """The span's lines with ``args`` renamed ``a0, a1, ...`` and other locals ``l0, l1, ...``."""
    mapping = {n: f"a{k}" for k, n in enumerate(args)}
    for n in local_names:
        if n not in mapping:
            mapping[n] = f"l{len(mapping) - len(args)}"
    out = []
    for d, text, owner in lines:
        out.append((d, _rename(text, mapping), owner))
    return out, mapping


def _rename(text, mapping):
    """``text`` with its plain names (not attributes, not keyword-argument names, not inside
    strings) renamed by ``mapping``."""
    toks = list(tokenize.generate_tokens(StringIO(text).readline))
    pieces, last_end, prev = [], 0, None
    for k, tok in enumerate(toks):
        if tok.type == tokenize.ENDMARKER or tok.type == tokenize.NEWLINE:
            break
        start = tok.start[1]
        pieces.append(text[last_end:start])
        s = tok.string
        if tok.type == tokenize.NAME and s in mapping and not (prev is not None and prev.string == "."):
            nxt = toks[k + 1] if k + 1 < len(toks) else None
            kwarg = (nxt is not None and nxt.string == "=" and prev is not None
                     and prev.string in ("(", ","))
            if not kwarg:
                s = mapping[s]
        pieces.append(s)
        last_end = tok.end[1]
        prev = tok
    pieces.append(text[last_end:])
    return "".join(pieces)


def step_regions(lines, spans, limit):
    """A long program's parts: consecutive steps up to and including the next one holding a
    loop (a layer's GEMM and its fused loop), each region at most about ``limit`` lines."""
    regions, begin = [], None
    for b, e in spans:
        if begin is None:
            begin = b
        tree = _parse(lines[b:e])
        loop = tree is None or any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(tree))
        if loop or e - begin >= limit:
            regions.append((begin, e))
            begin = None
    if begin is not None:
        regions.append((begin, spans[-1][1]))
    return regions or [(0, 0)]


def self_contained(lines, regions, prefix):
    """Whether every region reads, besides what it defines, only value variables (``v...``:
    the names generate.py passes between parts), module globals and this program's functions:
    else (a temporary read across steps) the program is cut the usual way."""
    for b, e in regions:
        tree = _parse([ln for ln in lines[b:e] if not ln[1].lstrip().startswith("#")])
        if tree is None:
            return False
        loaded, stored = _names(tree)
        if any(n not in stored and n not in _GLOBALS and not _is_module_function(n, prefix)
               and not re.fullmatch(r"v[a-z]+", n) for n in loaded):
            return False
    return True


class Shared:
    """The parts of one program, one jitted function per distinct canonical text."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.by_key = {}

    def function(self, lines, args, rets):
        """(name, arguments, None) when an equal region was emitted already, else (name,
        arguments, (params, body lines, returned names)) to emit: ``lines`` without their
        comment-only lines (they name this use's values), renamed by ``canonical``; the
        arguments are ``args`` less those only a comment names. None when ``lines`` do not
        parse."""
        body = [ln for ln in lines if not ln[1].lstrip().startswith("#")]
        tree = _parse(body)
        if tree is None:
            return None
        loaded, stored = _names(tree)
        args = [n for n in args if n in loaded or n in stored]     # (not only in a comment)
        local_names = [n for n in dict.fromkeys(loaded + stored)
                       if n not in _GLOBALS and not _is_module_function(n, self.prefix)]
        body, mapping = canonical(body, args, local_names)
        params = [mapping[n] for n in args]
        outs = [mapping.get(n, n) for n in rets]
        key = (f"{len(params)}\n" + "\n".join(f"{d}:{t}" for d, t, _ in body)
               + "\n->" + ",".join(outs))
        name = self.by_key.get(key)
        if name is not None:
            return name, args, None
        name = self.by_key[key] = f"{self.prefix}_step{len(self.by_key) + 1}"
        return name, args, (params, body, outs)


def _is_module_function(name, prefix):
    """A function the module defines for this program (a shared nested graph, a step)."""
    return name.startswith(prefix + "_")
