"""Snapshot and behaviour tests for the machine-readable output formats.

The expected files in ``snapshots/`` were written by hand from the format specifications
(ruff's shapes, GitHub's workflow-command escaping, SARIF 2.1.0, GitLab code quality), not
generated from the renderers; a change to one is a change to a published format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

# The shared cases sit beside this file; put it on the path whatever pytest's import mode.
sys.path.insert(0, str(Path(__file__).parent))
from report_cases import CTX, DIAGNOSTICS, ESCAPES, MULTILINE, NO_FIX, ROOT, RULES

from pinlint.core.diagnostics import Diagnostic, Location
from pinlint.report import (
    ReportContext,
    github,
    gitlab,
    json_format,
    json_lines,
    junit,
    sarif,
)
from pinlint.report.statistics import render_statistics

SNAPSHOTS = Path(__file__).parent / "snapshots"
SARIF_SCHEMA = Path(__file__).parent.parent / "data" / "sarif-schema-2.1.0.json"


def snapshot(name: str) -> str:
    return (SNAPSHOTS / name).read_text(encoding="utf-8")


def shifted(diag: Diagnostic, lines: int) -> Diagnostic:
    """The same finding after ``lines`` lines were inserted above it."""

    def move(loc: Location) -> Location:
        return Location(loc.row + lines, loc.column)

    fix = diag.fix
    if fix is not None:
        fix = dataclasses.replace(
            fix,
            edits=tuple(
                dataclasses.replace(e, location=move(e.location), end_location=move(e.end_location)) for e in fix.edits
            ),
        )
    return dataclasses.replace(
        diag,
        location=move(diag.location),
        end_location=move(diag.end_location),
        noqa_row=diag.noqa_row + lines,
        fix=fix,
    )


# --- snapshots -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (json_format, "json.json"),
        (json_lines, "json_lines.jsonl"),
        (github, "github.txt"),
        (gitlab, "gitlab.json"),
        (junit, "junit.xml"),
    ],
)
def test_snapshot(module, name):
    assert module.render(DIAGNOSTICS, CTX) == snapshot(name)


def test_sarif_snapshot():
    assert sarif.render(DIAGNOSTICS, CTX, rules=RULES) == snapshot("sarif.json")


def test_junit_empty_run_is_one_passing_case():
    assert junit.render([], CTX) == snapshot("junit_empty.xml")


@pytest.mark.parametrize(
    ("module", "expected"),
    [(json_format, "[]\n"), (json_lines, ""), (github, ""), (gitlab, "[]\n")],
)
def test_empty_runs(module, expected):
    assert module.render([], CTX) == expected


# --- json ------------------------------------------------------------------------------------


def test_json_has_ruffs_keys_in_order_then_related():
    objects = json.loads(json_format.render(DIAGNOSTICS, CTX))
    for obj in objects:
        # ruff's keys, in ruff's order; pinlint's one addition (`related`) comes last.
        assert list(obj)[-1] == "related" and isinstance(obj["related"], list)
        assert list(obj)[:-1] == [
            "code",
            "name",
            "message",
            "filename",
            "location",
            "end_location",
            "fix",
            "noqa_row",
            "url",
        ]
        assert Path(obj["filename"]).is_absolute()
    assert [o["code"] for o in objects] == ["PIN002", "PIN001", "PIN003"]


def test_json_lines_matches_json():
    lines = json_lines.render(DIAGNOSTICS, CTX).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(json_format.render(DIAGNOSTICS, CTX))


def test_json_lines_keeps_a_newline_in_a_message_on_one_line():
    diag = dataclasses.replace(NO_FIX, message="first\nsecond")
    out = json_lines.render([diag], CTX)
    assert out.count("\n") == 1
    assert json.loads(out)["message"] == "first\nsecond"


# --- github ----------------------------------------------------------------------------------


def test_github_escaping_rules():
    assert github.escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert github.escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    # "%" is escaped first, so an escape sequence already in the text is not decoded later.
    assert github.escape_data("%0A") == "%250A"


def test_github_multiline_range_omits_columns():
    line = github.render([MULTILINE], CTX).strip()
    properties = line.split("::")[1]
    assert "line=10" in properties and "endLine=13" in properties
    assert "col=" not in properties and "endColumn=" not in properties


def test_github_message_newline_is_escaped():
    out = github.render([dataclasses.replace(NO_FIX, message="one\ntwo")], CTX)
    assert out.count("\n") == 1
    assert "one%0Atwo" in out


def test_github_path_outside_root_is_absolute():
    diag = dataclasses.replace(NO_FIX, filename="/elsewhere/x.py")
    assert ",file=/elsewhere/x.py," in github.render([diag], CTX)


def test_github_level_option():
    assert github.render([NO_FIX], CTX, level="warning").startswith("::warning title=")
    with pytest.raises(ValueError):
        github.render([NO_FIX], CTX, level="fatal")


# --- sarif -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("sarif-schema-2.1.0.json")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


# RFC 3986 URI-reference characters: unreserved, sub-delims, ":", "@", "/", "?", "#", and
# percent escapes. jsonschema checks "uri-reference" only when an optional package is
# installed, so the test checks the characters itself.
_URI_REF = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*$")


def test_sarif_validates_against_the_official_schema(sarif_validator):
    log = json.loads(sarif.render(DIAGNOSTICS, CTX, rules=RULES))
    sarif_validator.validate(log)


def test_sarif_validates_when_empty_and_from_the_catalog(sarif_validator):
    # No `rules=`: descriptors come from the catalog, or from the findings while it is empty.
    sarif_validator.validate(json.loads(sarif.render([], CTX)))
    sarif_validator.validate(json.loads(sarif.render(DIAGNOSTICS, CTX)))


def test_sarif_schema_catches_a_broken_log(sarif_validator):
    # Guards the validation tests above against a schema that accepts anything.
    log = json.loads(sarif.render(DIAGNOSTICS, CTX, rules=RULES))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        sarif_validator.validate(log)


def test_sarif_uris_are_valid_relative_references():
    log = json.loads(sarif.render(DIAGNOSTICS, CTX, rules=RULES))
    run = log["runs"][0]
    for result in run["results"]:
        loc = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert _URI_REF.match(loc["uri"]), loc["uri"]
        # No scheme: a ":" must not survive unescaped in the first segment.
        assert ":" not in loc["uri"].split("/")[0]
        assert loc["uriBaseId"] == "%SRCROOT%"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    for rule in run["tool"]["driver"]["rules"]:
        assert _URI_REF.match(rule["helpUri"])


def test_sarif_rule_index_points_at_the_rule():
    log = json.loads(sarif.render(DIAGNOSTICS, CTX, rules=RULES))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    for result in log["runs"][0]["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_lists_selected_rules_without_findings():
    ctx = dataclasses.replace(CTX, selected_codes=("PIN001", "PIN002", "PIN003"))
    log = json.loads(sarif.render([], ctx, rules=RULES))
    assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == [
        "PIN001",
        "PIN002",
        "PIN003",
    ]


def test_sarif_file_outside_root_gets_absolute_file_uri(sarif_validator):
    diag = dataclasses.replace(NO_FIX, filename="/elsewhere/a b.py")
    log = json.loads(sarif.render([diag], CTX, rules=RULES))
    sarif_validator.validate(log)
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "file:///elsewhere/a%20b.py"}


def test_sarif_fingerprints_survive_a_line_shift():
    before = json.loads(sarif.render(DIAGNOSTICS, CTX, rules=RULES))
    after = json.loads(sarif.render([shifted(d, 5) for d in DIAGNOSTICS], CTX, rules=RULES))
    fps = [r["partialFingerprints"] for r in before["runs"][0]["results"]]
    assert fps == [r["partialFingerprints"] for r in after["runs"][0]["results"]]
    regions = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after["runs"][0]["results"]]
    assert regions == [8, 15, 25]


# --- gitlab ----------------------------------------------------------------------------------


def test_gitlab_fingerprints_are_the_documented_hash():
    report = json.loads(gitlab.render([MULTILINE], CTX))
    key = "PIN001\0src/train.py\0x = batch.to( device, non_blocking=True, )\0" + "0"
    assert report[0]["fingerprint"] == hashlib.sha256(key.encode()).hexdigest()[:16]


def test_gitlab_fingerprints_stable_under_line_shift_and_unique():
    twin = dataclasses.replace(NO_FIX, location=Location(30, 9), end_location=Location(30, 42), noqa_row=30)
    diags = [*DIAGNOSTICS, twin]
    before = json.loads(gitlab.render(diags, CTX))
    after = json.loads(gitlab.render([shifted(d, 5) for d in diags], CTX))
    fps = [item["fingerprint"] for item in before]
    assert len(set(fps)) == len(fps)
    assert fps == [item["fingerprint"] for item in after]
    assert [item["location"]["positions"]["begin"]["line"] for item in after] == [
        8,
        15,
        25,
        35,
    ]


def test_gitlab_path_is_relative():
    report = json.loads(gitlab.render(DIAGNOSTICS, CTX))
    assert {item["location"]["path"] for item in report} == {
        "data, v2: 100%/load er.py",
        "src/train.py",
    }


# --- junit -----------------------------------------------------------------------------------


def test_junit_parses_back():
    tree = ET.fromstring(junit.render(DIAGNOSTICS, CTX))
    assert tree.tag == "testsuites"
    assert (tree.get("tests"), tree.get("failures")) == ("3", "3")
    suites = tree.findall("testsuite")
    assert [s.get("name") for s in suites] == [
        "data, v2: 100%/load er.py",
        "src/train.py",
    ]
    cases = tree.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == [
        "org.pinlint.PIN002",
        "org.pinlint.PIN001",
        "org.pinlint.PIN003",
    ]
    failure = cases[2].find("failure")
    assert failure is not None
    assert failure.get("message") == NO_FIX.message
    assert failure.text.startswith('line 20, col 9, `torch.tensor(..., device="cuda")`')


def test_junit_escapes_markup_and_drops_control_characters():
    diag = dataclasses.replace(NO_FIX, message='<a & "b">\x00\x1b end')
    tree = ET.fromstring(junit.render([diag], CTX))
    failure = tree.find("testsuite/testcase/failure")
    assert failure.get("message") == '<a & "b">\ufffd\ufffd end'


def test_junit_empty_parses_back():
    tree = ET.fromstring(junit.render([], CTX))
    assert (tree.get("tests"), tree.get("failures")) == ("1", "0")
    assert tree.find("testsuite/testcase/failure") is None


# --- statistics ------------------------------------------------------------------------------

STATS_INPUT = [
    *DIAGNOSTICS,
    dataclasses.replace(NO_FIX, location=Location(30, 9), end_location=Location(30, 42)),
    dataclasses.replace(NO_FIX, location=Location(40, 9), end_location=Location(40, 42)),
    dataclasses.replace(ESCAPES, location=Location(9, 5), end_location=Location(9, 30), fix=None),
]


def test_statistics_text():
    assert render_statistics(STATS_INPUT, "text") == (
        "3\tPIN003\t[ ] blocking-device-construction\n"
        # One of the two PIN002 findings has a fix: ruff's "[-]", partly fixable.
        "2\tPIN002\t[-] unpinnable-non-blocking-source\n"
        "1\tPIN001\t[ ] unpinned-non-blocking-copy\n"
    )


def test_statistics_text_unsafe_fixes_and_alignment():
    many = STATS_INPUT + [dataclasses.replace(MULTILINE, location=Location(50 + i, 1)) for i in range(10)]
    assert render_statistics(many, "text", unsafe_fixes=True) == (
        "11\tPIN001\t[*] unpinned-non-blocking-copy\n"
        " 3\tPIN003\t[ ] blocking-device-construction\n"
        " 2\tPIN002\t[-] unpinnable-non-blocking-source\n"
    )


def test_statistics_text_without_any_fix_has_no_marks():
    assert render_statistics([NO_FIX], "text") == "1\tPIN003\tblocking-device-construction\n"
    assert render_statistics([], "text") == ""


def test_statistics_json():
    assert json.loads(render_statistics(STATS_INPUT, "json", unsafe_fixes=True)) == [
        {
            "code": "PIN003",
            "name": "blocking-device-construction",
            "count": 3,
            "fixable": False,
            "fixable_count": 0,
        },
        {
            "code": "PIN002",
            "name": "unpinnable-non-blocking-source",
            "count": 2,
            "fixable": False,
            "fixable_count": 1,
        },
        {
            "code": "PIN001",
            "name": "unpinned-non-blocking-copy",
            "count": 1,
            "fixable": True,
            "fixable_count": 1,
        },
    ]
    assert render_statistics([], "json") == "[]\n"


def test_statistics_display_only_fix_is_never_fixable():
    diag = dataclasses.replace(ESCAPES, fix=dataclasses.replace(ESCAPES.fix, applicability="display-only"))
    stats = json.loads(render_statistics([diag], "json", unsafe_fixes=True))
    assert stats[0]["fixable_count"] == 0


def test_statistics_rejects_unknown_format():
    with pytest.raises(ValueError):
        render_statistics(DIAGNOSTICS, "xml")


def test_context_root_may_be_relative(monkeypatch):
    monkeypatch.chdir("/")
    ctx = ReportContext(root=Path("home/user/proj"), version="0.1.0")
    assert github.render([NO_FIX], ctx) == github.render([NO_FIX], CTX)
    assert ROOT.is_absolute()
