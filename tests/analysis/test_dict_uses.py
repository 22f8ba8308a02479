"""`dict_uses.only_read`: a function that may replace a dict's values is not one that only reads it."""

from __future__ import annotations

import libcst as cst
import pytest

from pinlint.analysis.dict_uses import only_read


def _function(body: str) -> cst.FunctionDef:
    module = cst.parse_module("def f(sd, g):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    return function


@pytest.mark.parametrize(
    "body",
    [
        "for k, v in sd.items():\n    v.to('cuda')",
        "for v in sd.values(): pass",
        "x = sd['w']",
        "n = len(sd)",
        "if 'w' in sd: pass",
        "for k in sd: pass",
        "sd = {}\nsd2 = 1",
        "for sd in g: pass",
        "a, sd = g",
        "y = sd.get('w')",
        "sd['w'].add_(1)",
    ],
)
def test_reads(body: str) -> None:
    assert only_read(_function(body), "sd")


@pytest.mark.parametrize(
    "body",
    [
        "sd['w'] = g",
        "sd['a'], sd['b'] = g",
        "del sd['w']",
        "sd['w'] += 1",
        "sd.update(g)",
        "sd.clear()",
        "sd.pop('w')",
        "sd.setdefault('w', g)",
        "other = sd",
        "g(sd)",
        "return sd",
        "h = [sd]",
        "def inner():\n    sd['w'] = 1",
        "for sd['w'] in g: pass",
    ],
)
def test_changes(body: str) -> None:
    assert not only_read(_function(body), "sd")


def test_the_handed_call_reads() -> None:
    function = _function("upload(sd, g)")
    call = function.body.body[0].body[0].value  # type: ignore[attr-defined]
    assert only_read(function, "sd", handed=call)
    assert not only_read(function, "sd")
