"""One module name for one thing (issue 24): no two modules of the package share a basename,
except where the name means the same thing in each place, and the old ambiguous names are gone.
"""
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tapeflow"

# The op tables: one file per family in each, named by the family (`math`, `linalg`, ...), so a
# family's name is one thing across the tables (docs/architecture.md, "Add an op").
OP_TABLES = ["ir/defs", "runtime/kernels", "autodiff/grads", "codegen/templates", "passes/batching",
             "ops"]

# Basenames several modules may share, each with why it is one thing wherever it appears.
SHARED = {
    "__init__": "a package's own module",
    "errors": "the exception types of the package holding it",
    "limits": "the size limits the package holding it enforces",
    "registry": "the table of an op table (KERNELS and GRADS in runtime/, CODEGEN in "
                "codegen/templates/, BATCHERS in passes/batching/)",
    "dtypes": "tapeflow/dtypes.py is the public tf.dtypes namespace re-exporting ir/dtypes.py",
    "control": "tracer/control.py traces tf.cond/tf.while_loop into the If/While ops of the "
               "control family",
}

# Collisions left by the renames of issue 24, to be renamed by code owners; listed so they are
# seen, not allowed silently. Remove an entry once its modules have distinct names.
PENDING = {}

# The names issue 24 retired: each held two different things.
RETIRED = ["codegen/symbolic.py", "codegen/dims.py", "codegen/loops.py", "tracer/symbolic.py", "codegen/rt.py", "tracer/rt.py",
           "codegen/concrete.py", "tracer/concrete.py", "tracer/backend.py", "distribute/program.py",
           "tracer/autodiff.py", "tracer/transforms.py"]


def _in_op_table(path):
    parent = path.parent.relative_to(ROOT).as_posix()
    return parent in OP_TABLES


def _shared_basenames():
    by_name = collections.defaultdict(list)
    for path in ROOT.rglob("*.py"):
        by_name[path.stem].append(path)
    shared = {}
    for name, paths in by_name.items():
        family = [p for p in paths if _in_op_table(p)]
        # a family's files in several tables are one thing, and so is the public namespace
        # of that family's functions (tapeflow/math.py is tf.math); a module outside the
        # tables sharing the name (or two of them) is a second thing
        others = [p for p in paths if not _in_op_table(p) and not (family and p.parent == ROOT)]
        if len(others) > 1 or (others and family):
            shared[name] = sorted(p.relative_to(ROOT).as_posix() for p in paths)
    return shared


def test_no_two_modules_share_a_basename():
    clashes = {name: paths for name, paths in _shared_basenames().items()
               if name not in SHARED and name not in PENDING}
    assert clashes == {}, "give each module a name saying what it holds (or list it in SHARED with why)"


def test_shared_and_pending_names_are_still_shared():
    stale = (set(SHARED) | set(PENDING)) - set(_shared_basenames())
    assert stale == set(), "no longer shared: drop them from SHARED/PENDING"


def test_retired_names_are_gone():
    assert [name for name in RETIRED if (ROOT / name).exists()] == []
