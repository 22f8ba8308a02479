"""Human output: ``full`` (source excerpt with the flagged span and the fix as a diff) and
``concise`` (one line per finding), plus the summary lines ruff users know.

``full`` is rendered with rich (colour on a terminal, plain text when piped); ``concise`` and the
summary are plain text so that they stay cheap and grep-able.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..diagnostics import Diagnostic
from ..fix.apply import apply_edits
from ..triage import split_lines


def display_path(filename: str, root: Path) -> str:
    """The path relative to ``root`` as the user wrote it (symbolic links are not followed: a
    dangling link is reported by its own name)."""
    path = Path(filename)
    try:
        return path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return filename


def _marker(diagnostic: Diagnostic, unsafe_fixes: bool) -> str:
    fix = diagnostic.fix
    if fix is None or fix.applicability == "display-only":
        return ""
    if fix.applicability == "safe" or unsafe_fixes:
        return " [*]"
    return ""


def render_concise(diagnostics: Sequence[Diagnostic], root: Path, unsafe_fixes: bool = False) -> str:
    lines = []
    for d in diagnostics:
        lines.append(
            f"{display_path(d.filename, root)}:{d.location.row}:{d.location.column}: {d.code}{_marker(d, unsafe_fixes)} {d.message}"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def _read_lines(filename: str, cache: dict[str, list[str]], sources: dict[str, str] | None) -> list[str]:
    if filename not in cache:
        text = (sources or {}).get(filename)
        if text is None:
            from .. import source

            try:
                text = source.decode(Path(filename).read_bytes()).text
            except Exception:  # noqa: BLE001 - the excerpt is a nicety; never fail the report on it
                text = ""
        cache[filename] = split_lines(text)
    return cache[filename]


def render_full(
    diagnostics: Sequence[Diagnostic],
    root: Path,
    *,
    color: bool,
    unsafe_fixes: bool = False,
    sources: dict[str, str] | None = None,
    width: int | None = None,
) -> str:
    """The default format, rendered to a string (with ANSI colours when ``color``)."""
    if not diagnostics:
        return ""
    from rich.console import Console
    from rich.text import Text

    console = Console(record=False, force_terminal=color, no_color=not color, width=width or 200, highlight=False, soft_wrap=True)
    cache: dict[str, list[str]] = {}
    with console.capture() as capture:
        for d in diagnostics:
            lines = _read_lines(d.filename, cache, sources)
            header = Text()
            header.append(d.code, style="bold red")
            header.append(_marker(d, unsafe_fixes), style="bold cyan")
            header.append(" " + d.message, style="bold")
            console.print(header)
            console.print(Text(f" --> {display_path(d.filename, root)}:{d.location.row}:{d.location.column}", style="blue"))
            first = max(1, d.location.row - 1)
            last = min(len(lines), d.end_location.row + 1)
            gutter = len(str(last))
            console.print(Text(" " * gutter + " |", style="blue"))
            for row in range(first, last + 1):
                text = lines[row - 1].rstrip("\r\n") if row - 1 < len(lines) else ""
                line = Text(f"{row:>{gutter}} | ", style="blue")
                line.append(text.expandtabs(4) if "\t" in text else text)
                console.print(line)
                if d.location.row <= row <= d.end_location.row:
                    start = d.location.column if row == d.location.row else len(text) - len(text.lstrip()) + 1
                    end = d.end_location.column if row == d.end_location.row else len(text) + 1
                    if end > start:
                        carets = Text(" " * gutter + " | ", style="blue")
                        carets.append(" " * (start - 1) + "^" * (end - start), style="bold red")
                        if row == d.end_location.row:
                            carets.append(f" {d.code}", style="bold red")
                        console.print(carets)
            console.print(Text(" " * gutter + " |", style="blue"))
            if d.fix is not None:
                label = "help" if d.fix.applicability == "safe" else "help (unsafe fix)"
                console.print(Text(f"{label}: {d.fix.message}", style="bold cyan"))
                for diff_line in _fix_diff(d, lines):
                    style = "green" if diff_line.startswith("+") else ("red" if diff_line.startswith("-") else "")
                    console.print(Text(diff_line, style=style))
            elif d.fix_note:
                console.print(Text(f"help: {d.fix_note}", style="bold cyan"))
            console.print()
    return capture.get()


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
            type(e)(e.content, type(e.location)(e.location.row - first + 1, e.location.column),
                    type(e.end_location)(e.end_location.row - first + 1, e.end_location.column))
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
    safe = sum(1 for d in remaining if d.fix and d.fix.applicability == "safe")
    unsafe = sum(1 for d in remaining if d.fix and d.fix.applicability == "unsafe")
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
        lines.append(f"[*] {fixable} fixable with the `--fix` option ({hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the `--unsafe-fixes` option).")
    elif fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    elif hidden:
        lines.append(f"No fixes available ({hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the `--unsafe-fixes` option).")
    return "\n".join(lines) + "\n"
