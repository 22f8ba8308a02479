"""What a star import binds, as the analysis reads it (only what is certain is followed)."""

from __future__ import annotations

import pytest

from pinlint.analysis.star_imports import exports, provider, star_imports


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("def upload(t): ...\n", True),
        ("class upload: ...\n", True),
        ("upload = make()\n", True),
        ("from .impl import upload\n", True),
        ("def other(): ...\n", False),
        ("__all__ = ['other']\ndef upload(t): ...\n", False),  # `__all__` decides
        ("__all__ = ('upload',)\ndef upload(t): ...\n", True),
        ("__all__ = [n for n in ('upload',)]\ndef upload(t): ...\n", None),  # computed
        ("__all__ = ['upload']\n__all__ += ['x']\ndef upload(t): ...\n", None),  # changed after
        ("__all__ = ['upload']\n__all__.append('x')\ndef upload(t): ...\n", None),
        ("if FAST:\n    def upload(t): ...\n", None),  # bound under a condition
        ("try:\n    from .fast import upload\nexcept ImportError:\n    pass\n", None),
        ("from .more import *\n", None),  # may come from a star import of its own
        ("from .more import *\ndef upload(t): ...\n", True),
        ("def _upload(t): ...\n", False),
    ],
)
def test_exports(text: str, expected: bool | None) -> None:
    name = "_upload" if "_upload" in text else "upload"
    assert exports(text, name) is expected


def test_the_last_star_import_that_binds_the_name_wins() -> None:
    modules = {"a": "def upload(t): ...\n", "b": "def upload(t): ...\n", "c": "def other(): ...\n"}
    text = "from .a import *\nfrom .b import *\nfrom .c import *\n"
    assert provider(text, "upload", lambda level, module: modules[module]) == (1, "b")
    assert provider(text, "other", lambda level, module: modules[module]) == (1, "c")
    assert provider(text, "missing", lambda level, module: modules[module]) is None


def test_an_undecided_star_import_stops_the_resolution() -> None:
    modules = {"a": "def upload(t): ...\n"}
    # A module that cannot be read (a library's), after the one that binds the name.
    assert provider("from .a import *\nfrom lib import *\n", "upload", lambda lv, m: modules.get(m)) is None
    # A star import under a condition.
    assert (
        provider("try:\n    from .a import *\nexcept ImportError:\n    pass\n", "upload", lambda lv, m: modules[m])
        is None
    )
    assert star_imports("x = 1\n") == []


def test_a_name_also_bound_under_a_condition_is_undecided() -> None:
    assert exports("def upload(t): ...\nif FAST:\n    upload = fast\n", "upload") is None
