"""Review #5: file names that look like options must not be parsed as options by the hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.security.conftest import FINDING, pinlint, project

HOOKS = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


@pytest.mark.parametrize("hook", ["pinlint", "pinlint-fix"])
@pytest.mark.parametrize("evil", ["--extend-exclude=*.py", "-seo.py", "--cache-dir=..", "--ignore=PIN"])
def test_hook_treats_option_like_names_as_files(tmp_path: Path, home: Path, hook: str, evil: str) -> None:
    """Run the hook's command line as pre-commit builds it: entry + args + file names (option-like
    names sort first)."""
    spec = next(h for h in yaml.safe_load(HOOKS.read_text()) if h["id"] == hook)
    assert spec["args"][-1] == "--"
    proj = project(tmp_path / "repo", {"a.py": FINDING, evil: "#!/usr/bin/env python3\n"})
    entry = spec["entry"].split()
    assert entry[0] == "pinlint"
    ran = pinlint(*entry[1:], *spec["args"], evil, "a.py", cwd=proj)
    assert ran.returncode == 1, ran  # the finding in a.py fails the hook
    assert "PIN001" in ran.stdout
    assert not (tmp_path / "0.1.0").exists() and not (tmp_path / ".gitignore").exists()
