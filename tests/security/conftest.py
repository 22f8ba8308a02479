"""Helpers for the security tests: pinlint run as CI runs it (a real subprocess, the console
script, a fresh user cache folder), and the finding-bearing file of the review's reproducers."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

FINDING = """import torch


def step(lens_list, device):
    lens = torch.tensor(lens_list, dtype=torch.int64)
    return lens.to(device, non_blocking=True)
"""

#: The console script: unlike `python -m pinlint`, it does not put the cwd on sys.path.
PINLINT = str(Path(sys.executable).with_name("pinlint"))


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME / XDG cache folder (where the cache key lives) for each test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("PINLINT_CACHE_DIR", raising=False)
    monkeypatch.delenv("PINLINT_NO_CACHE", raising=False)
    monkeypatch.delenv("PINLINT_OUTPUT_FORMAT", raising=False)
    return home


def pinlint(*args: str, cwd: Path, timeout: float = 60, stdin: str | None = None) -> Ran:
    proc = subprocess.run(
        [PINLINT, *args],
        check=False,
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        env=dict(os.environ),
        input=(stdin or "").encode(),
    )
    return Ran(
        proc.returncode,
        proc.stdout.decode(errors="surrogateescape"),
        proc.stderr.decode(errors="surrogateescape"),
    )


def project(path: Path, files: dict[str, str] | None = None, git: bool = True) -> Path:
    """A checkout: ``.git`` marks its root (what pinlint must never look above)."""
    path.mkdir(parents=True, exist_ok=True)
    if git:
        (path / ".git").mkdir(exist_ok=True)
    for name, text in (files or {"a.py": FINDING}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path
