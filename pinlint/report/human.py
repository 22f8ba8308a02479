"""Human output: ``full`` (source excerpt with the flagged span and the fix as a diff) and
``concise`` (one line per finding), plus the summary lines ruff users know.

``full`` is rendered with rich (colour on a terminal, plain text when piped); ``concise`` and the
summary are plain text so that they stay cheap and grep-able.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pinlint.core.diagnostics import Applicability, Diagnostic
from pinlint.core.paths import display_path
from pinlint.core.text import split_lines
from pinlint.fix.apply import apply_edits
from pinlint.report import profile_suffix
from pinlint.safeio import printable


def _marker(diagnostic: Diagnostic, unsafe_fixes: bool) -> str:
    return " [*]" if diagnostic.fix_applies(unsafe_fixes) else ""


def render_concise(diagnostics: Sequence[Diagnostic], root: Path, unsafe_fixes: bool = False) -> str:
    lines = []
    for d in diagnostics:
        # File names and messages come from the repository: no terminal escapes (safeio).
        lines.append(
            printable(
                f"{display_path(d.filename, root)}:{d.location.row}:{d.location.column}: {d.code}{_marker(d, unsafe_fixes)} {d.message}{profile_suffix(d)}"
            )
        )
    return "\n".join(lines) + ("\n" if lines else "")


def _read_lines(filename: str, cache: dict[str, list[str]], sources: dict[str, str] | None) -> list[str]:
    if filename not in cache:
        text = (sources or {}).get(filename)
        if text is None:
            from pinlint import source

            try:
                from pinlint.safeio import MAX_SOURCE_BYTES, read_regular

                text = source.decode(read_regular(filename, MAX_SOURCE_BYTES)).text
            except Exception:  # noqa: BLE001 - the excerpt is a nicety; never fail the report on it
                text = ""
        cache[filename] = split_lines(text)
    return cache[filename]


Styled = list[tuple[str, str]]  # (text, rich style) pieces of one output line


def render_full(
    diagnostics: Sequence[Diagnostic],
    root: Path,
    *,
    color: bool,
    unsafe_fixes: bool = False,
    sources: dict[str, str] | None = None,
    width: int | None = None,
) -> str:
    """The default format: a header, the source excerpt with the flagged span, the fix as a
    diff. Coloured through rich on a terminal; plain text (and no rich import) otherwise."""
    if not diagnostics:
        return ""
    lines: list[Styled] = []
    cache: dict[str, list[str]] = {}
    for d in diagnostics:
        block = _full_block(d, _read_lines(d.filename, cache, sources), root, unsafe_fixes)
        # Every piece (file name, source excerpt, fix title, diff) may carry raw control
        # characters from the repository: escape them, in plain and in colour output alike.
        lines.extend([[(printable(text), style) for text, style in line] for line in block])
    if not color:
        return "".join("".join(text for text, _style in line) + "\n" for line in lines)
    from rich.console import Console
    from rich.text import Text

    # no_color=False: the caller decided (--color, NO_COLOR, FORCE_COLOR); rich must not re-decide.
    console = Console(force_terminal=True, no_color=False, width=width or 200, highlight=False, soft_wrap=True)
    with console.capture() as capture:
        for line in lines:
            text = Text()
            for piece, style in line:
                text.append(piece, style=style or None)
            console.print(text)
    return capture.get()


def _full_block(d: Diagnostic, lines: list[str], root: Path, unsafe_fixes: bool) -> list[Styled]:
    out: list[Styled] = [
        [(d.code, "bold red"), (_marker(d, unsafe_fixes), "bold cyan"), (" " + d.message, "bold")],
        [(f" --> {display_path(d.filename, root)}:{d.location.row}:{d.location.column}", "blue")],
    ]
    if d.profile is not None:
        from pinlint.profile_findings import finding_note

        out.append([(f"  = profile: {finding_note(d.profile)}", "bold magenta" if d.profile.count else "")])
    first = max(1, d.location.row - 1)
    last = min(len(lines), d.end_location.row + 1)
    gutter = len(str(last))
    out.append([(" " * gutter + " |", "blue")])
    for row in range(first, last + 1):
        raw = lines[row - 1].rstrip("\r\n") if row - 1 < len(lines) else ""
        out.append([(f"{row:>{gutter}} | ", "blue"), (raw.expandtabs(4), "")])
        if d.location.row <= row <= d.end_location.row:
            start = d.location.column if row == d.location.row else len(raw) - len(raw.lstrip()) + 1
            end = d.end_location.column if row == d.end_location.row else len(raw) + 1
            if end > start:
                # Columns count characters; tabs are shown as 4 spaces, so measure the prefix.
                visual_start = len(raw[: start - 1].expandtabs(4))
                visual_end = len(raw[: end - 1].expandtabs(4))
                carets: Styled = [
                    (" " * gutter + " | ", "blue"),
                    (" " * visual_start + "^" * (visual_end - visual_start), "bold red"),
                ]
                if row == d.end_location.row:
                    carets.append((f" {d.code}", "bold red"))
                out.append(carets)
    out.append([(" " * gutter + " |", "blue")])
    for related in d.related:
        out.append(
            [
                (
                    f"note: {related.message} is at {display_path(related.path or d.filename, root)}:{related.location.row}:{related.location.column}",
                    "cyan",
                )
            ]
        )
    if d.fix is not None:
        label = "help" if d.fix.applicability is Applicability.SAFE else "help (unsafe fix)"
        out.append([(f"{label}: {d.fix.message}", "bold cyan")])
        if d.fix.unsafe_reason and d.fix.applicability is not Applicability.SAFE:
            out.append([(f"note: unsafe because {d.fix.unsafe_reason}", "cyan")])
        for diff_line in _fix_diff(d, lines):
            style = "green" if diff_line.startswith("  +") else ("red" if diff_line.startswith("  -") else "")
            out.append([(diff_line, style)])
    elif d.fix_note:
        out.append([(f"help: {d.fix_note}", "bold cyan")])
    out.append([])
    return out


def _fix_diff(d: Diagnostic, lines: list[str]) -> list[str]:
    """The lines the fix changes, as `- old` / `+ new`, one hunk per group of touched rows."""
    assert d.fix is not None
    groups: list[list] = []
    for edit in sorted(d.fix.edits, key=lambda e: (e.location, e.end_location)):
        if groups and edit.location.row <= groups[-1][-1].end_location.row:
            groups[-1].append(edit)
        else:
            groups.append([edit])
    out: list[str] = []
    for group in groups:
        first = group[0].location.row
        last = max(e.end_location.row for e in group)
        insertion_at_line_start = all(e.location == e.end_location and e.location.column == 1 for e in group)
        if insertion_at_line_start:
            out += [f"  + {line.rstrip(chr(13) + chr(10))}" for e in group for line in split_lines(e.content)]
            continue
        last = min(last, len(lines))
        old = lines[first - 1 : last]
        shifted = [
            type(e)(
                e.content,
                type(e.location)(e.location.row - first + 1, e.location.column),
                type(e.end_location)(e.end_location.row - first + 1, e.end_location.column),
            )
            for e in group
        ]
        new = apply_edits("".join(old), shifted)
        out += [f"  - {line.rstrip(chr(13) + chr(10))}" for line in old]
        out += [f"  + {line.rstrip(chr(13) + chr(10))}" for line in split_lines(new)]
    return out


def summary(
    remaining: Sequence[Diagnostic],
    *,
    fixed: int,
    unsafe_fixes: bool,
    fix_mode: bool,
    diff_mode: bool = False,
) -> str:
    """ruff's closing lines: counts, and what ``--fix`` / ``--unsafe-fixes`` would do."""
    total = len(remaining) + fixed
    safe = sum(1 for d in remaining if d.fix and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in remaining if d.fix and d.fix.applicability is Applicability.UNSAFE)
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    lines = []
    if diff_mode:
        line = f"Would fix {plural(fixed, 'error')}" if fixed else "No errors would be fixed"
        if unsafe and not unsafe_fixes:
            line += f" ({unsafe} additional fix{'' if unsafe == 1 else 'es'} available with `--unsafe-fixes`)"
        return line + ".\n"
    if total == 0:
        return "All checks passed!\n"
    if fix_mode:
        lines.append(f"Found {plural(total, 'error')} ({fixed} fixed, {len(remaining)} remaining).")
        if unsafe and not unsafe_fixes:
            lines.append(f"{unsafe} more fix{'' if unsafe == 1 else 'es'} available with `--unsafe-fixes`.")
        return "\n".join(lines) + "\n"
    lines.append(f"Found {plural(total, 'error')}.")
    fixable = safe + (unsafe if unsafe_fixes else 0)
    hidden = 0 if unsafe_fixes else unsafe
    if fixable and hidden:
        lines.append(
            f"[*] {fixable} fixable with the `--fix` option ({hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the `--unsafe-fixes` option)."
        )
    elif fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    elif hidden:
        lines.append(
            f"No fixes available ({hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the `--unsafe-fixes` option)."
        )
    return "\n".join(lines) + "\n"
