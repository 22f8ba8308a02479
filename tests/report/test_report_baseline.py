"""Baseline fingerprints, files and filtering."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest

from pinlint.baseline import (
    BaselineError,
    assign_fingerprints,
    filter_new,
    fingerprint,
    load_baseline,
    normalize_snippet,
    relative_posix_path,
    write_baseline,
)
from pinlint.core.diagnostics import Diagnostic, Edit, Fix, Location


def make(
    tmp_root: Path,
    row: int,
    snippet: str = "y = x.to('cuda', non_blocking=True)",
    code: str = "PIN001",
    name: str = "train.py",
    column: int = 5,
) -> Diagnostic:
    return Diagnostic(
        code=code,
        name="unpinned-non-blocking-copy",
        message="`non_blocking=True` copy from `x`, which is not known to be pinned",
        filename=str(tmp_root / name),
        location=Location(row, column),
        end_location=Location(row, column + 30),
        noqa_row=row,
        url="https://example.org/rules/PIN001",
        fix=Fix(
            "unsafe",
            "Pin `x`",
            (Edit(".pin_memory()", Location(row, 6), Location(row, 6)),),
        ),
        source_snippet=snippet,
    )


def test_moved_five_lines_down_keeps_its_fingerprint(tmp_path):
    before = make(tmp_path, 10)
    after = make(tmp_path, 15)
    assert fingerprint(before, tmp_path) == fingerprint(after, tmp_path)
    assert assign_fingerprints([before], tmp_path) == assign_fingerprints([after], tmp_path)


def test_reindented_or_reflowed_code_keeps_its_fingerprint(tmp_path):
    one_line = make(tmp_path, 10, "y = x.to('cuda', non_blocking=True)")
    reflowed = make(tmp_path, 10, "    y = x.to('cuda',\n             non_blocking=True)")
    assert normalize_snippet(reflowed.source_snippet) == "y = x.to('cuda', non_blocking=True)"
    assert fingerprint(one_line, tmp_path) == fingerprint(reflowed, tmp_path)


def test_two_identical_findings_in_one_file_differ(tmp_path):
    first, second = make(tmp_path, 10), make(tmp_path, 20)
    fps = assign_fingerprints([first, second], tmp_path)
    assert fps[0] != fps[1]
    # Numbered in source order, not input order.
    assert assign_fingerprints([second, first], tmp_path) == [fps[1], fps[0]]


def test_fingerprint_depends_on_code_path_and_snippet(tmp_path):
    base = fingerprint(make(tmp_path, 10), tmp_path)
    assert fingerprint(make(tmp_path, 10, code="PIN002"), tmp_path) != base
    assert fingerprint(make(tmp_path, 10, name="eval.py"), tmp_path) != base
    assert fingerprint(make(tmp_path, 10, snippet="z = w.cuda(non_blocking=True)"), tmp_path) != base


def test_fingerprint_uses_the_relative_path(tmp_path):
    # The same checkout in two places (a developer's and CI's) fingerprints alike.
    a, b = tmp_path / "a", tmp_path / "b"
    assert fingerprint(make(a, 10), a) == fingerprint(make(b, 10), b)
    assert relative_posix_path(str(a / "pkg" / "m.py"), a) == "pkg/m.py"
    assert relative_posix_path("/elsewhere/m.py", a) == "/elsewhere/m.py"


def test_write_then_load_round_trip(tmp_path):
    diags = [
        make(tmp_path, 20),
        make(tmp_path, 10),
        make(tmp_path, 5, code="PIN003", name="a.py"),
    ]
    path = tmp_path / "pinlint-baseline.json"
    write_baseline(diags, path, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1 and data["tool"] == "pinlint"
    assert [f["path"] for f in data["findings"]] == ["a.py", "train.py", "train.py"]
    for finding in data["findings"]:
        assert list(finding) == ["fingerprint", "code", "path", "snippet"]
    assert "row" not in path.read_text(encoding="utf-8")
    assert load_baseline(path) == set(assign_fingerprints(diags, tmp_path))
    # Stable output: writing the same findings in another order gives the same bytes.
    first = path.read_bytes()
    write_baseline(list(reversed(diags)), path, tmp_path)
    assert path.read_bytes() == first
    assert [p.name for p in tmp_path.iterdir()] == ["pinlint-baseline.json"]  # no temp file left


def test_write_baseline_keeps_a_readable_mode(tmp_path):
    path = tmp_path / "baseline.json"
    write_baseline([make(tmp_path, 1)], path, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o664)
    write_baseline([make(tmp_path, 1)], path, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o664


def test_filter_new_suppresses_known_and_reports_new(tmp_path):
    old = [
        make(tmp_path, 10),
        make(tmp_path, 30, snippet="a = b.cuda(non_blocking=True)"),
    ]
    path = tmp_path / "baseline.json"
    write_baseline(old, path, tmp_path)
    known = load_baseline(path)

    # Later: everything moved down 5 lines, the second finding was fixed, and a new copy of
    # the first statement appeared below it.
    now = [make(tmp_path, 15), make(tmp_path, 40)]
    new = filter_new(now, known, tmp_path)
    assert [d.location.row for d in new] == [40]
    assert filter_new([make(tmp_path, 15)], known, tmp_path) == []


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"version": 1, "tool": "other", "findings": []}',
        '{"version": 2, "tool": "pinlint", "findings": []}',
        '{"version": 1, "tool": "pinlint", "findings": {}}',
        '{"version": 1, "tool": "pinlint", "findings": [{"code": "PIN001"}]}',
        '{"version": 1, "tool": "pinlint", "findings": [{"fingerprint": 3}]}',
    ],
)
def test_corrupt_baseline_raises(tmp_path, content):
    path = tmp_path / "baseline.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        load_baseline(path)
    assert str(path) in str(excinfo.value)


def test_missing_baseline_raises(tmp_path):
    with pytest.raises(BaselineError, match="not found"):
        load_baseline(tmp_path / "nope.json")


def test_undecodable_baseline_raises(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BaselineError):
        load_baseline(path)


def test_empty_snippet_falls_back_to_message(tmp_path):
    a = dataclasses.replace(make(tmp_path, 1), source_snippet="")
    b = dataclasses.replace(make(tmp_path, 1), source_snippet="", message="another message")
    assert fingerprint(a, tmp_path) != fingerprint(b, tmp_path)
