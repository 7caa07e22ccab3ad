"""Random programs written to a real file and imported, so that the tracer can read their
source (the Python `if`/`while` conversion needs ``inspect.getsource``)."""
import importlib.util
import random


def load_programs(tmp_path, name, make_program, count, seed):
    """``count`` functions ``prog_k`` from ``make_program(rng, k)`` -> source text."""
    rng = random.Random(seed)
    source = "import tapeflow as tf\n\n\n" + "\n\n".join(make_program(rng, k) for k in range(count))
    path = tmp_path / f"{name}_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"{name}_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [getattr(module, f"prog_{k}") for k in range(count)]
