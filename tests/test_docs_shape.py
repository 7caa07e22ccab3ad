"""The docs stay maps (issue 24): docs/architecture.md is short, no block of prose anywhere in
docs/ or the README is a wall, and the architecture's layer table is the layering test's.

A block is a paragraph (lines up to a blank line), a list item (its first line and the lines
continuing it) or a table cell. Fenced code is not prose and is not counted.
"""
import pathlib
import re
import subprocess

import pytest

import test_layering

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
MAX_MAP_WORDS = 2500
MAX_BLOCK_WORDS = 250

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def blocks(text):
    """(first line number, text) of every paragraph, list item and table cell of markdown."""
    out, current, start, fenced = [], [], 0, False

    def flush():
        if current:
            out.append((start, " ".join(current)))
            current.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip():
            flush()
        elif line.lstrip().startswith("|"):
            flush()
            out.extend((number, cell) for cell in line.strip().strip("|").split("|"))
        elif line.lstrip().startswith("#") or _ITEM.match(line):
            flush()
            start = number
            current.append(line)
            if line.lstrip().startswith("#"):
                flush()
        else:
            if not current:
                start = number
            current.append(line)
    flush()
    return out


def words(text):
    return len(text.split())


def test_the_block_splitter():
    text = "a b\nc\n\n- one two\n  three\n- four\n\n| x y | z |\n|---|---|\n\n```\nnot counted\n```\n# h\n"
    assert [(n, words(b)) for n, b in blocks(text)] == [(1, 3), (4, 4), (6, 2), (8, 2), (8, 1),
                                                        (9, 1), (9, 1), (14, 2)]


def test_the_architecture_is_a_map():
    assert words(ARCHITECTURE.read_text()) <= MAX_MAP_WORDS


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_wall_of_text(page):
    walls = [f"{page.name}:{number} ({words(block)} words)" for number, block in blocks(page.read_text())
             if words(block) > MAX_BLOCK_WORDS]
    assert walls == [], f"split these into blocks of at most {MAX_BLOCK_WORDS} words"


def _doc_layers():
    """(layer, module names) of the table under '## Layers', top row first."""
    text = ARCHITECTURE.read_text()
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines()
            if line.startswith("|") and not set(line) <= set("|-: ")]
    layers = []
    for cells in rows[1:]:                                       # rows[0] is the header
        modules = set()
        for path in re.findall(r"`([\w./]+)`", cells[1]):
            path = path.removeprefix("tapeflow/").removesuffix("/").removesuffix(".py")
            modules.add("tapeflow" if path == "__init__" else "tapeflow." + path.replace("/", "."))
        layers.append((cells[0].strip(), modules))
    return layers


def test_the_architectures_layers_are_the_layering_tests():
    doc = _doc_layers()
    assert [name for name, _ in doc] == [name for name, _ in reversed(test_layering.LAYERS)]
    assert dict(doc) == {name: set(entries) for name, entries in test_layering.LAYERS}


def test_the_architecture_states_no_wrong_count_of_imports_inside_functions():
    inside = {(a, line) for a, _, line, in_function, _ in test_layering.imports() if in_function}
    numbers = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10}
    for sentence in re.split(r"(?<=[.:;])\s", " ".join(ARCHITECTURE.read_text().split())):
        if "import" in sentence and "inside" in sentence and "function" in sentence:
            stated = [int(w) if w.isdigit() else numbers[w.lower()]
                      for w in re.findall(r"\b(\d+|" + "|".join(numbers) + r")\b", sentence, re.I)]
            assert all(n == len(inside) for n in stated), (sentence, len(inside))


def _repository_files():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    return listed or [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_file_the_docs_name_exists(page):
    """A path in prose (`tracer/jacobian.py`, `docs/loops.md`) names a file of the repository,
    whole or by its trailing parts, so a renamed module cannot leave the map pointing at
    nothing. Patterns (`cases_<family>.py`, `*_rewrite.py`) and code blocks are not paths."""
    files = _repository_files()
    prose = " ".join(block for _, block in blocks(page.read_text()))
    named = set(re.findall(r"(?<![\w<>/.*-])([A-Za-z_]\w*(?:/\w+)*\.(?:py|md))\b", prose))
    missing = sorted(n for n in named if not any(f == n or f.endswith("/" + n) for f in files))
    assert missing == []
