"""scripts/gpu_check.sh on this (CPU-only) machine: it must end cleanly with "no CUDA" verdicts
(exit 3, never a pass), and say FAIL when torch is missing, without trying to install it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _run(out: Path, python: str, via_env: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": python}
    args = ["bash", str(SCRIPT)]
    if via_env:
        env["OUT"] = str(out)
    else:
        args.append(str(out))
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")
def test_without_cuda_writes_skipped_verdicts_and_exits_3(tmp_path: Path) -> None:
    out = tmp_path / "verdicts"
    proc = _run(out, sys.executable, via_env=True)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = (out / "verdicts.txt").read_text().splitlines()
    assert lines[0] == "probe: SKIPPED, no CUDA device (not a pass)"
    assert lines[1].startswith("gpu-tests: SKIPPED, no CUDA device (") and "not a pass" in lines[1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary == {"cuda": False, "probe": "skipped", "probe_exit": 3, "gpu_tests": "skipped"}
    assert json.loads((out / "probe.json").read_text())["skipped"] == "no CUDA device"
    assert "skipped" in (out / "gpu-tests.xml").read_text()


def test_without_torch_fails_and_installs_nothing(tmp_path: Path) -> None:
    no_site = tmp_path / "python-without-torch"
    no_site.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')  # -S: no site-packages
    no_site.chmod(0o755)
    proc = _run(tmp_path / "v", str(no_site))
    assert proc.returncode == 1
    verdicts = (tmp_path / "v" / "verdicts.txt").read_text()
    assert "probe: FAIL (torch is not importable" in verdicts
    assert "pip" not in proc.stdout + proc.stderr
