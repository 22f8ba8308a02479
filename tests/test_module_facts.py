"""What one module says about the project's pin-memory idiom, read by a walk of its statements:
the scoping rules the facts depend on (TYPE_CHECKING, class bodies, ``global``, methods)."""

from __future__ import annotations

import ast

from pinlint.fix.module_facts import mentions_idiom, module_facts

SOURCE = """
from typing import TYPE_CHECKING

import torch
from pkg.consts import PIN_MEMORY
from .platform import is_pin_memory_available as avail

if TYPE_CHECKING:
    from pkg.typing_only import is_pin_memory_available

try:
    from pkg.fast import thing
except ImportError:
    thing = None


class Holder:
    from pkg.in_class import helper

    def is_pin_memory_available(self, device):
        return True


def setup():
    global late
    from pkg.late import late


def use(device):
    a = torch.zeros(2, pin_memory=avail(device))
    b = torch.zeros(2, pin_memory=PIN_MEMORY)
    c = torch.zeros(2, pin_memory=self.pin)
    d = torch.zeros(2, pin_memory=True)
    return a, b, c, d


PINNED = avail("cuda")
"""


def test_the_facts_follow_python_scoping() -> None:
    facts = module_facts(ast.parse(SOURCE), "pkg.mod", False, SOURCE)
    # The TYPE_CHECKING import never runs; the relative one does, under its absolute name.
    assert facts.imports == ["pkg.platform"]
    assert facts.definition is None  # the class's method is not the module's helper
    assert facts.methods == [{"style": "positional", "keyword": "", "reason": ""}]
    assert facts.calls == [["pkg.platform", "positional"], ["pkg.platform", "positional"]]
    assert facts.pin_values == {"helper": 1, "const:PIN_MEMORY:pkg.consts": 1, "self:pin": 1, "other": 1}
    assert facts.constants == ["PINNED"]
    # Module-level run-time imports (a `global` import in a function is not one; nor is the class body's).
    assert "pkg.late" not in facts.module_imports and "pkg.in_class" not in facts.module_imports
    assert {"pkg.consts", "pkg.fast", "pkg.platform", "torch"} <= set(facts.module_imports)
    assert "pkg.typing_only" not in facts.module_imports


def test_a_global_import_binds_the_module_name() -> None:
    source = "def f():\n    global PIN\n    from pkg.c import PIN\n\n\ndef g(d):\n    return zeros(1, pin_memory=PIN)\n"
    facts = module_facts(ast.parse(source), "pkg.m", False, source)
    assert facts.pin_values == {"const:PIN:pkg.c": 1}  # resolved through the `global` import
    assert facts.module_imports == []  # but it is not an import the module runs when loaded


def test_mentions() -> None:
    assert mentions_idiom(b"x = zeros(1, pin_memory=flag)")
    assert mentions_idiom(b"from a import is_pin_memory_available")
    assert not mentions_idiom(b"x = zeros(1, pin_memory=True)")  # a literal teaches nothing
    assert not mentions_idiom(b"import torch")
