"""The cache's decoder: every value is checked against the result dataclasses' exact shapes
(the decoders are built once per type; the checks are the same for every value)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

import pytest

from pinlint import datacodec
from pinlint.core.results import FileAnalysis, FileResult


class Colour(enum.Enum):
    RED = "red"


@dataclass
class Inner:
    name: str
    count: int = 0


@dataclass
class Outer:
    inner: Inner
    items: list[tuple[str, int]] = field(default_factory=list)
    tags: frozenset[str] = frozenset()
    colour: Colour | None = None
    mode: Literal["a", "b"] = "a"
    ratio: float = 0.0
    by_name: dict[str, int] = field(default_factory=dict)
    nested: Outer | None = None  # a type that contains itself


def test_a_value_survives_the_round_trip() -> None:
    value = Outer(Inner("x", 2), [("a", 1)], frozenset({"t"}), Colour.RED, "b", 1.5, {"k": 3}, Outer(Inner("y")))
    assert datacodec.decode(Outer, datacodec.encode(value)) == value


def test_a_file_result_with_the_triage_reads_survives_the_round_trip() -> None:
    result = FileResult("m.py", FileAnalysis(depends_on=[("/p/h.py", "ab")]), triage_reads=[("/p/x.py", "")])
    assert datacodec.decode(FileResult, datacodec.encode(result)) == result


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(extra=1),  # an unknown key
        lambda d: d.pop("ratio"),  # a missing key
        lambda d: d.update(ratio="1"),  # a string for a number
        lambda d: d["inner"].update(count=True),  # a boolean is no integer
        lambda d: d.update(items=[["a", 1, 2]]),  # a tuple of the wrong length
        lambda d: d.update(items=[("a", 1)]),  # not an array (a Python tuple: JSON never has one)
        lambda d: d.update(colour="blue"),  # no such member
        lambda d: d.update(mode="c"),  # not one of the literals
        lambda d: d.update(by_name={"k": "3"}),
        lambda d: d.update(nested={"inner": 1}),  # deep inside the type that contains itself
        lambda d: d.update(inner=None),
    ],
)
def test_a_wrong_shape_is_refused(change) -> None:  # type: ignore[no-untyped-def]
    data = datacodec.encode(Outer(Inner("x"), [("a", 1)]))
    change(data)
    with pytest.raises(datacodec.ShapeError):
        datacodec.decode(Outer, data)


def test_an_untyped_field_is_refused() -> None:
    @dataclass
    class Loose:
        value: object

    with pytest.raises(datacodec.ShapeError):
        datacodec.decode(Loose, {"value": 1})
