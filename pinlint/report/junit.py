"""``--output-format junit``: JUnit XML shaped like ruff's.

One ``<testsuite>`` per file (named by its root-relative path), one failing ``<testcase
name="org.pinlint.CODE">`` per finding; a run without findings is a single passing test case,
so CI dashboards show a green run rather than an empty report.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from itertools import groupby
from pathlib import PurePosixPath

from pinlint.core.diagnostics import Diagnostic
from pinlint.core.paths import relative_posix_path
from pinlint.report import ReportContext, profile_suffix
from pinlint.report.json_format import sorted_diagnostics

# Characters XML 1.0 cannot hold even escaped; a control character copied from source into a
# message would otherwise make the whole report unparsable.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _classname(path: str) -> str:
    # ruff: the file's parent joined with its stem ("src/train.py" -> "src/train").
    pure = PurePosixPath(path)
    return str(pure.parent / pure.stem) if str(pure.parent) != "." else pure.stem


def _suite(name: str, tests: int, failures: int) -> ET.Element:
    return ET.Element(
        "testsuite",
        {
            "name": _clean(name),
            "tests": str(tests),
            "disabled": "0",
            "errors": "0",
            "failures": str(failures),
            "package": "org.pinlint",
        },
    )


def build(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> ET.Element:
    ordered = sorted_diagnostics(diagnostics)
    total = max(len(ordered), 1)
    root = ET.Element(
        "testsuites",
        {
            "name": "pinlint",
            "tests": str(total),
            "failures": str(len(ordered)),
            "errors": "0",
        },
    )
    if not ordered:
        suite = _suite("pinlint", 1, 0)
        ET.SubElement(suite, "testcase", {"name": "No errors found", "classname": "pinlint"})
        root.append(suite)
        return root

    def path_of(diag: Diagnostic) -> str:
        return relative_posix_path(diag.filename, ctx.root)

    for path, group in groupby(ordered, key=path_of):
        diags = list(group)
        suite = _suite(path, len(diags), len(diags))
        for diag in diags:
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "name": f"org.pinlint.{diag.code}",
                    "classname": _clean(_classname(path)),
                    "line": str(diag.location.row),
                    "column": str(diag.location.column),
                },
            )
            message = diag.message + profile_suffix(diag)
            failure = ET.SubElement(case, "failure", {"message": _clean(message)})
            text = f"line {diag.location.row}, col {diag.location.column}, {message}"
            # ruff appends the fix title after a blank line.
            help_text = diag.fix.message if diag.fix is not None else diag.fix_note
            if help_text:
                text += f"\n\n{help_text}"
            failure.text = _clean(text)
        root.append(suite)
    return root


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str:
    tree = build(diagnostics, ctx)
    ET.indent(tree, space="    ")
    body = ET.tostring(tree, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
