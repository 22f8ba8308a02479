"""Issue 14: the project's own helper and idiom, whatever the paths of the run; formatter-clean edits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pinlint.fix.module_facts import _FACTS_VERSION

HOT = """\
import torch


def upload(device):
    return torch.tensor([1, 2, 3]).to(device, non_blocking=True)
"""


def _pinlint(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pinlint", "check", *args],
        cwd=cwd,
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _project(root: Path, files: dict[str, str], pyproject: str = "[tool.pinlint]\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _fixed_whole_project(
    tmp_path: Path, files: dict[str, str], target: str, pyproject: str = "[tool.pinlint]\n"
) -> str:
    whole = _project(tmp_path / "whole", files, pyproject)
    _pinlint(whole, ".", "--fix", "--no-cache")
    return (whole / target).read_text()


PKG = {
    "pkg/__init__.py": "",
    "pkg/platform.py": "import torch\n\n\ndef is_pin_memory_available(device):\n    return torch.cuda.is_available()\n",
    "pkg/hot.py": HOT,
    "tests/helpers.py": "def is_pin_memory_available():\n    return False\n",
}


def test_one_file_stdin_and_whole_project_runs_fix_alike(tmp_path: Path) -> None:
    expected = _fixed_whole_project(tmp_path, PKG, "pkg/hot.py")
    assert "from pkg.platform import is_pin_memory_available" in expected  # the package's, not tests/'
    assert "is_pin_memory_available(device)" in expected

    one = _project(tmp_path / "one", PKG)
    _pinlint(one, "pkg/hot.py", "--fix", "--no-cache")
    assert (one / "pkg" / "hot.py").read_text() == expected

    std = _project(tmp_path / "std", PKG)
    proc = _pinlint(std, "-", "--stdin-filename", "pkg/hot.py", "--fix", "--no-cache", stdin=HOT)
    assert proc.stdout == expected


def test_the_dominant_constant_idiom_is_followed(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/utils.py": "def is_pin_memory_available():\n    return False\n",
        "pkg/consts.py": "from pkg.utils import is_pin_memory_available\n\nPIN_MEMORY = is_pin_memory_available()\n",
        "pkg/a.py": "import torch\n\nfrom pkg.consts import PIN_MEMORY\n\nA = torch.zeros(2, pin_memory=PIN_MEMORY)\n",
        "pkg/b.py": "import torch\n\nfrom pkg.consts import PIN_MEMORY\n\nB = torch.ones(2, pin_memory=PIN_MEMORY)\n",
        "pkg/hot.py": HOT,
    }
    fixed = _fixed_whole_project(tmp_path, files, "pkg/hot.py")
    assert "from pkg.consts import PIN_MEMORY" in fixed
    assert "pin_memory=PIN_MEMORY)" in fixed and "is_pin_memory_available" not in fixed


def test_no_import_that_closes_a_cycle(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": "from pkg import hot\n\n\ndef is_pin_memory_available(device):\n    return False\n",
        "pkg/hot.py": HOT,
    }
    root = _project(tmp_path / "p", files)
    proc = _pinlint(root, ".", "--no-cache")
    assert "import cycle" in proc.stdout, proc.stdout
    _pinlint(root, ".", "--fix", "--unsafe-fixes", "--no-cache")
    assert (root / "pkg" / "hot.py").read_text() == HOT


@pytest.mark.parametrize(
    ("config", "exploded"),
    [
        ("[tool.pinlint]\n", True),  # 88
        ("[tool.pinlint]\n[tool.ruff]\nline-length = 120\n", False),
        ("[tool.pinlint]\n[tool.black]\nline-length = 120\n", False),
    ],
)
def test_line_length_comes_from_the_project(tmp_path: Path, config: str, exploded: bool) -> None:
    fixed = _fixed_whole_project(tmp_path, PKG, "pkg/hot.py", config)
    assert ("torch.tensor(\n        [1, 2, 3],\n" in fixed) is exploded, fixed


def test_flake8_max_line_length(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PKG)
    (root / "setup.cfg").write_text("[flake8]\nmax-line-length = 120\n")
    _pinlint(root, ".", "--fix", "--no-cache")
    assert "torch.tensor([1, 2, 3], pin_memory=" in (root / "pkg" / "hot.py").read_text()


def test_joins_an_existing_from_import_in_sorted_position(tmp_path: Path) -> None:
    files = {
        **PKG,
        "pkg/platform.py": PKG["pkg/platform.py"] + "\n\ndef a_first():\n    pass\n\n\ndef z_last():\n    pass\n",
        "pkg/hot.py": "import torch\n\nfrom pkg.platform import a_first, z_last\n" + HOT.split("\n", 1)[1],
    }
    fixed = _fixed_whole_project(tmp_path, files, "pkg/hot.py")
    assert "from pkg.platform import a_first, is_pin_memory_available, z_last\n" in fixed


def test_project_facts_are_cached_as_signed_validated_json(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PKG)
    _pinlint(root, ".")
    facts = root / ".pinlint_cache" / "project-facts.json"
    blob = facts.read_bytes()
    magic, signature, payload = blob.split(b"\n", 2)
    assert magic == b"PINLINT-FACTS-1" and len(signature) == 64  # signed with this user's key
    data = json.loads(payload)
    assert data["version"] == _FACTS_VERSION and any(p.endswith("platform.py") for p in data["files"])
    # A committed (unsigned) facts file naming another helper is not trusted.
    forged = {"version": 1, "pinlint": data["pinlint"], "files": {"x": {"size": "no"}}}
    facts.write_text(json.dumps(forged))
    proc = _pinlint(root, ".", "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "from pkg.platform import is_pin_memory_available" in (root / "pkg" / "hot.py").read_text()
