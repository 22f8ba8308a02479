"""Which project decorators pass the call through (the decorated function is then followed)."""

from __future__ import annotations

import pytest

from pinlint.analysis.decorators import passes_through

PLAIN = """
import functools

def deco(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner
"""

TIMED = """
def deco(func):
    \"\"\"Times the call.\"\"\"
    def wrapped(*a, **k):
        push(func.__qualname__)
        result = func(*a, **k)
        pop()
        return result
    return wrapped
"""


@pytest.mark.parametrize("text", [PLAIN, TIMED])
def test_plain_wrappers_pass_through(text: str) -> None:
    assert passes_through(text, "deco")


@pytest.mark.parametrize(
    "body",
    [
        "return fn(x.pin_memory(), **kwargs)",  # changes an argument
        "args = args[1:]\n        return fn(*args, **kwargs)",  # rebinds the arguments
        "if ok:\n            return fn(*args, **kwargs)\n        return None",  # may not call it
        "result = fn(*args, **kwargs)\n        return result.pin_memory()",  # changes the result
        "result = fn(*args, **kwargs)\n        result = other\n        return result",
        "fn(*args, **kwargs)\n        return fn(*args, **kwargs)",  # calls it twice
        "log(fn)\n        return fn(*args, **kwargs)",  # hands the function on
        "return cache.get(key) or fn(*args, **kwargs)",  # may return something else
    ],
)
def test_other_wrappers_do_not(body: str) -> None:
    text = f"def deco(fn):\n    def inner(*args, **kwargs):\n        {body}\n    return inner\n"
    assert not passes_through(text, "deco")


def test_a_name_bound_twice_or_a_factory_does_not() -> None:
    assert not passes_through(PLAIN + "\ndeco = other\n", "deco")
    assert not passes_through(PLAIN + "\nif X:\n    def deco(fn):\n        return fn\n", "deco")
    factory = "def deco(name):\n    def outer(fn):\n        return fn\n    return outer\n"
    assert not passes_through(factory, "deco")
    assert not passes_through(PLAIN, "missing")
