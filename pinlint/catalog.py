"""The rule catalog: each registered rule's documentation, from the ``<CODE>.toml`` beside its
module in ``pinlint/rules/``.

It is the single source for ``pinlint rule CODE``, the generated docs pages, the SARIF rule list
and the example-driven tests.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DOCS_BASE_URL = "https://github.com/pinlint/torch-pinlint/blob/main/docs/rules"


@dataclass(frozen=True)
class Example:
    """A tested example: bad ones must be flagged (at ``row``:``column`` with ``message`` when
    given) and fix to ``fixed``; good ones must not be flagged. ``doc`` ones are shown in the docs."""

    code: str
    #: For a bad example: the expected source after ``--fix`` (with ``--unsafe-fixes`` when
    #: ``unsafe``), or None when the rule offers no fix for it.
    fixed: str | None = None
    unsafe: bool = False
    config: str = ""
    row: int | None = None
    column: int | None = None
    message: str | None = None
    doc: bool = False


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    summary: str
    default_enabled: bool
    #: "always", "sometimes" or "never", as ruff words fix availability.
    fix_availability: str
    what_it_does: str
    why_bad: str
    fix_safety: str
    options: str
    bad_examples: tuple[Example, ...]
    good_examples: tuple[Example, ...]

    @property
    def url(self) -> str:
        return f"{DOCS_BASE_URL}/{self.code}-{self.name}.md"

    def _example_section(self) -> list[str]:
        """The documented examples: the tested ones marked ``doc`` (the first bad one, shown with
        its fixed output or the documented good example as "Use instead")."""
        if not self.bad_examples:
            return []  # a rule without examples fails its tests; its page just has none
        bad = next((e for e in self.bad_examples if e.doc), self.bad_examples[0])
        good = next((e for e in self.good_examples if e.doc), None)
        instead = bad.fixed if bad.fixed is not None else (good.code if good else None)
        parts = ["## Example", "```python", bad.code.strip("\n"), "```", ""]
        if instead is not None:
            note = " (the fix's output)" if bad.fixed is not None else ""
            parts += [f"Use instead{note}:", "```python", instead.strip("\n"), "```", ""]
        if bad.fixed is not None and good is not None:
            # An unsafe fix's output is one remedy; the documented good example is the other.
            parts += ["Or, by hand:", "```python", good.code.strip("\n"), "```", ""]
        return parts

    def to_markdown(self) -> str:
        fix_line = {
            "always": "Fix is always available.",
            "sometimes": "Fix is sometimes available.",
            "never": "Fix is not available.",
        }[self.fix_availability]
        default = "on by default" if self.default_enabled else "off by default (select it to enable)"
        parts = [
            f"# {self.name} ({self.code})",
            "",
            f"{self.summary} This rule is {default}. {fix_line}",
            "",
            "## What it does",
            self.what_it_does.strip(),
            "",
            "## Why is this bad?",
            self.why_bad.strip(),
            "",
            *self._example_section(),
            "## Fix safety",
            self.fix_safety.strip(),
        ]
        if self.options.strip():
            parts += ["", "## Options", self.options.strip()]
        return "\n".join(parts) + "\n"


RULES_DIR = Path(__file__).resolve().parent / "rules"


def _examples(raw: list[dict[str, object]]) -> tuple[Example, ...]:
    return tuple(
        Example(
            code=str(item["code"]),
            fixed=None if item.get("fixed") is None else str(item["fixed"]),
            unsafe=bool(item.get("unsafe", False)),
            config=str(item.get("config", "")),
            row=None if item.get("row") is None else int(item["row"]),  # type: ignore[call-overload]
            column=None if item.get("column") is None else int(item["column"]),  # type: ignore[call-overload]
            message=None if item.get("message") is None else str(item["message"]),
            doc=bool(item.get("doc", False)),
        )
        for item in raw
    )


@lru_cache(maxsize=1)
def all_rules() -> tuple[RuleDoc, ...]:
    from pinlint.rules import RULES

    rules = []
    for registered in RULES:
        path = RULES_DIR / f"{registered.code}.toml"
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        rules.append(
            RuleDoc(
                code=data["code"],
                name=data["name"],
                summary=data["summary"],
                default_enabled=bool(data["default"]),
                fix_availability=data["fix"],
                what_it_does=data["what_it_does"],
                why_bad=data["why_bad"],
                fix_safety=data["fix_safety"],
                options=data.get("options", ""),
                bad_examples=_examples(data.get("bad", [])),
                good_examples=_examples(data.get("good", [])),
            )
        )
    return tuple(rules)


def get_rule(code_or_name: str) -> RuleDoc | None:
    key = code_or_name.strip()
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    return None


def all_codes() -> tuple[str, ...]:
    return tuple(rule.code for rule in all_rules())
