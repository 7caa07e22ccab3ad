"""The compile cache verifies what it runs (issue 14): a corrupt or edited entry is recompiled
with one warning, never run; an unsafe or unusable directory is refused with a warning and a
private one used; several processes compiling one program at once agree; LRU cap; CLI."""
import json
import os
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from tapeflow.codegen import cache, compile_graph
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal

from codegen.samples import add_node

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PROBE = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    sys.path.insert(0, {tests!r})
    from tapeflow.codegen import cache, compile_graph
    from codegen.cache_fuzz import program, ARGS
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prog = compile_graph(program(), "probe", cache_dir=sys.argv[1])
        r = prog(*ARGS)
    print(json.dumps(dict(prog.stats(), path=prog.cache_path, value=[float(r[0]), r[1].tolist()],
                          warnings=[str(w.message) for w in caught if w.category is cache.CacheWarning])))
""")


def _probe(tmp_path, folder, env=None):
    script = tmp_path / "probe.py"
    script.write_text(PROBE.format(tests=os.path.join(ROOT, "tests")))
    e = dict(os.environ, PYTHONPATH=ROOT)
    e.pop("NUMBA_CACHE_DIR", None)
    e.update(env or {})
    out = subprocess.run([sys.executable, str(script), str(folder)], env=e, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().split("\n")[-1])


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache directory holding the probe program, and the pristine result."""
    tmp = tmp_path_factory.mktemp("warm")
    folder = tmp / "cache"
    first = _probe(tmp, folder)
    assert first["cache_misses"] > 0 and not first["warnings"]
    return tmp, folder, first


def _copy(folder, dest):
    import shutil
    shutil.copytree(folder, dest, copy_function=shutil.copy2)   # keeps the stamps Numba checks
    return dest


def test_a_warm_cache_loads_and_compiles_nothing(warm, tmp_path):
    tmp, folder, first = warm
    again = _probe(tmp_path, _copy(folder, tmp_path / "c"))
    assert again["cache_misses"] == 0 and again["cache_hits"] > 0 and not again["warnings"]
    assert again["value"] == first["value"]


def test_an_edited_literal_in_the_source_is_recompiled_not_run(warm, tmp_path):
    tmp, folder, first = warm
    c = _copy(folder, tmp_path / "c")
    path = c / os.path.basename(first["path"])
    text = path.read_text()
    assert "0.5" in text
    path.write_text(text.replace("0.5", "0.7"))
    r = _probe(tmp_path, c)
    assert r["value"] == first["value"] and r["cache_misses"] > 0
    assert len(r["warnings"]) == 1 and "corrupt or edited" in r["warnings"][0]
    healed = _probe(tmp_path, c)       # the entry healed: loaded, no warning
    assert healed["cache_misses"] == 0 and not healed["warnings"] and healed["value"] == first["value"]


