"""The HTML picture in a real browser: Debian's Chromium, headless.

The page checks itself when it loads (every node in its data has a drawn element with a
non-empty box) and writes the result on <body>; Chromium's --dump-dom gives the DOM after the
page's script ran, and --enable-logging puts any uncaught error on stderr. Run this file as a
script to refresh the README's screenshot, docs/dump.png:

    PYTHONPATH=$PWD python tests/test_picture_browser.py
"""
import html
import json
import pathlib
import re
import subprocess
import sys

import tapeflow as tf
from tapeflow import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from tools import need  # noqa: E402

EXAMPLE = str(ROOT / "examples" / "mlp_step.py") + ":loss"
SPECS = ["--spec", "f32[4,3]", "--spec", "f32[3,2]"]
# forward and backward side by side, the Relu in the forward's fused loop selected
SHOT = "#only=forward&node=f_n1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]


def chromium(tmp, url, *args):
    """(stdout, stderr) of headless Chromium on ``url`` with a fresh profile under ``tmp``."""
    exe = need("chromium")
    profile = tmp / f"profile{len(list(tmp.glob('profile*')))}"
    r = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args, url],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, r.stderr


def uncaught(stderr):
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or ":ERROR:" in ln)]


def write_page(path):
    need("dot")
    assert cli.main(["dump", EXAMPLE, *SPECS, "--format", "html", "-o", str(path)]) == 0
    return path


def body_attrs(dom):
    body = re.search(r"<body([^>]*)>", dom).group(1)
    return {k: html.unescape(v) for k, v in re.findall(r'data-(\w+)="([^"]*)"', body)}


def test_the_page_loads_without_errors_and_draws_every_node(tmp_path):
    page = write_page(tmp_path / "graph.html")
    dom, err = chromium(tmp_path, page.as_uri(), "--dump-dom")
    attrs = body_attrs(dom)
    assert uncaught(err) == [] and "errors" not in attrs
    assert attrs["status"] == "ok" and attrs["missing"] == ""
    # every node of every stage of the README example, found independently of the page
    low = cli.load_target(EXAMPLE).lower(tf.zeros([4, 3]), tf.zeros([3, 2]))
    expected = set()
    for fig in low.figures():
        for part in fig.parts:
            expected |= {f"{part.prefix}n{k}" for k in range(len(part.graph.nodes))}
            expected |= {f"{part.prefix}in{i}" for i in range(len(part.graph.inputs))}
    data = json.loads(re.search(r'<script type="application/json" id="nodes">(.*?)</script>',
                                dom, re.S).group(1))
    assert expected <= set(data) and int(attrs["drawn"]) == len(data)
    for key in expected:   # drawn with its op in the picture
        group = re.search(rf'<g id="[^"]*" data-key="{key}" class="node">(.*?)</g>', dom, re.S)
        assert group and html.escape(data[key]["title"].split()[0]) in group.group(1), key
    assert {"MatMul", "Relu", "Mul", "Mean", "ReluGrad", "BroadcastTo"} <= {
        d["title"] for d in data.values()}


def test_a_broken_page_is_noticed(tmp_path):
    """The harness itself: an uncaught error shows up both on <body> and on stderr."""
    page = write_page(tmp_path / "graph.html")
    text = page.read_text().replace('const info = document.getElementById("info");',
                                    'const info = document.getElementById("info"); null.boom();')
    page.write_text(text)
    dom, err = chromium(tmp_path, page.as_uri(), "--dump-dom")
    attrs = body_attrs(dom)
    assert uncaught(err) and "boom" in attrs["errors"] and "status" not in attrs


def screenshot(page, png, tmp):
    chromium(tmp, page.as_uri() + SHOT, "--window-size=1720,1240", f"--screenshot={png}")
    return png


def test_screenshot(tmp_path):
    png = screenshot(write_page(tmp_path / "graph.html"), tmp_path / "dump.png", tmp_path)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


if __name__ == "__main__":   # refresh docs/dump.png (the README's picture)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        print(screenshot(write_page(d / "graph.html"), ROOT / "docs" / "dump.png", d))
