"""Every environment variable tapeflow reads is in one table, checked, and listed in the README."""
import pathlib
import re
import subprocess
import sys

import pytest

from tapeflow import env

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_variable_read_in_the_package_is_in_the_table():
    read = set()
    for path in (ROOT / "tapeflow").rglob("*.py"):
        read |= set(re.findall(r"""(?:environ\.get\(|environ\[|getenv\(|env\.get\()["'](TAPEFLOW_\w+)""",
                               path.read_text()))
    assert read <= set(env.SETTINGS)
    assert {"TAPEFLOW_BACKEND", "TAPEFLOW_JACOBIAN_MODE"} <= read


def test_readme_lists_every_variable_with_its_default():
    readme = (ROOT / "README.md").read_text()
    for name, setting in env.SETTINGS.items():
        row = next((line for line in readme.splitlines() if line.startswith(f"| `{name}`")), None)
        assert row is not None, name
        assert f"`{setting.default}`" in row


@pytest.mark.parametrize("name, bad", [("TAPEFLOW_BACKEND", "jax"), ("TAPEFLOW_JACOBIAN_MODE", "fwd"),
                                       ("TAPEFLOW_COMPILE_TAPE_AFTER", "abc"),
                                       ("TAPEFLOW_COMPILE_TAPE_AFTER", "-1"),
                                       ("TAPEFLOW_JACOBIAN_BUDGET_MB", "0"), ("TAPEFLOW_CACHE_DIR", "")])
def test_a_bad_value_names_the_variable_and_what_it_accepts(monkeypatch, name, bad):
    monkeypatch.setenv(name, bad)
    with pytest.raises(ValueError, match=rf"^{name}='{bad}' is not valid: expected "):
        env.get(name)


def test_defaults_and_good_values(monkeypatch):
    for name in env.SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert env.get("TAPEFLOW_BACKEND") == "numba"
    assert env.get("TAPEFLOW_COMPILE_TAPE_AFTER") == 3
    assert env.get("TAPEFLOW_JACOBIAN_BUDGET_MB") == 256.0
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_MODE", " forward ")
    assert env.get("TAPEFLOW_JACOBIAN_MODE") == "forward"


def test_an_unknown_backend_stops_the_import():
    r = subprocess.run([sys.executable, "-c", "import tapeflow"], capture_output=True, text=True,
                       env={"TAPEFLOW_BACKEND": "jax", "PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "ValueError: TAPEFLOW_BACKEND='jax' is not valid: expected numba or numpy (default numba)")
