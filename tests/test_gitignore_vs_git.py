"""``.gitignore`` handling proved against git itself: for generated trees and patterns (negation,
``**``, anchored and directory-only patterns, character classes, nested ``.gitignore`` files),
the files ``discover()`` keeps are exactly the ones ``git ls-files --others --exclude-standard``
does not ignore. Written against ``discover()``'s public behaviour, not the matcher, so that it
holds whichever matcher implementation is in place."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from pinlint.discovery import discover

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

#: Every tree has these files; the patterns below decide which are ignored.
FILES = (
    "top.py",
    "keep.py",
    "a.py",
    "b.py",
    "ab.py",
    "sub/top.py",
    "sub/keep.py",
    "sub/x.py",
    "sub/deep/x.py",
    "sub/deep/keep.py",
    "gen/out.py",
    "src/gen/out.py",
    "src/pkg/gen/out.py",
    "build_out/mod.py",
    "src/build_out/mod.py",
    "docs/conf.py",
    "docs/api/conf.py",
    "ign/a.py",
    "ign/b.py",
    "a/b.py",
    "a/x/b.py",
    "a/x/y/b.py",
    "other/a/b.py",
)

#: (name, root .gitignore, {directory: nested .gitignore}).
CASES: list[tuple[str, str, dict[str, str]]] = [
    ("negation", "*.py\n!keep.py\n", {}),
    ("negation-later-wins", "!keep.py\n*.py\n", {}),
    ("double-star-prefix", "**/gen/*.py\n", {}),
    ("double-star-middle", "a/**/b.py\n", {}),
    ("double-star-suffix", "docs/**\n", {}),
    ("anchored-leading-slash", "/top.py\n", {}),
    ("anchored-by-inner-slash", "sub/x.py\n", {}),
    ("unanchored-name", "x.py\n", {}),
    ("directory-only", "build_out/\n", {}),
    ("directory-only-anchored", "/build_out/\n", {}),
    ("reinclude-in-ignored-directory", "ign/\n!ign/a.py\n", {}),
    ("reinclude-after-contents-pattern", "ign/*\n!ign/a.py\n", {}),
    ("character-class", "[ab].py\n", {}),
    ("character-class-negated", "[!a].py\n", {}),
    ("question-mark", "?.py\n", {}),
    ("comments-and-blank-lines", "# a comment\n\n  \nkeep.py\n", {}),
    ("nested-negates-parent", "*.py\n", {"sub": "!keep.py\n"}),
    ("nested-anchored", "", {"sub": "/x.py\n"}),
    ("nested-ignores-more", "gen/\n", {"sub": "keep.py\n", "sub/deep": "*.py\n!keep.py\n"}),
    ("nested-directory-only", "", {"src": "gen/\n"}),
]

#: The pool random cases draw from.
POOL = (
    "*.py",
    "!keep.py",
    "keep.py",
    "x.py",
    "/top.py",
    "sub/",
    "sub/*",
    "!sub/keep.py",
    "**/gen/",
    "gen",
    "/gen/",
    "a/**/b.py",
    "a/**",
    "**/b.py",
    "docs/**",
    "!docs/conf.py",
    "build_out/",
    "[ab].py",
    "?.py",
    "ign/",
    "!ign/a.py",
    "src/**/out.py",
    "deep/",
    "!deep/keep.py",
    "*/x.py",
)


def _random_cases(count: int) -> list[tuple[str, str, dict[str, str]]]:
    rng = random.Random(17)
    cases = []
    for i in range(count):
        root = "\n".join(rng.sample(POOL, rng.randint(1, 4))) + "\n"
        nested = {"sub": "\n".join(rng.sample(POOL, rng.randint(1, 2))) + "\n"} if rng.random() < 0.4 else {}
        cases.append((f"random-{i}", root, nested))
    return cases


def _git_kept(repo: Path) -> set[str]:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--", "*.py"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(listed.split())


def _pinlint_kept(repo: Path) -> set[str]:
    found = discover([str(repo)], root=repo, exclude=[".git"], respect_gitignore=True, force_exclude=False)
    return {path.relative_to(repo).as_posix() for path in found.files}


@pytest.mark.parametrize(
    ("name", "root", "nested"),
    CASES + _random_cases(40),
    ids=lambda v: v if isinstance(v, str) and "\n" not in v else "",
)
def test_discovery_agrees_with_git(tmp_path: Path, name: str, root: str, nested: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    for file in FILES:
        (repo / file).parent.mkdir(parents=True, exist_ok=True)
        (repo / file).write_text("x = 1\n")
    (repo / ".gitignore").write_text(root)
    for directory, text in nested.items():
        (repo / directory / ".gitignore").write_text(text)
    git, pinlint = _git_kept(repo), _pinlint_kept(repo)
    assert pinlint == git, (
        f"{name}: root .gitignore {root!r}, nested {nested!r}\n"
        f"  pinlint keeps, git ignores: {sorted(pinlint - git)}\n"
        f"  git keeps, pinlint ignores: {sorted(git - pinlint)}"
    )
