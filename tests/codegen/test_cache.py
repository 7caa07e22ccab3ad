"""The on-disk cache: a second process loads the machine code Numba saved and compiles nothing.

Proof by Numba's own counters (``Program.stats()``: cache hits = overloads loaded from disk,
misses = compiled), not by timing.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

import tapeflow  # noqa: F401
from tapeflow.codegen import compile_graph
from tapeflow.codegen.cache import program_key
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal

from codegen.samples import add_node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Builds the same graph in any process: a parallel fused loop with fast-math calls and a
# reduction, a matmul and a rank-0 constant; MAX_LINES forces two parts.
SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    import tapeflow
    from tapeflow.codegen import compile_graph, generate as gen_module
    from tapeflow.ir import dtypes as D
    from tapeflow.ir.graph import Graph, Value
    from tapeflow.ir.opdef import AVal
    from codegen.samples import add_node

    gen_module.MAX_LINES = int(sys.argv[1])
    from tapeflow.codegen import emitter
    emitter.PARALLEL_WORK = 200_000        # this graph's loops go parallel
    g = Graph()
    x, w = Value(AVal((400, 500), D.float32)), Value(AVal((500, 3), D.float32))
    g.inputs = [x, w]
    t = add_node(g, "Tanh", [add_node(g, "Mul", [x, g.const(np.float32(0.5))])])
    s = add_node(g, "Sum", [add_node(g, "Sigmoid", [t])], axis=None, keepdims=False)
    g.outputs = [s, add_node(g, "MatMul", [t, w]), t]
    prog = compile_graph(g, "cache_probe")
    r = prog(np.ones((400, 500), np.float32), np.ones((500, 3), np.float32))
    print(json.dumps(dict(prog.stats(), parts=len(prog.kernels), path=prog.cache_path,
                          value=float(r[0]))))
""")


def _run(tmp_path, max_lines):
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT.format(tests=os.path.join(ROOT, "tests")))
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, str(script), str(max_lines)], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().split("\n")[-1])


def test_a_second_process_compiles_nothing(tmp_path):
    for max_lines in (1000, 5):            # one function, then the same graph cut into parts
        first = _run(tmp_path, max_lines)
        assert first["cache_misses"] == first["parts"] and first["cache_hits"] == 0
        second = _run(tmp_path, max_lines)
        assert second["cache_hits"] == second["parts"] and second["cache_misses"] == 0
        assert second["path"] == first["path"] and second["value"] == first["value"]
    assert first["parts"] > 1


def test_source_lives_in_the_cache_dir_named_by_its_hash(tmp_path):
    g = Graph()
    x = Value(AVal((3,), D.float64))
    g.inputs = [x]
    g.outputs = [add_node(g, "Exp", [x])]
    prog = compile_graph(g, "named", cache_dir=str(tmp_path))
    assert os.path.dirname(prog.cache_path) == str(tmp_path)
    assert os.path.basename(prog.cache_path) == f"named_{program_key(prog.source)}.py"
    with open(prog.cache_path) as f:
        assert f.read() == prog.source
    again = compile_graph(g, "named", cache_dir=str(tmp_path))      # same process: no new compile
    assert again.kernels[0] is prog.kernels[0]
    assert np.array_equal(again(np.zeros(3))[0], np.ones(3))