@pytest.mark.parametrize("suffix", [".nbc", ".nbi", ".sha256"])
def test_a_flipped_byte_in_numbas_files_or_the_hash_list_is_recompiled(warm, tmp_path, suffix):
    tmp, folder, first = warm
    c = _copy(folder, tmp_path / "c")
    victims = [os.path.join(d, n) for d, _, names in os.walk(c) for n in names if n.endswith(suffix)]
    assert victims
    with open(victims[0], "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0x5A
        f.seek(0)
        f.write(data)
    r = _probe(tmp_path, c)
    assert r["value"] == first["value"] and r["cache_misses"] > 0
    assert len(r["warnings"]) == 1 and "corrupt" in r["warnings"][0]


def test_a_truncated_source_heals(warm, tmp_path):
    tmp, folder, first = warm
    c = _copy(folder, tmp_path / "c")
    path = c / os.path.basename(first["path"])
    path.write_bytes(path.read_bytes()[:100])
    for _ in range(2):
        r = _probe(tmp_path, c)
        assert r["value"] == first["value"]
    assert not r["warnings"] and r["cache_misses"] == 0


def _graph(k=0):
    g = Graph()
    x = Value(AVal((3,), D.float64))
    g.inputs = [x]
    g.outputs = [add_node(g, "Mul", [add_node(g, "Exp", [x]), g.const(np.float64(k + 1.5))])]
    return g


def _compile_warning(folder):
    cache._resolved.clear()
    cache._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prog = compile_graph(_graph(), "unsafe_dir", cache_dir=str(folder))
        assert np.allclose(prog(np.zeros(3))[0], 1.5)
    return prog, [str(w.message) for w in caught if w.category is cache.CacheWarning]


def test_a_directory_writable_by_others_is_refused_with_a_warning(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    prog, warned = _compile_warning(d)
    assert len(warned) == 1 and "writable by others" in warned[0]
    assert not prog.cache_path.startswith(str(d))
    assert stat.S_IMODE(os.stat(os.path.dirname(prog.cache_path)).st_mode) == 0o700


def test_a_cache_path_that_is_a_file_falls_back(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    prog, warned = _compile_warning(f)
    assert len(warned) == 1 and str(f) in warned[0]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_directory_owned_by_another_user_is_refused(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)
    prog, warned = _compile_warning(d)
    assert len(warned) == 1 and "owned by another user" in warned[0]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_directory_falls_back(tmp_path):
    d = tmp_path / "ro"
    d.mkdir(mode=0o500)
    prog, warned = _compile_warning(d)
    assert len(warned) == 1 and "not writable" in warned[0]


def test_a_new_directory_is_private(tmp_path):
    cache._resolved.clear()
    prog = compile_graph(_graph(), "private", cache_dir=str(tmp_path / "new" / "cache"))
    assert stat.S_IMODE(os.stat(tmp_path / "new" / "cache").st_mode) == 0o700
    assert prog.cache_path.startswith(str(tmp_path / "new" / "cache"))


def test_with_numba_cache_dir_set_the_files_are_found_there_checked_and_loaded(tmp_path):
    """$NUMBA_CACHE_DIR moves Numba's files out of the cache's ``__pycache__``: the cache finds
    them where Numba put them, so they are hashed, checked and loaded as before."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first = _probe(tmp_path, tmp_path / "cache", env)
    assert first["cache_misses"] > 0 and not first["warnings"]
    assert not (tmp_path / "cache" / "__pycache__").exists()
    again = _probe(tmp_path, tmp_path / "cache", env)
    assert again["cache_misses"] == 0 and again["cache_hits"] > 0 and not again["warnings"]
    stem = os.path.basename(first["path"])[:-3]     # (the package's helpers cache there too)
    nbc = [os.path.join(d, n) for d, _, names in os.walk(tmp_path / "numba") for n in names
           if n.startswith(stem) and n.endswith(".nbc")]
    with open(nbc[0], "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0x5A
        f.seek(0)
        f.write(data)
    r = _probe(tmp_path, tmp_path / "cache", env)
    assert r["value"] == first["value"] and r["cache_misses"] > 0
    assert len(r["warnings"]) == 1 and "corrupt" in r["warnings"][0]


def test_numba_folder_is_where_numbas_own_locator_puts_the_files(tmp_path, monkeypatch):
    """``cache.numba_folder`` repeats Numba's ``UserProvidedCacheLocator`` naming (importing
    Numba's caching module costs ``tapeflow cache info`` its start-up): the two must agree."""
    from numba.core.caching import _CacheLocator
    from tapeflow.codegen import cache
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert cache.numba_folder(str(tmp_path)) == os.path.join(str(tmp_path), "__pycache__")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nb"))
    sub = _CacheLocator.get_suitable_cache_subpath(str(tmp_path / "prog.py"))
    assert cache.numba_folder(str(tmp_path)) == os.path.join(str(tmp_path / "nb"), sub)


def test_four_processes_compiling_one_program_at_once_take_turns(tmp_path):
    """One compiles; the others wait for it and load what it wrote (none compiles it again or
    takes its half-recorded files for corrupt)."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE.format(tests=os.path.join(ROOT, "tests")))
    e = dict(os.environ, PYTHONPATH=ROOT)
    e.pop("NUMBA_CACHE_DIR", None)
    folder = tmp_path / "cache"
    procs = [subprocess.Popen([sys.executable, str(script), str(folder)], env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().split("\n")[-1]))
    assert all(r["value"] == results[0]["value"] for r in results)
    assert [r["cache_misses"] > 0 for r in results].count(True) == 1
    assert not any(r["warnings"] for r in results)
    after = _probe(tmp_path, folder)     # what they left is a valid, verified entry
    assert after["value"] == results[0]["value"] and after["cache_misses"] == 0 and not after["warnings"]


def test_the_cache_keeps_under_its_cap_evicting_the_least_recently_used(tmp_path, monkeypatch):
    cache._resolved.clear()
    folder = tmp_path / "lru"
    progs = [compile_graph(_graph(k), f"lru{k}", cache_dir=str(folder)) for k in range(3)]
    sizes = {s: e["bytes"] for s, e in cache.entries(str(folder)).items()}
    assert len(sizes) == 3
    os.utime(progs[0].cache_path[:-3] + cache.HASHES, (1, 1))      # the oldest use
    cap = sum(sizes.values()) - 1
    assert cache.evict(str(folder), cap) == 1
    left = cache.entries(str(folder))
    assert len(left) == 2 and os.path.basename(progs[0].cache_path)[:-3] not in left
    monkeypatch.setenv("TAPEFLOW_CACHE_MAX_MB", "0.000001")
    compile_graph(_graph(7), "lru7", cache_dir=str(folder))          # a new entry evicts the rest
    assert len(cache.entries(str(folder))) <= 1


def test_cli_cache_info_and_clear(tmp_path):
    folder = tmp_path / "cli"
    cache._resolved.clear()
    compile_graph(_graph(), "cli_probe", cache_dir=str(folder))
    e = dict(os.environ, PYTHONPATH=ROOT, TAPEFLOW_CACHE_DIR=str(folder))
    run = lambda *a: subprocess.run([sys.executable, "-m", "tapeflow.cli", "cache", *a], env=e,  # noqa: E731
                                    capture_output=True, text=True, timeout=120)
    info = run("info")
    assert info.returncode == 0 and str(folder) in info.stdout and "1 program" in info.stdout, info
    cleared = run("clear")
    assert cleared.returncode == 0 and "deleted 1" in cleared.stdout, cleared
    assert not cache.entries(str(folder))
    bad = run("frobnicate")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad


@pytest.mark.parametrize("seed, count", [(2026, 12)])
def test_cache_corruption_fuzz_small(tmp_path, seed, count):
    _fuzz(tmp_path, seed, count)


@pytest.mark.slow
def test_cache_corruption_fuzz_large(tmp_path):
    for batch in range(8):          # a fresh process per batch: each recompile keeps machine code
        _fuzz(tmp_path / str(batch), 100 + batch, 125)


def _fuzz(tmp_path, seed, count):
    e = dict(os.environ, PYTHONPATH=ROOT)
    e.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, os.path.join(HERE, "cache_fuzz.py"), str(tmp_path / "c"),
                          str(seed), str(count)], env=e, capture_output=True, text=True, timeout=3600)
    assert out.returncode == 0, f"signal or crash (status {out.returncode}) after: {out.stderr[-600:]}"
    counts = json.loads(out.stdout.strip().split("\n")[-1])
    assert counts.get("correct", 0) == count, counts
