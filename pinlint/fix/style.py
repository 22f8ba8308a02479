"""The project's formatting settings a fix must respect: the line length.

Read from the project root the way the tools themselves read it: ``[tool.ruff] line-length`` (or
``ruff.toml`` / ``.ruff.toml``), ``[tool.black] line-length``, flake8's ``max-line-length`` in
``setup.cfg``, ``tox.ini`` or ``.flake8``; 88 (ruff's and black's default) when none says.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

from pinlint.safeio import MAX_CONFIG_BYTES, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_LINE_LENGTH = 88


def _text(path: Path) -> str | None:
    """A settings file's text: bounded, regular files only (a committed link to /dev/zero or a
    FIFO must not hang a run), else None."""
    try:
        return read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _toml(path: Path) -> dict:  # type: ignore[type-arg]
    text = _text(path)
    try:
        return tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        return {}


def _valid(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 20 <= value <= 1000 else None


def line_length(root: Path | None) -> int:
    if root is None:
        return DEFAULT_LINE_LENGTH
    for name in ("ruff.toml", ".ruff.toml"):
        found = _valid(_toml(root / name).get("line-length"))
        if found:
            return found
    tool = _toml(root / "pyproject.toml").get("tool", {})
    if isinstance(tool, dict):
        for section in ("ruff", "black"):
            table = tool.get(section)
            found = _valid(table.get("line-length")) if isinstance(table, dict) else None
            if found:
                return found
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        parser = configparser.ConfigParser()
        text = _text(root / name)
        if text is None:
            continue
        try:
            parser.read_string(text, source=str(root / name))
        except configparser.Error:
            continue
        for key in ("max-line-length", "max_line_length"):
            if parser.has_option("flake8", key):
                try:
                    found = _valid(int(parser.get("flake8", key)))
                except ValueError:
                    found = None
                if found:
                    return found
    return DEFAULT_LINE_LENGTH
