"""``import pinlint.runtime`` and the pytest plugin work without torch; using a watch says how to
install it. Runs in subprocesses where importing torch is blocked, so it runs with or without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLOCK_TORCH = "import sys; sys.modules['torch'] = None\n"


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK_TORCH + code], capture_output=True, text=True, cwd=REPO)


def test_package_imports_without_torch_and_watch_explains() -> None:
    out = run(
        "import pinlint.runtime as rt, pinlint.runtime.pytest_plugin, pinlint.runtime.cli\n"
        "try:\n"
        "    with rt.watch(simulate='fake'):\n"
        "        pass\n"
        "except rt.MissingTorchError as exc:\n"
        "    print('ERR', exc)\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR pinlint.runtime needs PyTorch: pip install 'torch-pinlint[runtime]'")


def test_trace_without_torch_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    out = run(f"from pinlint.runtime.cli import _main\n_main(['trace', '--', 'python', {str(script)!r}])")
    assert out.returncode == 2
    assert "pip install 'torch-pinlint[runtime]'" in out.stderr
