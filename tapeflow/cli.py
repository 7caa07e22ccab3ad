"""tapeflow: look inside compiled gradient programs and saved programs.

examples:
  tapeflow dump examples/mlp_step.py:loss --spec 'f32[4,3]' --spec 'f32[3,2]' --passes --source
  tapeflow dump examples/mlp_step.py:loss --spec 'f32[4,3]' --spec 'f32[3,2]' --format dot
  tapeflow dump examples/mlp_step.py:loss --spec 'f32[4,3]' --spec 'f32[3,2]' --format html -o graph.html
  tapeflow inspect SAVED_DIR
  tapeflow dump --saved SAVED_DIR:NAME
  tapeflow cache info            (tapeflow cache clear)

A spec is a dtype and a shape: f16 f32 f64 i8 i16 i32 i64 u8 bool, then [dims]; 'f32[]' is a
scalar. User mistakes print one line and exit with status 2; --debug shows the traceback.
"""
import argparse
import importlib
import importlib.util
import os
import re
import sys

import numpy as np

import tapeflow as tf
from tapeflow.codegen import cache, compile_queue
from tapeflow.saved_model.inspect import describe
from tapeflow.saved_model.loaded import find_function
from tapeflow.tracer.lower import GRAPH_STAGES, STAGES
from tapeflow.tracer.picture import GraphvizError, page, svg

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
           "i32": "int32", "i64": "int64", "u8": "uint8", "bool": "bool"}


class UsageError(Exception):
    """A mistake in what the user asked for: one line on stderr, exit status 2."""


def _where(exc):
    """' (at file.py:12)' for the innermost frame of an exception outside tapeflow, or ''."""
    tb, found = exc.__traceback__, None
    package = os.path.dirname(os.path.abspath(__file__))
    while tb is not None:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not filename.startswith(package + os.sep) and "importlib" not in filename:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return f" (at {found[0]}:{found[1]})" if found else ""


def _describe(exc):
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if "[at " in text else text + _where(exc)   # tapeflow's errors name the line


def parse_spec(text):
    """'f32[3,?]' -> TensorSpec((3, None), float32); 'f32[]' is a scalar."""
    m = re.fullmatch(r"\s*(\w+)\s*\[([^\]]*)\]\s*", text)
    if not m or m.group(1) not in _DTYPES:
        raise argparse.ArgumentTypeError(
            f"bad --spec {text!r}: expected e.g. 'f32[3,2]' with dtype one of {', '.join(_DTYPES)} "
            f"and '?' for an unknown dimension")
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    try:
        shape = [None if d == "?" else int(d) for d in dims]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad dimension in --spec {text!r}: dims are sizes or '?'") from None
    if any(d is not None and d < 0 for d in shape):
        raise argparse.ArgumentTypeError(f"bad dimension in --spec {text!r}: sizes are >= 0 ('?' "
                                         f"for an unknown one)")
    return tf.TensorSpec(shape, _DTYPES[m.group(1)])


