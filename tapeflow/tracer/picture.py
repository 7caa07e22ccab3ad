"""Pictures of the stages: SVG by Graphviz, and one self-contained HTML page of them all.

Graphviz's ``dot`` (the OS package: ``apt-get install graphviz``) lays the graphs out; we
call the binary, so no Python package is needed. The page inlines each stage's SVG, its
text, the details of every node (op, IR line, types, the user's line, the generated code
lines) as JSON, and a few lines of script and style: it opens from a file with no network.
Why Graphviz and not a viewer of our own or Model Explorer: ``docs/dump.md``.
"""
import html
import json
import linecache
import re
import shutil
import subprocess

from .._version import __version__
from ..ir.graph import aval_str, line_str, node_line, value_names
from .lower import GRAPH_STAGES, STAGES


# what runs under a tape comes right after the trace: it is what a reader came to see
PAGE_ORDER = ("traced", "forward", "program", "min-cut", "joint")
# A figure with more nodes is not drawn in the page (its text is): Graphviz takes seconds for
# a 2000-node chain, and many minutes for the forward and backward of a 500-op chain (5500
# nodes with crossing residual edges).
MAX_PAGE_NODES = 1000
TIMEOUT = 300


class GraphvizError(RuntimeError):
    """Graphviz's ``dot`` is missing or failed."""


