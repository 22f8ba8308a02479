"""`dict_uses.only_read`: a function that may replace a dict's values is not one that only reads it."""

from __future__ import annotations

import libcst as cst
import pytest

from pinlint.analysis.dict_uses import only_read, rekeyed_in_walk


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


def _walk(function: cst.FunctionDef) -> cst.For:
    return next(s for s in function.body.body if isinstance(s, cst.For))


@pytest.mark.parametrize(
    "body",
    [
        "for k, v in sd.items():\n    sd[k] = v.to('cuda', non_blocking=True)",
        "for k, v in sd.items():\n    if g:\n        sd[k] = v.to('cuda')\nreturn sd",
        "n = len(sd)\nfor k, v in sd.items():\n    sd[k] = v.to('cuda')\nreturn n",
        "for k, v in sd.items():\n    sd[k] = v.to('cuda')\nfor k in sd.keys(): pass",
    ],
)
def test_rekeyed_in_walk(body: str) -> None:
    function = _function(body)
    assert rekeyed_in_walk(function, "sd", _walk(function))


@pytest.mark.parametrize(
    "body",
    [
        # no write at all: only_read's business, not this one's
        "for k, v in sd.items():\n    v.to('cuda')",
        # another key, the key rebound, a read of a replaced item, a second walk, an alias
        "for k, v in sd.items():\n    sd['w'] = v",
        "for k, v in sd.items():\n    k = g\n    sd[k] = v",
        "for k, v in sd.items():\n    for k in g: pass\n    sd[k] = v",
        "for k, v in sd.items():\n    sd[k] = v.pin_memory()\n    sd[k].to('cuda')",
        "for k, v in sd.items():\n    sd[k] = v\nfor k, v in sd.items(): pass",
        "for k, v in sd.items():\n    sd[k] = v\nx = sd.get('w')",
        "other = sd\nfor k, v in sd.items():\n    sd[k] = v",
        "for k, v in sd.items():\n    sd[k] = v\ng(sd)",
        "for k, v in sd.items():\n    sd[k] = v\n    sd.pop(k)",
        "for k, v in sd.items():\n    f = lambda: k\n    sd[k] = v",
        # not `for k, v in sd.items()`
        "for k in sd:\n    sd[k] = g",
        "for v in sd.values():\n    sd[g] = v",
        "for k, v in g.items():\n    sd[k] = v",
    ],
)
def test_not_rekeyed_in_walk(body: str) -> None:
    function = _function(body)
    assert not rekeyed_in_walk(function, "sd", _walk(function))
