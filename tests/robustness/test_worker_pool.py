"""The worker pool ends cleanly: nothing is left for Python's exit hooks to trip over."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import process as futures_process
from pathlib import Path

from pinlint import runner


def test_closing_the_pool_leaves_no_wakeup_for_the_exit_hook() -> None:
    # Python < 3.12 writes to every registered executor's wake-up pipe at exit; the executor's
    # thread closes that pipe as it ends, so a registration left behind prints
    # "Exception ignored ... OSError: [Errno 9] Bad file descriptor" (seen under load).
    pool = runner.WorkerPool(2)
    assert pool.pool.submit(sum, [1, 2]).result(timeout=60) == 3
    manager = pool.pool._executor_manager_thread  # type: ignore[attr-defined]
    assert manager is not None and manager in futures_process._threads_wakeups  # type: ignore[attr-defined]
    pool.close()
    assert not manager.is_alive()
    assert manager not in futures_process._threads_wakeups  # type: ignore[attr-defined]


def test_a_parallel_run_prints_nothing_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(
            "import torch\n\ndef f(dev):\n    return torch.zeros(4).to(dev, non_blocking=True)\n"
        )
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-m", "pinlint", "check", ".", "--no-cache", "--jobs", "2", "--output-format", "concise"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stdout.count("PIN001") == 4
        assert done.stderr == ""
