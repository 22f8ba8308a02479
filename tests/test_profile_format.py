"""The profile file format (pinlint/profile.py) and ``pinlint check --profile``, without torch.

A profile is read from the user's folder: every malformed one must be a one-line error (exit 2),
never a traceback, and never evaluated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pinlint import profile as fmt
from pinlint import profile_findings as findings
from pinlint.cli import main
from pinlint.core.diagnostics import Diagnostic, Location, ProfileCount
from pinlint.report import ReportContext, sarif

HOT = """\
import torch


def step(lens, device):
    ids = torch.tensor(lens)
    return ids.to(device, non_blocking=True)


def init(device):
    table = torch.zeros(4)
    return table.to(device, non_blocking=True)
"""


def entry(
    file: str = "hot.py",
    row: int = 5,
    column: int = 11,
    kind: str = fmt.HOST_CONSTRUCTION,
    count: int = 7,
    nbytes: int = 56,
) -> fmt.SiteEntry:
    return fmt.SiteEntry(file, row, column, row, column + 17, kind, "torch.tensor", "step", count, nbytes)


def profile_of(*entries: fmt.SiteEntry, runs: int = 1) -> fmt.Profile:
    p = fmt.Profile(runs=runs)
    for e in entries:
        p.add(e)
    return p


def valid_dict() -> dict[str, object]:
    return profile_of(entry()).to_dict()


# -- the format ----------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path: Path) -> None:
    p = profile_of(entry(), entry(row=10, column=13, count=1, nbytes=16), runs=3)
    fmt.save(p, tmp_path / "p.json")
    back = fmt.load(tmp_path / "p.json")
    assert back.runs == 3 and back.entries() == p.entries()
    assert json.loads((tmp_path / "p.json").read_text())["format"] == "pinlint-profile"
    assert not list(tmp_path.glob(".p.json.*"))  # the temporary file of the atomic write is gone


def test_merge_adds_runs_and_counts_per_site(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    fmt.merge_into(path, profile_of(entry(count=2, nbytes=16)))
    merged = fmt.merge_into(path, profile_of(entry(count=3, nbytes=24), entry(row=10, count=1)))
    assert merged.runs == 2
    by_row = {e.row: (e.count, e.bytes) for e in fmt.load(path).entries()}
    assert by_row == {5: (5, 40), 10: (1, 56)}


def test_merge_of_the_same_site_with_other_kinds_keeps_them_apart() -> None:
    p = profile_of(entry(kind=fmt.HOST_CONSTRUCTION), entry(kind=fmt.NON_BLOCKING_COPY, count=1))
    assert len(p.entries()) == 2
    index = findings.ProfileIndex(p)
    assert index.lookup("PIN001", "hot.py", 5, 11) == (fmt.HOST_CONSTRUCTION, 7, 56)
    assert index.lookup("PIN005", "hot.py", 5, 11) == (fmt.NON_BLOCKING_COPY, 1, 56)
    assert index.lookup("PIN001", "hot.py", 5, 12) is None


def _mutate(change: object) -> bytes:
    data = valid_dict()
    change(data)  # type: ignore[operator]
    return json.dumps(data).encode()


def _site(**values: object) -> object:
    def change(data: dict[str, object]) -> None:
        data["sites"][0].update(values)  # type: ignore[index]

    return change


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"not json", "invalid JSON at line 1, column 1"),
        (json.dumps(valid_dict())[:-20].encode(), "looks truncated"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[]", "expected a JSON object, got a list"),
        (b'{"format": "other"}', "`format` must be 'pinlint-profile'"),
        (
            _mutate(lambda d: d.update(version=2)),
            "unsupported profile version 2 (written by a newer pinlint)",
        ),
        (_mutate(lambda d: d.update(version="1")), "`version` must be an integer"),
        (_mutate(lambda d: d.pop("runs")), "missing key(s) `runs`"),
        (_mutate(lambda d: d.update(extra=1)), "unknown key(s) `extra`"),
        (_mutate(lambda d: d.update(sites={})), "`sites` must be a list"),
        (_mutate(lambda d: d.update(runs=-1)), "`runs` must be an integer from 0"),
        (_mutate(lambda d: d.update(runs=True)), "`runs` must be an integer"),
        (_mutate(lambda d: d.update(runs=1.5)), "`runs` must be an integer"),
        (_mutate(lambda d: d.update(runs=2**64)), "`runs` must be an integer"),
        (_mutate(lambda d: d.update(sites=[1])), "sites[0] must be an object"),
        (_mutate(_site(row=0)), "sites[0].row must be an integer from 1"),
        (_mutate(_site(count="7")), "sites[0].count must be an integer"),
        (_mutate(_site(kind="exec")), "sites[0].kind must be one of"),
        (_mutate(_site(file="")), "sites[0].file must not be empty"),
        (_mutate(_site(file=["a"])), "sites[0].file must be a string"),
        (_mutate(_site(function="x" * 5000)), "at most 4096 characters"),
        (_mutate(_site(surprise=1)), "sites[0]: unknown key(s) `surprise`"),
        (
            b'{"format": "pinlint-profile", "version": 1, "runs": NaN, "sites": []}',
            "NaN is not a valid JSON number",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "invalid JSON"),
    ],
)
def test_bad_profiles_are_clear_errors(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(data)
    with pytest.raises(fmt.ProfileError) as info:
        fmt.load(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_a_huge_profile_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    with open(path, "wb") as handle:  # sparse: no 64 MiB written
        handle.truncate(fmt.MAX_BYTES + 1)
    with pytest.raises(fmt.ProfileError, match="too large for a profile"):
        fmt.load(path)


def test_too_many_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "MAX_SITES", 2)
    data = profile_of(entry(row=1), entry(row=2), entry(row=3)).to_dict()
    with pytest.raises(fmt.ProfileError, match="too many sites"):
        fmt.from_json(data)


def test_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(fmt.ProfileError, match="no such profile file"):
        fmt.load(tmp_path / "missing.json")
    with pytest.raises(fmt.ProfileError):
        fmt.load(tmp_path)  # a directory


def test_describe() -> None:
    assert findings.describe(40_960, 3_100_000) == "ran 40,960 times, 3.1 MB"
    assert findings.describe(1, 999) == "ran once, 999 B"


# -- pinlint check --profile ------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    (tmp_path / "hot.py").write_text(HOT)
    monkeypatch.chdir(tmp_path)
    fmt.save(profile_of(entry(count=40_960, nbytes=3_100_000)), tmp_path / "p.json")
    return tmp_path


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", *args], catch_exceptions=False)


def test_check_ranks_and_annotates(project: Path) -> None:
    result = check("--profile", "p.json", "--output-format", "concise", "hot.py")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("hot.py:5:11: PIN001") and lines[0].endswith("(ran 40,960 times, 3.1 MB)")
    assert lines[1].startswith("hot.py:10:13: PIN001") and lines[1].endswith("(did not run)")
    hot = check("--profile", "p.json", "--hot-only", "--output-format", "json", "hot.py")
    data = json.loads(hot.stdout)
    assert [(d["location"]["row"], d["profile"]) for d in data] == [
        (5, {"count": 40_960, "bytes": 3_100_000, "kind": "host-construction", "measured": True})
    ]
    assert "1 finding not shown (its site ran less than once" not in hot.stderr
    assert "1 finding not shown" in hot.stderr


def test_every_text_format_shows_the_count(project: Path) -> None:
    import xml.etree.ElementTree as ET

    github = check("--profile", "p.json", "--output-format", "github", "hot.py").stdout.splitlines()
    assert github[0].startswith("::error ") and "PIN001" in github[0]
    assert "(ran 40,960 times, 3.1 MB)" in github[0] and "(did not run)" in github[1]
    gitlab = json.loads(check("--profile", "p.json", "--output-format", "gitlab", "hot.py").stdout)
    assert sorted(d["description"].rsplit("(", 1)[1] for d in gitlab) == ["did not run)", "ran 40,960 times, 3.1 MB)"]
    junit = ET.fromstring(check("--profile", "p.json", "--output-format", "junit", "hot.py").stdout)
    failures = sorted(f.get("message", "").rsplit("(", 1)[1] for f in junit.iter("failure"))
    assert failures == ["did not run)", "ran 40,960 times, 3.1 MB)"]
    # Without a profile the messages carry no count.
    plain = check("--output-format", "github", "hot.py").stdout
    assert "ran " not in plain and "did not run" not in plain


def test_json_is_unchanged_without_a_profile(project: Path) -> None:
    data = json.loads(check("--output-format", "json", "hot.py").stdout)
    assert all("profile" not in d for d in data)


@pytest.mark.parametrize(
    "content", [b"{", b"[]", b'{"format": "pinlint-profile", "version": 9, "runs": 0, "sites": []}']
)
def test_check_with_a_bad_profile_exits_2_without_a_traceback(project: Path, content: bytes) -> None:
    (project / "bad.json").write_bytes(content)
    result = check("--profile", "bad.json", "hot.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("pinlint: error: bad.json: ")
    assert "Traceback" not in result.output


def test_hot_only_needs_a_profile(project: Path) -> None:
    for args in (["--hot-only"], ["--min-runs", "3"]):
        result = check(*args, "hot.py")
        assert result.exit_code == 2
        assert "need a runtime profile" in result.stderr


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("min-runs = true", "`min-runs` must be an integer of at least 1"),
        ("min-runs = 0", "at least 1"),
        ('min-runs = "3"', "must be an integer"),
        ("hot-only = 1", "true or false"),
    ],
)
def test_config_keys_are_validated(project: Path, toml: str, message: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.pinlint]\n{toml}\n")
    result = check("--profile", "p.json", "hot.py")
    assert result.exit_code == 2 and message in result.stderr


def test_sarif_rank_and_properties() -> None:
    def diag(row: int, code: str, count: ProfileCount | None) -> Diagnostic:
        return Diagnostic(code, "n", "m", "/p/hot.py", Location(row, 1), Location(row, 5), row, "u", profile=count)

    diagnostics = [
        diag(1, "PIN001", ProfileCount(40_960, 10, fmt.HOST_CONSTRUCTION)),
        diag(2, "PIN001", ProfileCount(64, 10, fmt.HOST_CONSTRUCTION)),
        diag(3, "PIN001", ProfileCount(0)),
        diag(4, "PIN004", ProfileCount(0, measured=False)),
        diag(5, "PIN001", None),
    ]
    results = sarif.build(diagnostics, ReportContext(root=Path("/p"), version="0"))["runs"][0]["results"]
    ranks = [r.get("rank") for r in results]
    assert ranks[0] == 100.0 and 0 < ranks[1] < 50 and ranks[2] == 0.0
    assert ranks[3] is None and ranks[4] is None
    assert results[0]["properties"]["profile"]["count"] == 40_960
    assert "properties" not in results[4]


def test_annotate_keeps_rules_the_profile_cannot_measure() -> None:
    index = findings.ProfileIndex(profile_of(entry()))
    d = Diagnostic("PIN004", "n", "m", "/p/hot.py", Location(5, 11), Location(5, 12), 5, "u")
    kept, dropped = findings.annotate([d], index, "/p", min_runs=10)
    assert dropped == 0 and kept[0].profile == ProfileCount(0, measured=False)
    assert d.profile is None  # the input is not mutated
