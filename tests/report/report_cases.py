"""Hand-built findings shared by the output-format tests.

They cover: a finding spanning rows 10-13 whose fix has two edits (an insertion and a
deletion), a finding without a fix (with a ``fix_note``), and a file whose path holds a
space, a comma, a colon and a percent sign, to exercise every format's escaping.
"""

from __future__ import annotations

from pathlib import Path

from pinlint.catalog import RuleDoc
from pinlint.core.diagnostics import Diagnostic, Edit, Fix, Location
from pinlint.report import ReportContext

ROOT = Path("/home/user/proj")
CTX = ReportContext(root=ROOT, version="0.1.0", selected_codes=("PIN001", "PIN002", "PIN003"))

TRAIN = "/home/user/proj/src/train.py"
WEIRD = "/home/user/proj/data, v2: 100%/load er.py"

MULTILINE = Diagnostic(
    code="PIN001",
    name="unpinned-non-blocking-copy",
    message="`non_blocking=True` copy from `batch`, which is not known to be pinned",
    filename=TRAIN,
    location=Location(10, 13),
    end_location=Location(13, 10),
    noqa_row=13,
    url="https://example.org/rules/PIN001",
    fix=Fix(
        applicability="unsafe",
        message="Pin `batch` before the non-blocking copy",
        edits=(
            Edit(".pin_memory()", Location(10, 18), Location(10, 18)),
            Edit("", Location(12, 30), Location(12, 31)),
        ),
    ),
    statement_rows=(10, 13),
    source_snippet="        x = batch.to(\n            device,\n            non_blocking=True,\n        )",
)

NO_FIX = Diagnostic(
    code="PIN003",
    name="blocking-device-construction",
    message='`torch.tensor(..., device="cuda")` copies synchronously',
    filename=TRAIN,
    location=Location(20, 9),
    end_location=Location(20, 42),
    noqa_row=20,
    url="https://example.org/rules/PIN003",
    fix=None,
    fix_note="Build the tensor on the host, pin it, then copy it",
    statement_rows=(20, 20),
    source_snippet='    y = torch.tensor(data, device="cuda")',
)

ESCAPES = Diagnostic(
    code="PIN002",
    name="unpinnable-non-blocking-source",
    message="Copy from a NumPy array: 100% pageable, so `non_blocking=True` is a no-op",
    filename=WEIRD,
    location=Location(3, 5),
    end_location=Location(3, 30),
    noqa_row=3,
    url="https://example.org/rules/PIN002",
    fix=Fix(
        applicability="safe",
        message="Remove `non_blocking=True`",
        edits=(Edit("", Location(3, 12), Location(3, 29)),),
    ),
    statement_rows=(3, 3),
    source_snippet="x = t.cuda(non_blocking=True)",
)

#: Deliberately out of order: every format sorts by filename, row, column.
DIAGNOSTICS = [NO_FIX, MULTILINE, ESCAPES]


def make_rule(code: str, name: str, summary: str) -> RuleDoc:
    """A small catalog entry, so the SARIF snapshot does not depend on ``pinlint/rules/``."""
    return RuleDoc(
        code=code,
        name=name,
        summary=summary,
        default_enabled=True,
        fix_availability="sometimes",
        what_it_does="Flags it.",
        why_bad="It blocks.",
        fix_safety="Unsafe.",
        options="",
        bad_examples=(),
        good_examples=(),
    )


RULES = (
    make_rule("PIN001", "unpinned-non-blocking-copy", "Unpinned non-blocking copy."),
    make_rule("PIN002", "unpinnable-non-blocking-source", "Unpinnable non-blocking source."),
    make_rule("PIN003", "blocking-device-construction", "Blocking device construction."),
)