def svg(dot_text):
    """``dot_text`` laid out by Graphviz's ``dot``, as SVG text."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError("Graphviz's 'dot' is not installed (e.g. apt-get install graphviz); "
                            "--format dot prints the graph without it")
    try:
        r = subprocess.run([exe, "-Tsvg"], input=dot_text.encode(), capture_output=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"Graphviz's dot took over {TIMEOUT} s to lay the graph out; "
                            f"--format dot prints it, or pick a smaller --stage") from None
    if r.returncode != 0:
        raise GraphvizError(f"dot failed: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode()


def _inline(svg_text, scope):
    """The <svg> element alone (no XML declaration or doctype), to put inside HTML: each id
    made unique in the page by ``scope``, the id we gave (``ir/dot.py``) kept as ``data-key``."""
    body = svg_text[svg_text.index("<svg"):].strip()
    return re.sub(r' id="([^"]*)"', lambda m: f' id="{scope}-{m.group(1)}" data-key="{m.group(1)}"',
                  body)


def _user_line(node):
    if not node.line:
        return None
    text = linecache.getline(node.line[0], node.line[1]).strip()
    return f"{line_str(node)}: {text}" if text else line_str(node)


def _details(figure):
    """{drawn id: what the side panel shows} for every node, input, output and fused group."""
    out = {}
    for part in figure.parts:
        g, names = part.graph, value_names(part.graph)
        name = lambda v, names=names: names[v.id]  # noqa: E731
        for i, v in enumerate(g.inputs):
            label = (part.input_style[i][0] if i in part.input_style else
                     part.arg_names[i] if part.arg_names else f"input {i}")
            out[f"{part.prefix}in{i}"] = {"kind": "input", "title": label,
                                          "ir": f"{names[v.id]}:{aval_str(v.aval)}"}
        for k, node in enumerate(g.nodes):
            out[f"{part.prefix}n{k}"] = {
                "kind": "node", "title": node.op, "ir": node_line(node, name, elide_graphs=True),
                "types": [aval_str(v.aval) for v in node.outputs],
                "line": _user_line(node),
                "code": part.code.get(k, [])}
        for j, (label, members) in enumerate(part.groups):
            out[f"{part.prefix}g{j}"] = {
                "kind": "group", "title": label,
                "ir": "\n".join(node_line(g.nodes[k], name, elide_graphs=True) for k in members),
                "code": sorted({c for k in members for c in part.code.get(k, [])})}
        for i, v in enumerate(g.outputs):
            if i not in part.skip_outputs:
                label = part.out_names[i] if part.out_names else f"output {i}"
                out[f"{part.prefix}out{i}"] = {"kind": "output", "title": label,
                                               "ir": f"{names[v.id]}:{aval_str(v.aval)}"}
    return out


def page(lowered, stages=None, title=None):
    """The HTML page of ``lowered``'s graph stages ``stages`` (default: all), each as a
    picture with its text; fused loops drawn as boxes, or collapsed to one node each."""
    stages = [s for s in (stages or STAGES) if s in STAGES]
    figures = sorted(lowered.figures([s for s in stages if s in GRAPH_STAGES]),
                     key=lambda f: PAGE_ORDER.index(f.stage))
    text_only = [s for s in stages if s not in GRAPH_STAGES and s != "source"]
    title = title or f"{lowered.concrete.name}({', '.join(lowered.input_names())})"
    details, sections, nav = {}, [], []
    for fig in figures:
        sid = f"stage-{fig.stage}"
        texts = lowered.stages(["forward", "backward"] if fig.stage == "forward" else [fig.stage])
        size = sum(len(p.graph.nodes) for p in fig.parts)
        nav.append(f'<a href="#{sid}">{html.escape(fig.heading)}</a>')
        if size > MAX_PAGE_NODES:
            sections.append(
                f'<section class="stage" id="{sid}"><h2>{html.escape(fig.heading)}</h2>'
                f'<p class="hint">{size} nodes: too many to lay out here (at most '
                f'{MAX_PAGE_NODES}); <code>--format svg --stage {fig.stage}</code> draws it, '
                f'slowly.</p>{_text_block(texts, open_=True)}</section>')
            continue
        details.update(_details(fig))
        expanded = _inline(svg(fig.dot(lines=True)), fig.stage)
        grouped = any(p.groups for p in fig.parts)
        collapsed = _inline(svg(fig.dot(lines=True, collapse=True)), fig.stage + "-c") if grouped else ""
        sections.append(
            f'<section class="stage" id="{sid}"><h2>{html.escape(fig.heading)}</h2>'
            f'<div class="figure expanded">{expanded}</div>'
            + (f'<div class="figure collapsed">{collapsed}</div>' if grouped else "")
            + _text_block(texts) + "</section>")
    for stage in text_only:
        texts = lowered.stages([stage])
        if texts:
            sid = f"stage-{stage}"
            nav.append(f'<a href="#{sid}">{html.escape(stage)}</a>')
            sections.append(f'<section class="stage" id="{sid}"><h2>{html.escape(stage)}: '
                            f'{html.escape(STAGES[stage])}</h2>{_text_block(texts, open_=True)}'
                            f'</section>')
    data = json.dumps(details, sort_keys=True).replace("</", "<\\/")
    return _PAGE.format(title=html.escape(title), version=__version__, nav=" · ".join(nav),
                        sections="\n".join(sections), data=data, style=_STYLE, script=_SCRIPT)


def _text_block(texts, open_=False):
    body = "\n".join(f"== {h}\n{t}" if t else f"== {h}" for h, t in texts)
    return (f'<details{" open" if open_ else ""}><summary>as text</summary>'
            f'<pre>{html.escape(body)}</pre></details>')


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tapeflow: {title}</title>
<style>{style}</style></head>
<body>
<header>
<h1>tapeflow dump: <code>{title}</code></h1>
<p class="legend"><span class="key input">argument</span> <span class="key residual">residual</span>
<span class="key output">output / gradient</span> <span class="key group">fused loop</span>
<span class="key link">- - residual kept from forward to backward</span>
<label><input type="checkbox" id="collapse"> collapse fused loops</label>
· click a node for its IR, user line and generated code · tapeflow {version}</p>
<nav>{nav}</nav>
</header>
<main>
{sections}
</main>
<aside id="info"><p class="hint">Click a node.</p></aside>
<script type="application/json" id="nodes">{data}</script>
<script>{script}</script>
</body></html>
"""

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; padding: 0 26rem 2rem 1.5rem;
       color: #202124; }
header { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #dadce0; padding: .5rem 0; z-index: 1; }
h1 { font-size: 1.2rem; margin: .2rem 0; } h2 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
nav a { margin-right: .3rem; } .legend { margin: .2rem 0; color: #5f6368; }
.key { padding: 0 .4rem; border-radius: .6rem; border: 1px solid #9aa0a6; }
.key.input { background: #e8f0fe; } .key.residual { background: #fde7e7; border-color: #c5221f; }
.key.output { background: #e6f4ea; } .key.group { background: #fff8e1; border-color: #f9a825; }
.key.link { color: #c5221f; border: none; }
main { display: flex; flex-wrap: wrap; gap: 0 2.5rem; align-items: flex-start; }
section { max-width: 100%; min-width: 0; }
.figure { overflow: auto; max-width: 100%; }
details pre { max-width: 60rem; }
.figure.collapsed { display: none; }
body.collapse .figure.collapsed { display: block; } body.collapse .figure.expanded { display: none; }
g.node, g.cluster { cursor: pointer; }
g.node.selected polygon, g.node.selected ellipse { stroke: #1a73e8; stroke-width: 3; }
pre { background: #f8f9fa; padding: .5rem; overflow: auto; font-size: 12px; }
aside { position: fixed; right: 0; top: 0; bottom: 0; width: 24rem; overflow: auto; padding: 1rem;
        border-left: 1px solid #dadce0; background: #fafafa; }
aside pre.ir { white-space: pre-wrap; }
.hint { color: #5f6368; } #errors { color: #c5221f; }
"""

_SCRIPT = r"""
"use strict";
const errors = [];
window.addEventListener("error", (e) => {
  errors.push(String(e.message));
  document.body.dataset.errors = errors.join("; ");
});
const NODES = JSON.parse(document.getElementById("nodes").textContent);
const info = document.getElementById("info");

function show(el) {
  const d = NODES[el.dataset.key];
  if (!d) return;
  document.querySelectorAll(".selected").forEach((e) => e.classList.remove("selected"));
  el.classList.add("selected");
  info.replaceChildren();
  const add = (tag, text, cls) => {
    const e = document.createElement(tag);
    e.textContent = text;
    if (cls) e.className = cls;
    info.appendChild(e);
    return e;
  };
  add("h3", d.title);
  add("pre", d.ir, "ir");
  if (d.types && d.types.length) add("p", "type: " + d.types.join(", "));
  if (d.line) { add("h4", "your line"); add("pre", d.line, "ir"); }
  if (d.code && d.code.length) {
    add("h4", "generated code (Numba backend)");
    add("pre", d.code.map(([n, t]) => String(n).padStart(3) + " " + t.replace(/^    /, "")).join("\n"));
  }
}

document.querySelectorAll("g.node, g.cluster").forEach((g) => {
  g.addEventListener("click", (e) => { e.stopPropagation(); show(g); });
});
document.getElementById("collapse").addEventListener("change", (e) => {
  document.body.classList.toggle("collapse", e.target.checked);
});

// '#node=KEY' selects that node; '#only=forward,traced' shows those stages only (a link to
// one node or stage, and the README's screenshot)
const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get("only")) {
  const keep = new Set(hash.get("only").split(",").map((s) => "stage-" + s));
  document.querySelectorAll("section.stage").forEach((s) => { s.hidden = !keep.has(s.id); });
}
if (hash.get("node")) {
  const el = document.querySelector(`.figure.expanded g[data-key="${hash.get("node")}"]`);
  if (el) show(el);
}

// Self-check, read by the browser test: every node of the page's data is drawn (an element
// with a non-empty box) in the expanded pictures; fused groups, as drawn when collapsed.
const missing = [];
let drawn = 0;
for (const key of Object.keys(NODES)) {
  const el = document.querySelector(`.figure.expanded g[data-key="${key}"]`);
  const box = el && el.getBBox ? el.getBBox() : null;
  if (box && box.width > 0 && box.height > 0) drawn += 1; else missing.push(key);
}
document.body.dataset.drawn = String(drawn);
document.body.dataset.missing = missing.join(" ");
document.body.dataset.status = errors.length ? "errors" : "ok";
"""
