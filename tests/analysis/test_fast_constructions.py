"""The ast fast path for device constructions gives the findings the full analysis gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinlint import lint
from pinlint.core.results import AnalysisSettings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = [
    AnalysisSettings(rules=("PIN003",)),
    AnalysisSettings(rules=("PIN001", "PIN002", "PIN003")),
]

CASES = {
    "single_assignment": """
import torch

def f(forward_batch, device):
    num_tokens = forward_batch.input_ids.numel()
    return torch.tensor(num_tokens, dtype=torch.int32, device=device)
""",
    "rebound": """
import torch

def f(x, device):
    y = [1]
    if x:
        y = torch.zeros(3, device=device)
    return torch.tensor(y, device=device)
""",
    "comprehension_of_device_items": """
import torch

def f(device):
    parts = [torch.zeros(3, device="cuda"), torch.ones(3, device="cuda")]
    return [torch.tensor(p, device=device) for p in parts]
""",
    "comprehension_without_construction": """
import torch

def f(lens, device):
    parts = [len(x) for x in lens]
    sizes = {k: str(v) for k, v in zip(parts, lens)}
    return torch.tensor(parts, device=device), sizes
""",
    "device_tensor": """
import torch

def f(device):
    on_device = torch.zeros(3, device="cuda")
    return torch.tensor(on_device, device="cuda")
""",
    "nested_and_lambda": """
import torch

def outer(lens, device):
    xs = [1, 2]
    def inner():
        return torch.tensor(xs, device=device)
    g = lambda: torch.tensor(lens, device=device)
    return inner, g
""",
    "unicode_and_parens": """
import torch

def f(données, device):
    é = torch.tensor(données, device=(device))
    return é, torch.tensor("ü", device=device)
""",
    "shape_and_loop": """
import torch

def f(x, items, device):
    for item in items:
        torch.tensor(item, device=device)
    if x.is_cuda:
        pass
    return torch.tensor(x.shape[0], device=device), torch.tensor(x, device=device)
""",
}


def _findings(text: str, settings: AnalysisSettings, fast: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setattr(lint, "FAST_CONSTRUCTIONS", fast)
    result = lint.analyze_text(text, settings)
    return sorted(result.findings, key=lambda f: (f.location, f.code))


def _sources() -> list[tuple[str, str]]:
    out = list(CASES.items())
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        if "fixed" not in path.parts:
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "+".join(s.rules))
@pytest.mark.parametrize(("name", "text"), _sources(), ids=[n for n, _ in _sources()])
def test_fast_path_matches_full_analysis(name: str, text: str, settings: AnalysisSettings, monkeypatch) -> None:
    fast = _findings(text, settings, True, monkeypatch)
    slow = _findings(text, settings, False, monkeypatch)
    assert fast == slow


def test_fast_path_reports_the_widened_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    found = _findings(CASES["single_assignment"], SETTINGS[0], True, monkeypatch)
    assert [(f.code, f.location.row, f.location.column) for f in found] == [("PIN003", 6, 12)]
    plan = found[0].fix_plan
    assert plan is not None and plan.unsafe_reason  # unsafe, with its reason shown
    assert not _findings(CASES["device_tensor"], SETTINGS[0], True, monkeypatch)


def test_fast_path_does_not_import_libcst() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pinlint import lint; from pinlint.core.results import AnalysisSettings;"
        "text = 'import torch\\ndef f(xs, d):\\n    return torch.tensor(xs, device=d)\\n';"
        "r = lint.analyze_text(text, AnalysisSettings(rules=('PIN003',)));"
        "assert len(r.findings) == 1; print('libcst' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_comprehension_without_a_construction_keeps_the_fast_path() -> None:
    # Only a construction inside a comprehension over a built list needs the full analysis
    # (its items may be device tensors); other comprehensions of the function do not.
    from pinlint.analysis.fast_constructions import fast_constructions
    from pinlint.analysis.names import scan_names
    from pinlint.analysis.triage import compile_triggers, function_segments, segment_text
    from pinlint.core.text import split_lines
    from pinlint.rules.pin003_blocking_device_construction import BlockingDeviceConstruction

    triggers = compile_triggers(BlockingDeviceConstruction.triggers)
    for name, expected in (("comprehension_without_construction", 1), ("comprehension_of_device_items", None)):
        text = CASES[name]
        lines = split_lines(text)
        (segment,) = function_segments(text, triggers, lines)
        source = segment_text(lines, segment)
        assert source is not None
        found = fast_constructions(source, segment, lines, scan_names(text, lines))
        assert (None if found is None else len(found)) == expected, name
