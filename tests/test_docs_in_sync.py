"""The generated docs (rule pages, rule index, configuration reference) match `rules/` and `config.KEYS`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pinlint import catalog, docs_gen
from pinlint.config import KEYS, ConfigError, load

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_generated_docs_are_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pinlint.docs_gen", "--check", "--docs-dir", str(DOCS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr + "\n(regenerate with `python -m pinlint.docs_gen`)"


def test_check_detects_drift_and_regeneration_fixes_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    assert docs_gen.main(["--docs-dir", str(docs)]) == 0
    assert docs_gen.main(["--check", "--docs-dir", str(docs)]) == 0
    page = docs / "rules" / docs_gen.rule_page_name(catalog.all_rules()[0])
    page.write_text(page.read_text() + "hand edit\n")
    (docs / "rules" / "PIN999-removed-rule.md").write_text("# gone\n")
    assert docs_gen.main(["--check", "--docs-dir", str(docs)]) == 1
    assert docs_gen.main(["--docs-dir", str(docs)]) == 0
    assert not (docs / "rules" / "PIN999-removed-rule.md").exists()
    assert docs_gen.main(["--check", "--docs-dir", str(docs)]) == 0


def test_every_rule_has_its_page_at_its_url() -> None:
    for rule in catalog.all_rules():
        page = DOCS / "rules" / docs_gen.rule_page_name(rule)
        assert rule.url.endswith("/docs/rules/" + page.name)
        assert rule.to_markdown() in page.read_text()


def test_every_config_key_is_documented() -> None:
    text = (DOCS / "configuration.md").read_text()
    for key, (_kind, doc) in KEYS.items():
        assert f"### `{key}`" in text
        assert doc in text


@pytest.mark.parametrize("key", sorted(KEYS))
def test_config_examples_are_valid(key: str, tmp_path: Path) -> None:
    # Each documented example is loaded by pinlint's own loader: a wrong type or an unknown
    # code in the docs fails here, not in a user's CI.
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n" + docs_gen.EXAMPLES[key] + "\n")
    try:
        config = load(None, cwd=tmp_path)
    except ConfigError as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"the documented example for `{key}` is invalid: {exc}")
    assert config.path == tmp_path / "pyproject.toml"


def test_hand_written_pages_link_to_existing_pages() -> None:
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).resolve().is_file(), f"{page.relative_to(ROOT)} links to missing {target}"
