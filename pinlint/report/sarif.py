"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Choices that differ from ruff's SARIF, and why:

* Artifact URIs are relative to the project root (``uriBaseId: "%SRCROOT%"``, with the root's
  ``file://`` URI in ``run.originalUriBaseIds``), POSIX and percent-encoded. GitHub resolves
  relative URIs against the checkout, which avoids its "URI scheme did not match" rejections
  of absolute paths; a file outside the root keeps an absolute ``file://`` URI.
* ``partialFingerprints`` carries pinlint's own line-free fingerprint (the one baselines use)
  under ``pinlintFindingHash/v1``. It is deliberately *not* called ``primaryLocationLineHash``:
  that name belongs to GitHub's algorithm, which ``upload-sarif`` computes itself when it is
  absent.
* ``run.columnKind`` is ``unicodeCodePoints``: pinlint counts columns in characters, and
  SARIF's default would read them as UTF-16 code units.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pinlint.baseline import assign_fingerprints
from pinlint.catalog import RuleDoc, get_rule
from pinlint.core.diagnostics import Diagnostic, Edit, Fix, Location, ProfileCount
from pinlint.core.paths import relative_posix_path
from pinlint.report import ReportContext
from pinlint.report.json_format import profile_to_dict, sorted_diagnostics
from pinlint.safeio import json_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/pinlint/torch-pinlint"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "pinlintFindingHash/v1"
LEVEL = "error"


def _plain_text(markdown: str) -> str:
    """The rule's Markdown as plain text: fences dropped, heading marks removed."""
    lines = []
    for line in markdown.splitlines():
        if line.startswith("```"):
            continue
        lines.append(re.sub(r"^#+\s+", "", line))
    return "\n".join(lines).strip() + "\n"


def _rule_descriptor(code: str, rule: RuleDoc | None, sample: Diagnostic | None) -> dict[str, Any]:
    if rule is None:
        # A code without a catalog entry (should not happen in a release) still needs a
        # descriptor, because GitHub requires every result's ruleId to name one; it is
        # built from the finding itself, never from empty strings, which GitHub rejects.
        name = sample.name if sample is not None else code
        text = f"{code} ({name})"
        descriptor: dict[str, Any] = {
            "id": code,
            "name": name,
            "shortDescription": {"text": text},
            "fullDescription": {"text": text},
            "help": {"text": text, "markdown": text},
        }
        if sample is not None and sample.url:
            descriptor["helpUri"] = sample.url
    else:
        markdown = rule.to_markdown()
        descriptor = {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": _plain_text(markdown), "markdown": markdown},
            "help": {"text": _plain_text(markdown), "markdown": markdown},
            "helpUri": rule.url,
        }
    descriptor["defaultConfiguration"] = {"level": LEVEL}
    descriptor["properties"] = {"tags": ["pytorch", "performance"]}
    return descriptor


def _artifact_location(filename: str, ctx: ReportContext) -> dict[str, str]:
    rel = relative_posix_path(filename, ctx.root)
    if rel.startswith("/") or re.match(r"^[A-Za-z]:/", rel):
        return {"uri": Path(filename).absolute().as_uri()}
    # quote() leaves only unreserved characters and "/" alone: a ":" in the first segment
    # would otherwise turn the relative reference into a URI with a scheme.
    # fsencode: a non-UTF-8 name (surrogate escapes) is percent-encoded byte for byte.
    return {"uri": quote(os.fsencode(rel), safe="/"), "uriBaseId": SRCROOT}


def _region(start: Location, end: Location) -> dict[str, int]:
    return {
        "startLine": start.row,
        "startColumn": start.column,
        "endLine": end.row,
        "endColumn": end.column,
    }


def _replacement(edit: Edit) -> dict[str, Any]:
    replacement: dict[str, Any] = {"deletedRegion": _region(edit.location, edit.end_location)}
    # SARIF reads a replacement without insertedContent as a pure deletion.
    if edit.content:
        replacement["insertedContent"] = {"text": edit.content}
    return replacement


def _fix(fix: Fix, artifact: dict[str, str]) -> dict[str, Any]:
    return {
        "description": {"text": fix.explained_message},
        "artifactChanges": [
            {
                "artifactLocation": dict(artifact),
                "replacements": [_replacement(e) for e in fix.edits],
            }
        ],
        # SARIF has no notion of fix safety; keep ruff's applicability for tools that care.
        "properties": {"applicability": fix.applicability},
    }


def _add_profile(result: dict[str, Any], count: ProfileCount, hottest: int) -> None:
    """``check --profile``: the counts in ``properties.profile``, and SARIF's ``rank`` (0-100,
    higher is more important) on a log scale of the run count against the run's hottest site,
    so a site that ran 40,960 times outranks one that ran 64 times, and a site that never ran
    is 0. A rule the profile cannot measure gets no rank (SARIF's default, -1)."""
    result["properties"] = {"profile": profile_to_dict(count)}
    if count.measured:
        rank = 100.0 * math.log1p(count.count) / math.log1p(hottest) if hottest else 0.0
        result["rank"] = round(rank, 1)


def _root_uri(root: Path) -> str:
    uri = Path(root).absolute().as_uri()
    # A uriBaseId's base URI must end with "/" for relative references to resolve under it.
    return uri if uri.endswith("/") else uri + "/"


def _rule_codes(ctx: ReportContext, diagnostics: Iterable[Diagnostic]) -> list[str]:
    codes = set(ctx.selected_codes) | {d.code for d in diagnostics}
    return sorted(codes)


def build(
    diagnostics: Sequence[Diagnostic],
    ctx: ReportContext,
    *,
    rules: Sequence[RuleDoc] | None = None,
) -> dict[str, Any]:
    """The SARIF log as a dict. ``rules`` overrides the catalog (tests pass their own)."""
    ordered = sorted_diagnostics(diagnostics)
    by_code = {r.code: r for r in rules} if rules is not None else None
    samples: dict[str, Diagnostic] = {}
    for diag in ordered:
        samples.setdefault(diag.code, diag)

    codes = _rule_codes(ctx, ordered)
    descriptors = []
    for code in codes:
        rule = by_code.get(code) if by_code is not None else get_rule(code)
        descriptors.append(_rule_descriptor(code, rule, samples.get(code)))
    rule_index = {code: i for i, code in enumerate(codes)}

    fingerprints = assign_fingerprints(ordered, ctx.root)
    hottest = max((d.profile.count for d in ordered if d.profile is not None), default=0)
    results = []
    for diag, fp in zip(ordered, fingerprints):
        artifact = _artifact_location(diag.filename, ctx)
        result: dict[str, Any] = {
            "ruleId": diag.code,
            "ruleIndex": rule_index[diag.code],
            "level": LEVEL,
            "message": {"text": diag.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": _region(diag.location, diag.end_location),
                    }
                }
            ],
            "partialFingerprints": {FINGERPRINT_KEY: fp},
        }
        if diag.related:
            result["relatedLocations"] = [
                {
                    "id": i,
                    "physicalLocation": {
                        "artifactLocation": _artifact_location(r.path, ctx) if r.path is not None else artifact,
                        "region": _region(r.location, r.end_location),
                    },
                    "message": {"text": r.message},
                }
                for i, r in enumerate(diag.related)
            ]
            if len(diag.related) > 1 or any(r.path is not None for r in diag.related):
                result["codeFlows"] = [_code_flow(diag, artifact, ctx)]
        if diag.fix is not None and diag.fix.edits:
            result["fixes"] = [_fix(diag.fix, artifact)]
        if diag.profile is not None:
            _add_profile(result, diag.profile, hottest)
        results.append(result)

    driver: dict[str, Any] = {"name": "pinlint"}
    if ctx.version:  # GitHub rejects empty strings where it expects a value
        driver["version"] = ctx.version
    driver["informationUri"] = INFORMATION_URI
    driver["rules"] = descriptors
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(ctx.root)}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _code_flow(diag: Diagnostic, artifact: dict[str, Any], ctx: ReportContext) -> dict[str, Any]:
    """The tensor's way when it crosses functions or files: built, handed over, copied."""
    steps = [(artifact, diag.location, diag.end_location, "the pageable tensor is built here")]
    handed = [r for r in diag.related if r.message != "the non_blocking copy"]
    copies = [r for r in diag.related if r.message == "the non_blocking copy"]
    for r in [*handed, *copies]:
        where = _artifact_location(r.path, ctx) if r.path is not None else artifact
        steps.append((where, r.location, r.end_location, r.message))
    return {
        "threadFlows": [
            {
                "locations": [
                    {
                        "location": {
                            "physicalLocation": {"artifactLocation": where, "region": _region(start, end)},
                            "message": {"text": message},
                        }
                    }
                    for where, start, end, message in steps
                ]
            }
        ]
    }


def render(
    diagnostics: Sequence[Diagnostic],
    ctx: ReportContext,
    *,
    rules: Sequence[RuleDoc] | None = None,
) -> str:
    return json_text(json.dumps(build(diagnostics, ctx, rules=rules), indent=2, ensure_ascii=False)) + "\n"
