"""A test program: a small project (``prog.py`` with ``main(device)``, a helper, a config)."""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

#: The kinds of issue 12, plus ``plain``: fixes that are safe and must be applied.
KINDS = ("binding", "helper-scope", "imports", "data", "helper-args", "race", "edge", "plain")

SAFE = "safe"
NOT_SAFE = "unsafe_or_none"

# The helper answers what the harness asks (FIXSAFETY_PIN), in each of the real signatures. Like
# real helpers, those taking a device look at it (torch.device(...)), so a wrong value is observable.
_ANSWER = 'os.environ.get("FIXSAFETY_PIN") == "1"'
_HEAD = "import os\n\nimport torch\n\n\n"
HELPERS: dict[str, str] = {
    "device": _HEAD
    + "def is_pin_memory_available(device):\n"
    + "    torch.device(device)\n"
    + f"    return {_ANSWER}\n",
    "device_default": _HEAD
    + "def is_pin_memory_available(device=None):\n"
    + "    if device is not None:\n"
    + "        torch.device(device)\n"
    + f"    return {_ANSWER}\n",
    "noarg": _HEAD + f"def is_pin_memory_available():\n    return {_ANSWER}\n",
    "kwonly": _HEAD
    + "def is_pin_memory_available(*, device=None):\n"
    + "    if device is not None:\n"
    + "        torch.device(device)\n"
    + f"    return {_ANSWER}\n",
}
DEFAULT_CONFIG = "pinhelp:is_pin_memory_available(device)"


@dataclass(frozen=True)
class Program:
    id: str
    kind: str
    #: SAFE: a safe fix must be applied and keep behaviour; NOT_SAFE: ``--fix`` must change nothing.
    expect: str
    #: Relative path -> text (dedented). ``prog.py`` defines ``main(device)``.
    files: dict[str, str]
    #: Which ``pinhelp.py`` to write (a key of HELPERS), or "" for none.
    helper: str = "device"
    #: ``pin-memory-helper`` in ``[tool.pinlint]``; "" for none.
    config: str = DEFAULT_CONFIG
    #: More lines under ``[tool.pinlint]``.
    extra_config: str = ""
    #: Link path -> target, both relative to the project.
    symlinks: dict[str, str] = field(default_factory=dict)
    #: What pinlint is run on, relative to the project.
    lint_paths: tuple[str, ...] = (".",)
    note: str = ""

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.expect in (SAFE, NOT_SAFE), self.expect

    def materialize(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
        if self.helper:
            (root / "pinhelp.py").write_text(HELPERS[self.helper])
        if "pyproject.toml" not in self.files:
            lines = ["[tool.pinlint]"]
            if self.config:
                lines.append(f'pin-memory-helper = "{self.config}"')
            if self.extra_config:
                lines.append(self.extra_config)
            (root / "pyproject.toml").write_text("\n".join(lines) + "\n")
        for link, target in self.symlinks.items():
            os.symlink(target, root / link)
