"""Review #13: `pinlint probe` (no --run) must not import the checkout's `torch.py`."""

from __future__ import annotations

from pathlib import Path

from tests.security.conftest import pinlint, project


def test_probe_does_not_import_modules_from_the_cwd(tmp_path: Path, home: Path) -> None:
    marker = tmp_path / "PWNED-by-torch.py"
    proj = project(
        tmp_path / "p",
        {
            "torch.py": f'import pathlib; pathlib.Path({str(marker)!r}).write_text("ran")\nraise ImportError("shadow")\n',
            "numpy.py": f'import pathlib; pathlib.Path({str(marker)!r}).write_text("ran")\n',
        },
    )
    pinlint("probe", "--quick", cwd=proj, timeout=300)
    assert not marker.exists()
