"""The ``tapeflow`` command: ``dump`` a function's IR and programs, ``inspect`` a saved program,
``bench`` the suite.

    tapeflow dump examples/quickstart_fn.py:loss --spec 'f32[3,2]' --spec 'f32[2]' --passes --source
    tapeflow dump mypkg.model:step --spec 'f32[64,784]' --format dot > step.dot
    tapeflow dump --saved saved_dir:call_custom_grad --spec 'f32[]'
    tapeflow inspect saved_dir

No logic lives here that the library lacks: ``dump`` prints ``function(...).lower(...)``.
"""
import argparse
import importlib
import importlib.util
import os
import re
import sys

import numpy as np

import tapeflow as tf
from tapeflow.saved_model.inspect import describe
from tapeflow.saved_model.loaded import find_function

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64",
           "bool": "bool", "i8": "int8", "u8": "uint8"}


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
        raise argparse.ArgumentTypeError(f"bad dimension in --spec {text!r}") from None
    return tf.TensorSpec(shape, _DTYPES[m.group(1)])


def load_target(target):
    """The object named by 'path/to/file.py:name' or 'package.module:name'."""
    if ":" not in target:
        raise SystemExit(f"tapeflow: expected MODULE:FUNC, got {target!r}")
    mod_name, attr = target.rsplit(":", 1)
    if mod_name.endswith(".py") or os.sep in mod_name:
        spec = importlib.util.spec_from_file_location("_tapeflow_dump_target", mod_name)
        if spec is None or not os.path.exists(mod_name):
            raise SystemExit(f"tapeflow: no such file {mod_name!r}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod_name)
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SystemExit(f"tapeflow: {mod_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
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
        raise SystemExit(f"tapeflow: {e}") from None


def cmd_dump(args):
    if args.saved:
        fn, default_args = load_saved_target(args.target)
        call_args = _concrete_args(args.spec) if args.spec else default_args
    else:
        fn = load_target(args.target)
        if not isinstance(fn, tf.tracer.Function):
            fn = tf.function(fn)
        call_args = _concrete_args(args.spec)
    try:
        lowered = fn.lower(*call_args)
    except (TypeError, ValueError) as e:
        if not args.saved:
            raise
        raise SystemExit(f"tapeflow: {e}") from None
    if args.format == "dot":
        print(lowered.dot())
    else:
        print(lowered.as_text(passes=args.passes, source=args.source))
    return 0


def cmd_inspect(args):
    """Print what a saved program holds (validated: a bad program is an error, not a crash)."""
    try:
        print(describe(args.path))
    except tf.saved_model.SavedModelError as e:
        print(f"tapeflow inspect: {e}", file=sys.stderr)
        return 1
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
        raise SystemExit("tapeflow bench: no benchmarks/ here; the suite is not installed with "
                         "the package: run it from a checkout of tapeflow") from None
    rest = list(args.rest)
    if rest[:1] == ["--"]:   # `tapeflow bench -- --quick`: argparse keeps the separator
        rest = rest[1:]
    return bench_main(rest)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tapeflow", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="print a function's IR, passes, forward/backward programs, source")
    d.add_argument("target", help="MODULE:FUNC (a module name or a .py path); with --saved, "
                   "PATH[:NAME], a saved program's function (NAME: attribute or signature)")
    d.add_argument("--saved", action="store_true",
                   help="TARGET is a saved program (tapeflow.saved_model.save); without --spec, "
                        "its first saved trace's argument types are used")
    d.add_argument("--spec", action="append", type=parse_spec, default=[],
                   help="one per argument, e.g. 'f32[3,2]'")
    d.add_argument("--passes", action="store_true", help="the IR after each pass")
    d.add_argument("--source", action="store_true", help="the generated Numba source")
    d.add_argument("--format", choices=("text", "dot"), default="text")
    d.set_defaults(func=cmd_dump)
    i = sub.add_parser("inspect", help="signatures, functions, ops, variables and custom gradients "
                                       "of a saved program")
    i.add_argument("path", help="a saved program's directory")
    i.set_defaults(func=cmd_inspect)
    b = sub.add_parser("bench", help="run the benchmark suite (see benchmarks/); options pass through")
    b.set_defaults(func=cmd_bench)
    args, rest = ap.parse_known_args(argv)
    if args.cmd != "bench" and rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