def load_target(target):
    """The function named by 'path/to/file.py:name' or 'package.module:name'."""
    if ":" not in target:
        raise UsageError(f"expected MODULE:FUNC (a module name or a .py path), got {target!r}")
    mod_name, attr = target.rsplit(":", 1)
    try:
        if mod_name.endswith(".py") or os.sep in mod_name:
            spec = importlib.util.spec_from_file_location("_tapeflow_dump_target", mod_name)
            if spec is None or not os.path.isfile(mod_name):
                raise UsageError(f"no such file {mod_name!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            sys.path.insert(0, os.getcwd())
            module = importlib.import_module(mod_name)
    except UsageError:
        raise
    except ModuleNotFoundError as e:
        if e.name and mod_name.startswith(e.name):
            raise UsageError(f"no module named {e.name!r} (from {os.getcwd()})") from e
        raise UsageError(f"importing {mod_name} failed: {_describe(e)}") from e
    except Exception as e:
        raise UsageError(f"importing {mod_name} failed: {_describe(e)}") from e
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{mod_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{target} is not a function but a {type(obj).__name__}")
    return obj


def _concrete_args(specs):
    """Concrete zeros for each spec (unknown dims become 1): what dump traces with."""
    return [tf.constant(np.zeros([1 if d is None else d for d in s.shape], s.dtype.np)) for s in specs]


def load_saved_target(target):
    """(function, default arguments) for 'PATH' or 'PATH:NAME' naming a saved program's function.

    NAME is an attribute path of the loaded module ('dense.call') or a signature name; without
    it, the saved function itself, the module's only function, or its 'serving_default'.
    """
    path, name = (target, None) if os.path.isdir(target) or ":" not in target else target.rsplit(":", 1)
    try:
        loaded = tf.saved_model.load(path)
        return find_function(loaded, name)
    except (tf.saved_model.SavedModelError, LookupError) as e:
        raise UsageError(str(e)) from e


def cmd_dump(args):
    if args.saved:
        fn, default_args = load_saved_target(args.target)
        call_args = _concrete_args(args.spec) if args.spec else default_args
    else:
        if not args.spec:
            raise UsageError("dump needs one --spec per argument of the function, e.g. --spec 'f32[3,2]'")
        fn = load_target(args.target)
        if not isinstance(fn, tf.tracer.Function):
            fn = tf.function(fn)
        call_args = args.spec   # traced as specs: '?' dims are None in the body, as in TensorFlow
    _check_format(args)
    try:
        lowered = fn.lower(*call_args)
        if args.format == "text":
            text = lowered.as_text(passes=args.passes, source=args.source,
                                   stages=args.stage or None, diff=args.diff, lines=args.lines)
        elif args.format == "html":
            text = page(lowered, args.stage)
        else:
            text = lowered.dot(args.stage or ("traced",), lines=args.lines)
            text = svg(text) if args.format == "svg" else text
    except GraphvizError as e:
        raise UsageError(str(e)) from e
    except Exception as e:
        raise UsageError(f"tracing {args.target} failed: {_describe(e)}") from e
    _write(text, args.output)
    return 0


def _check_format(args):
    """What a picture cannot show is a usage error, not silently dropped."""
    if args.format == "text":
        return
    extra = [flag for flag in ("passes", "source", "diff") if getattr(args, flag)]
    if extra:
        raise UsageError(f"--{extra[0]} is for --format text (--format {args.format} draws graphs)")
    if args.format in ("dot", "svg"):
        text_only = [s for s in args.stage or () if s not in GRAPH_STAGES]
        if text_only:
            raise UsageError(f"stage {text_only[0]!r} is text, not a graph; --format "
                             f"{args.format} draws: {', '.join(GRAPH_STAGES)}")


def _write(text, path):
    if path in (None, "-"):
        print(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from e


def cmd_inspect(args):
    """Print what a saved program holds (validated: a bad program is an error, not a crash)."""
    try:
        print(describe(args.path))
    except tf.saved_model.SavedModelError as e:
        raise UsageError(str(e)) from e
    return 0


def cmd_bench(args):
    """Run ``benchmarks`` (beside the package in a checkout, else in the current directory)."""
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root in (os.getcwd(), checkout):
        if os.path.isdir(os.path.join(root, "benchmarks")) and root not in sys.path:
            sys.path.insert(0, root)
    try:
        from benchmarks.__main__ import main as bench_main  # the suite is in a source checkout only
    except ModuleNotFoundError as e:
        if e.name != "benchmarks":
            raise
        raise UsageError("no benchmarks/ here; the suite is not installed with the package: run "
                         "it from a checkout of tapeflow") from None
    rest = list(args.rest)
    if rest[:1] == ["--"]:   # `tapeflow bench -- --quick`: argparse keeps the separator
        rest = rest[1:]
    return bench_main(rest)


def cmd_cache(args):
    """``info``: where the compile cache is, what it holds, its cap; ``clear``: delete its programs."""
    try:
        if args.action == "clear":
            n = cache.clear()
            print(f"deleted {n} program{'s' * (n != 1)} from {cache.info()['directory']}")
            return 0
        i = cache.info()
    except ValueError as e:   # a bad TAPEFLOW_CACHE_* value
        raise UsageError(str(e)) from None
    n = i["entries"]
    print(f"directory: {i['directory']}\n"
          f"holds:     {n} program{'s' * (n != 1)}, {i['bytes'] / (1 << 20):.1f} MiB\n"
          f"cap:       {i['max_bytes'] / (1 << 20):.0f} MiB (TAPEFLOW_CACHE_MAX_MB; least recently "
          f"used programs are deleted past it)")
    c = compile_queue.status(i["directory"])
    print(f"compiling: {_names(c['running']) or 'nothing'}"
          + (f" (worker pid {c['worker']})" if c["worker"] else ""))
    print(f"queued:    {_names(c['queued']) or 'nothing'}")
    if i["problem"]:
        print(f"warning:   the directory {i['problem']}; programs are cached in a private "
              f"temporary directory instead")
    return 0


def _names(names, most=8):
    """``a, b, c`` (and how many more)."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """argparse's usage errors, as one line and status 2 like every other mistake."""
        raise UsageError(f"{message} (see '{self.prog} --help')")


def parser():
    ap = _Parser(prog="tapeflow", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"tapeflow {tf.__version__}")
    ap.add_argument("--debug", action="store_true", help="show the Python traceback of an error")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    d = sub.add_parser("dump", help="print a function's IR, the passes, its forward and backward "
                                    "programs and the generated source")
    d.add_argument("target", help="MODULE:FUNC (a module name or a .py path); with --saved, "
                   "PATH[:NAME], a saved program's function (NAME: attribute or signature)")
    d.add_argument("--saved", action="store_true",
                   help="TARGET is a saved program (tapeflow.saved_model.save); without --spec, "
                        "its first saved trace's argument types are used")
    d.add_argument("--spec", action="append", type=parse_spec, default=[],
                   help="one per argument, e.g. 'f32[3,2]'")
    d.add_argument("--passes", action="store_true", help="add the IR after each pass that changed it")
    d.add_argument("--source", action="store_true", help="add the generated Numba source of each program")
    d.add_argument("--stage", action="append", choices=list(STAGES), metavar="STAGE",
                   help="show only this stage (repeatable): " + "; ".join(
                       f"{name}: {what}" for name, what in STAGES.items()))
    d.add_argument("--diff", action="store_true", help="show each pass as a diff of the graph before it")
    d.add_argument("--lines", action="store_true",
                   help="annotate each node with the user's file:line that traced it")
    d.add_argument("--format", choices=("text", "dot", "svg", "html"), default="text",
                   help="text: the IR (default); dot: Graphviz text of the graph stages "
                        "(default the traced one); svg: that laid out by Graphviz's dot; html: "
                        "one self-contained page drawing every stage")
    d.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    d.set_defaults(func=cmd_dump)
    i = sub.add_parser("inspect", help="signatures, functions, ops, variables and custom gradients "
                                       "of a saved program")
    i.add_argument("path", help="a saved program's directory")
    i.set_defaults(func=cmd_inspect)
    c = sub.add_parser("cache", help="the compile cache: where it is and what it holds (info), "
                                     "or delete its programs (clear)")
    c.add_argument("action", choices=("info", "clear"))
    c.set_defaults(func=cmd_cache)
    b = sub.add_parser("bench", help="run the benchmark suite (see benchmarks/); options pass through")
    b.set_defaults(func=cmd_bench)
    return ap


def main(argv=None):
    """Run the command; a user mistake prints one line on stderr and returns 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    ap = parser()
    try:
        args, rest = ap.parse_known_args(argv)
        if args.cmd is None:
            ap.print_help()
            return 2
        if args.cmd != "bench" and rest:
            ap.error(f"unrecognized arguments: {' '.join(rest)}")
        args.rest = rest
        return args.func(args)
    except UsageError as e:
        if debug:
            raise
        print(f"tapeflow: {e}", file=sys.stderr)
        return 2


def run():
    """The console script: ``main``, quiet when the reader of its output goes away (``| head``)."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null so that says nothing either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 141   # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe
    sys.exit(status)


if __name__ == "__main__":
    run()
