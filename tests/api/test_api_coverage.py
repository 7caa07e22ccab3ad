"""Which of TensorFlow 2.21's in-scope public names tapeflow provides, and why the rest are not.

``tf_names.json`` (copied from ``shared/tf-api``) lists every public name of each namespace,
marked in or out of scope. An in-scope name tapeflow does not provide must be listed in
``docs/omissions.md`` with the reason; a listed name that is provided must leave the list.
Providing a name says nothing about behaviour: the tests of each family decide that.
"""
import json
import pathlib
import re

import pytest

import tapeflow

HERE = pathlib.Path(__file__).parent
SPEC = json.loads((HERE / "tf_names.json").read_text())["namespaces"]
OMISSIONS_DOC = HERE.parents[1] / "docs" / "omissions.md"


def _namespace(ns):
    obj = tapeflow
    for part in ([] if ns == "tf" else ns.split(".")):
        obj = getattr(obj, part, None)
    return obj


def _listed():
    """{namespace: {name: reason}} from the omissions page's `## ns` sections of `- `name`: reason` lines."""
    out, ns = {}, None
    for line in OMISSIONS_DOC.read_text().splitlines():
        head = re.match(r"^## `?([\w.]+)`?\s*$", line)
        if head:
            ns = head.group(1)
            out.setdefault(ns, {})
            continue
        item = re.match(r"^- `([\w.]+)`: (.+)$", line)
        if item and ns:
            out[ns][item.group(1)] = item.group(2)
    return out


LISTED = _listed()


@pytest.mark.parametrize("ns", sorted(SPEC))
def test_every_missing_name_is_a_listed_omission(ns):
    obj = _namespace(ns)
    wanted = sorted(n for n, e in SPEC[ns].items() if e["scope"] == "in")
    missing = {n for n in wanted if obj is None or not hasattr(obj, n)}
    listed = LISTED.get(ns, {})
    assert sorted(missing - set(listed)) == [], f"tapeflow.{ns}: missing and not in docs/omissions.md"
    assert sorted(set(listed) - missing) == [], f"tapeflow.{ns}: provided (or out of scope) but listed as omitted"


def test_every_omission_has_a_reason():
    assert all(len(reason.split()) >= 2 for names in LISTED.values() for reason in names.values())
    assert set(LISTED) <= set(SPEC), "docs/omissions.md names a namespace tf_names.json lacks"
