"""Property-based robustness tests.

1. ``analyze_text`` / the check pipeline never raise on generated Python source (hypothesmith's
   grammar- and CST-based generators, plus the same source salted with PIN triggers).
2. Generated variations of the PIN001 patterns (import aliases, call formatting, comments,
   backslash continuations, nesting, tabs/spaces, LF/CRLF/mixed line endings): ``--fix`` output
   always parses, is a fixed point, changes only the finding lines (plus one import line) and
   keeps every token of the original file.

Example counts are modest so that the default run stays fast; ``PINLINT_HYPOTHESIS_EXAMPLES``
multiplies them for a long soak (``PINLINT_HYPOTHESIS_EXAMPLES=20 pytest tests/robustness``).
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinlint import runner
from pinlint.core.results import AnalysisSettings
from pinlint.lint import analyze_text

DEFAULT_RULES = ("PIN001", "PIN002")
ALL_RULES = ("PIN001", "PIN002", "PIN003")
from pinlint.app import CheckOptions, run_check
from pinlint.config import Config
from pinlint.core.text import split_lines
from tests.robustness.support import HELPER_IMPORT, HELPER_SPEC, check_in_memory, fix_in_memory

hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is in the `test` extra")

SCALE = max(1, int(os.environ.get("PINLINT_HYPOTHESIS_EXAMPLES", "1")))
COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)

#: Counts every example hypothesis hands to a test of this module (reported at the end).
EXAMPLES: dict[str, int] = {}


def _count(name: str) -> None:
    EXAMPLES[name] = EXAMPLES.get(name, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def _report_examples():
    yield
    total = sum(EXAMPLES.values())
    print(f"\n[pinlint robustness] hypothesis examples: {total} {dict(sorted(EXAMPLES.items()))}")


# --------------------------------------------------------------------------------------------
# 1. Never raise on generated source
# --------------------------------------------------------------------------------------------

TRIGGER_SUFFIX = "\nx__pl = torch.zeros(3)\nx__pl.to('cuda', non_blocking=True)\n"
TRIGGER_FUNC = "\ndef f__pl(dev):\n    x = torch.tensor([1])\n    return x.to(dev, non_blocking=True)\n"


def _salted(source: str, where: int) -> list[str]:
    """The generated source, made interesting for pinlint: torch imported, a non_blocking copy
    at module level / in a function, and the words sprinkled into the text itself."""
    variants = [
        "import torch\n" + source + TRIGGER_SUFFIX,
        "import torch\n" + source + TRIGGER_FUNC,
    ]
    lines = source.splitlines(keepends=True)
    if lines:
        i = where % (len(lines) + 1)
        variants.append(
            "import torch\n" + "".join(lines[:i]) + "torch.zeros(2).cuda(non_blocking=True)\n" + "".join(lines[i:])
        )
    # Replace some names by trigger words (may or may not stay valid Python).
    variants.append(
        "import torch\n"
        + re.sub(r"\b([a-z_]\w*)\b", lambda m: "non_blocking" if hash(m.group(1)) % 5 == 0 else m.group(1), source)
    )
    return variants


def _never_raises(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of generated code, when it is compiled
        _never_raises_inner(source)


def _never_raises_inner(source: str) -> None:
    for rules in (DEFAULT_RULES, ALL_RULES):
        analysis = analyze_text(source, AnalysisSettings(rules=rules))
        if analysis.syntax_error is not None:
            row, column, message = analysis.syntax_error
            assert isinstance(row, int) and isinstance(column, int) and message
    # The whole per-file path: triage, decode, analyze, materialize, fix (stdin pipeline).
    run = check_in_memory(source)
    assert run.stdin_output == source
    fixed = fix_in_memory(source)
    if fixed.fixed:
        ast.parse(fixed.stdin_output)
    for _diagnostic, reason in fixed.dropped:
        assert reason


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=150 * SCALE, **COMMON)
@given(source=hypothesmith.from_grammar(), where=st.integers(0, 50))
def test_never_raises_on_grammar_source(source: str, where: int) -> None:
    _count("from_grammar")
    _never_raises(source)
    for variant in _salted(source, where):
        _never_raises(variant)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=60 * SCALE, **COMMON)
@given(source=hypothesmith.from_node(), where=st.integers(0, 50))
def test_never_raises_on_cst_source(source: str, where: int) -> None:
    _count("from_node")
    _never_raises(source)
    for variant in _salted(source, where):
        _never_raises(variant)


@settings(max_examples=150 * SCALE, **COMMON)
@given(
    data=st.binary(max_size=400),
    prefix=st.sampled_from(
        [b"", b"import torch\n", b"\xef\xbb\xbfimport torch\n", b"# -*- coding: latin-1 -*-\nimport torch\n"]
    ),
)
def test_never_raises_on_bytes(data: bytes, prefix: bytes) -> None:
    """Arbitrary bytes (with trigger words) through the engine's per-file entry point."""
    _count("bytes")
    payload = prefix + data + b"\nx.to(d, non_blocking=True)\n"
    for rules in (DEFAULT_RULES, ALL_RULES):
        result = runner.analyze_bytes("/tmp/pinlint_robustness/b.py", payload, AnalysisSettings(rules=rules))
        assert (result.error is None) != (result.analysis is None) or result.analysis is not None


# --------------------------------------------------------------------------------------------
# 2. Generated PIN001 patterns: the fixer's properties
# --------------------------------------------------------------------------------------------

RESERVED = {
    "torch",
    "dev",
    "dst",
    "self",
    "f",
    "C",
    "np",
    "is_pin_memory_available",
    "range",
    "ctx",
    "cm",
    "pin_memory",
    "device",
    "dtype",
    "non_blocking",
    "item",
    "x",
    "myproj",
    "open",
    "print",
    "n",
    "fh",
    "os",
    "sys",
    "outer",
    "list",
}
IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: (
        not keyword.iskeyword(s)
        and not keyword.issoftkeyword(s)
        and s not in RESERVED
        and not s.startswith(("v_", "r_", "out_"))
    )
)

FACTORIES = {
    # name: (positional argument choices, keyword argument choices)
    "tensor": (
        ["[1, 2, 3]", "[[1, 2], [3, 4]]", "[0.5] * 4", "list(range(8))", "(1, 2)"],
        ["dtype={M}.int64", "dtype={M}.float32", "requires_grad=False"],
    ),
    "zeros": (["3", "3, 4", "(2, 5)", "n"], ["dtype={M}.int32", "layout={M}.strided"]),
    "ones": (["8", "2, 2"], ["dtype={M}.float16"]),
    "empty": (["16", "4, 4"], ["dtype={M}.uint8"]),
    "full": (["(3,), 7"], ["dtype={M}.int64"]),
    "arange": (["10", "0, n"], ["dtype={M}.int64"]),
    "randn": (["4, 3"], ["dtype={M}.float32"]),
}


@dataclass
class Case:
    text: str
    #: (first row, last row) of each construction that must be flagged and fixed (1-based).
    constructions: list[tuple[int, int]] = field(default_factory=list)
    newline: str = "\n"


@st.composite
def pin_cases(draw) -> Case:
    # -- imports --
    module_alias = draw(st.one_of(st.just("torch"), IDENT))
    lines: list[str] = []  # logical text, "\n" endings, converted at the end
    lines.append("import torch" if module_alias == "torch" else f"import torch as {module_alias}")
    M = module_alias
    direct: dict[str, str] = {}
    for factory in draw(st.lists(st.sampled_from(sorted(FACTORIES)), max_size=2, unique=True)):
        alias = draw(IDENT.filter(lambda s: s != M and s not in direct.values()))
        direct[factory] = alias
        lines.append(
            f"from torch import {factory} as {alias}"
            if draw(st.booleans()) or alias == factory
            else f"from torch import {factory} as {alias}"
        )
    if draw(st.booleans()):
        lines.append("import os, sys  # unrelated")
    lines.append("")
    indent_unit = draw(st.sampled_from(["    ", "\t", "  ", "        "]))

    # -- the container the instances live in --
    container = draw(st.sampled_from(["def", "if", "for", "with", "try", "class", "nested-def", "module"]))
    depth = 0
    header: list[str] = []
    if container == "module":
        header.append("dev = 'cuda:0'")
        header.append("n = 4")
    elif container == "class":
        header += ["class C:", f"{indent_unit}def f(self, dev, n=4):"]
        depth = 2
    elif container == "nested-def":
        header += ["def outer():", f"{indent_unit}def f(dev, n=4):"]
        depth = 2
    else:
        header.append("def f(dev, n=4):")
        depth = 1
        if container == "if":
            header.append(f"{indent_unit}if dev is not None and n > 0:")
            depth = 2
        elif container == "for":
            header.append(f"{indent_unit}for _ in range(n):")
            depth = 2
        elif container == "with":
            header.append(
                f"{indent_unit}with open(os.devnull) as fh:"
                if "import os" in "\n".join(lines)
                else f"{indent_unit}with {M}.no_grad():"
            )
            depth = 2
        elif container == "try":
            header.append(f"{indent_unit}try:")
            depth = 2
    lines += header
    ind = indent_unit * depth
    if container == "try" or container == "module" or depth:
        pass
    lines.append(f"{ind}dst = {M}.empty(3, device=dev)")

    case = Case(text="")
    count = draw(st.integers(1, 4))
    for k in range(count):
        factory = draw(st.sampled_from(sorted(FACTORIES)))
        positional, keywords = FACTORIES[factory]
        callee = direct.get(factory) if factory in direct and draw(st.booleans()) else f"{M}.{factory}"
        args = [draw(st.sampled_from(positional))]
        args += [
            kw.format(M=M)
            for kw in draw(st.lists(st.sampled_from(keywords), max_size=2, unique_by=lambda kw: kw.split("=")[0]))
        ]
        var = f"v_{k}"
        style = draw(
            st.sampled_from(
                [
                    "one-line",
                    "per-line-trailing",
                    "per-line-no-trailing",
                    "comments",
                    "backslash-args",
                    "backslash-assign",
                    "hanging",
                ]
            )
        )
        arg_indent = ind + indent_unit
        if style == "one-line":
            call = [f"{callee}({', '.join(args)})"]
        elif style == "per-line-trailing":
            call = [f"{callee}("] + [f"{arg_indent}{a}," for a in args] + [f"{ind})"]
        elif style == "per-line-no-trailing":
            call = [f"{callee}("] + [f"{arg_indent}{a}," for a in args[:-1]] + [f"{arg_indent}{args[-1]}", f"{ind})"]
        elif style == "comments":
            body = [f"{arg_indent}# leading comment {k}"]
            for i, a in enumerate(args):
                body.append(f"{arg_indent}{a},  # arg {i}: keep me")
            if draw(st.booleans()):
                body[-1] = body[-1].replace(",  #", "  #", 1)  # no trailing comma, comment after the last argument
            call = [f"{callee}("] + body + [f"{ind})  # closing comment"]
        elif style == "backslash-args":
            call = [f"{callee}({args[0]}" + (", \\" if len(args) > 1 else ")")]
            for i, a in enumerate(args[1:], 1):
                call.append(f"{arg_indent}{a}" + (", \\" if i < len(args) - 1 else ")"))
        elif style == "backslash-assign":
            call = ["\\", f"{arg_indent}{callee}({', '.join(args)})"]
        else:  # hanging indent
            pad = " " * (len(f"{var} = {callee}("))
            call = [f"{callee}({args[0]}" + ("," if len(args) > 1 else ")")]
            for i, a in enumerate(args[1:], 1):
                call.append(f"{ind}{pad}{a}" + ("," if i < len(args) - 1 else ")"))
        sink = draw(st.sampled_from(["to", "to-kw", "cuda", "copy", "chained"]))
        if sink == "chained" and style != "backslash-assign":
            first = len(lines) + 1
            call_lines = list(call)
            call_lines[0] = f"{ind}out_{k} = {call_lines[0]}"
            call_lines[-1] = (
                call_lines[-1] + ".to(dev, non_blocking=True)"
                if not call_lines[-1].rstrip().endswith(("comment", "\\"))
                else call_lines[-1]
            )
            if call_lines[-1].endswith("comment"):
                # `)  # closing comment` : put the copy before the comment
                call_lines[-1] = call_lines[-1].replace(
                    ")  # closing comment", ").to(dev, non_blocking=True)  # closing comment"
                )
            lines += call_lines
            case.constructions.append((first + (1 if style == "backslash-assign" else 0), len(lines)))
            continue
        first = len(lines) + 1
        call_lines = list(call)
        call_lines[0] = f"{ind}{var} = {call_lines[0]}"
        lines += call_lines
        case.constructions.append((first + (1 if style == "backslash-assign" else 0), len(lines)))
        if draw(st.booleans()):
            lines.append(f"{ind}# a comment between construction and copy")
        if sink == "to":
            lines.append(f"{ind}r_{k} = {var}.to(dev, non_blocking=True)")
        elif sink == "to-kw":
            lines.append(f"{ind}r_{k} = {var}.to(device=dev, non_blocking=True)")
        elif sink == "cuda":
            lines.append(f"{ind}r_{k} = {var}.cuda(non_blocking=True)")
        else:
            lines.append(f"{ind}dst.copy_({var}, non_blocking=True)")
    if container == "try":
        lines.append(f"{indent_unit}except RuntimeError:")
        lines.append(f"{indent_unit * 2}raise")
    if container == "nested-def":
        lines.append(f"{indent_unit}return f")
    lines.append("")
    text = "\n".join(lines)
    newline = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    if newline == "mixed":
        parts = text.split("\n")
        ends = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(parts) - 1, max_size=len(parts) - 1))
        text = "".join(p + e for p, e in zip(parts, ends)) + parts[-1]
    else:
        text = text.replace("\n", newline)
    case.text = text
    case.newline = newline
    return case


def _tokens(text: str) -> list[tuple[int, str]]:
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        out.append((tok.type, tok.string))
    return out


DEVICE = r"""(dev|dst\.device|'cuda'|"cuda")"""


def _strip_inserted(tokens: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], int, int]:
    """``tokens`` without the fixer's insertions: each ``pin_memory=is_pin_memory_available(...)``
    argument with its comma, and the helper import. Returns (tokens, arguments, imports) removed."""
    out = list(tokens)
    strings = [t for _, t in out]
    import_tokens = [t for _, t in _tokens(HELPER_IMPORT + "\n")]
    imports = 0
    for i in range(len(strings) - len(import_tokens) + 1):
        if strings[i : i + len(import_tokens)] == import_tokens:
            del out[i : i + len(import_tokens)]
            imports += 1
            break
    arguments = 0
    i = 0
    while i < len(out):
        if (
            out[i][1] == "pin_memory"
            and i + 3 < len(out)
            and [t for _, t in out[i + 1 : i + 4]] == ["=", "is_pin_memory_available", "("]
        ):
            j = i + 4
            depth = 1
            while depth:
                depth += {"(": 1, ")": -1}.get(out[j][1], 0)
                j += 1
            device = "".join(t for _, t in out[i + 4 : j - 1])
            assert re.fullmatch(DEVICE, device), f"unexpected device expression {device!r} in the fix"
            if j < len(out) and out[j][1] == ",":
                del out[i : j + 1]  # `pin_memory=...,` (a line of its own)
            else:
                assert out[i - 1][1] == ",", "an inserted argument without its comma"
                del out[i - 1 : j]  # `, pin_memory=...`
                i -= 1
            arguments += 1
            continue
        i += 1
    return out, arguments, imports


def _without_trailing_commas(tokens: list[tuple[int, str]]) -> list[tuple[int, str]]:
    def trailing(i: int) -> bool:
        j = i + 1
        while j < len(tokens) and tokens[j][0] == tokenize.COMMENT:
            j += 1
        return j < len(tokens) and tokens[j][1] in (")", "]", "}")

    return [t for i, t in enumerate(tokens) if not (t[1] == "," and trailing(i))]


def _assert_tokens_kept(old: str, new: str, expected_arguments: int) -> None:
    """Every token of ``old`` (comments included) is in ``new``, in order; what was added is only
    the ``pin_memory=<helper>(<device>)`` arguments and the helper import."""
    a, b = _tokens(old), _tokens(new)
    stripped, arguments, imports = _strip_inserted(b)
    # A multi-line call without a trailing comma gets one (`10` -> `10,` + the new argument line):
    # trailing commas are compared as absent on both sides.
    a, stripped = _without_trailing_commas(a), _without_trailing_commas(stripped)
    assert arguments == expected_arguments
    assert imports <= 1
    if stripped != a:
        matcher = difflib.SequenceMatcher(a=a, b=stripped, autojunk=False)
        diffs = [(tag, a[i1:i2], stripped[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
        raise AssertionError(f"the fix changed tokens other than its insertions: {diffs}")


def _assert_only_finding_lines_changed(old: str, new: str, constructions: list[tuple[int, int]]) -> None:
    old_lines, new_lines = split_lines(old), split_lines(new)
    allowed = {row for first, last in constructions for row in range(first, last + 1)}
    imports_added = 0
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        assert tag in ("replace", "insert"), f"lines deleted: {old_lines[i1:i2]!r}"
        changed_rows = set(range(i1 + 1, i2 + 1))
        inserted = new_lines[j1:j2]
        if tag == "insert" and len(inserted) == 1 and inserted[0].rstrip("\r\n") == HELPER_IMPORT:
            imports_added += 1
            continue
        # An insertion inside a construction (the `pin_memory=...,` line of per-line calls) sits
        # between two rows of it; a replacement must only touch construction rows.
        if tag == "insert":
            assert i1 in allowed or i1 + 1 in allowed, (
                f"line inserted outside a finding at old row {i1 + 1}: {inserted!r}"
            )
            for line in inserted:
                assert "pin_memory=is_pin_memory_available(" in line, f"unexpected inserted line {line!r}"
        else:
            assert changed_rows <= allowed, (
                f"rows {sorted(changed_rows - allowed)} changed outside findings {constructions}: {old_lines[i1:i2]!r} -> {inserted!r}"
            )
    assert imports_added <= 1


def _assert_line_endings_kept(old: str, new: str) -> None:
    """Each original line keeps its ending; inserted lines use the ending of their neighbour."""
    new_lines = split_lines(new)
    old_lines = split_lines(old)
    endings_old = [line[len(line.rstrip("\r\n")) :] for line in old_lines]
    endings_new = [line[len(line.rstrip("\r\n")) :] for line in new_lines]
    # Original lines keep their ending: compare the multiset per content via a line diff.
    matcher = difflib.SequenceMatcher(
        a=[l.rstrip("\r\n") for l in old_lines], b=[l.rstrip("\r\n") for l in new_lines], autojunk=False
    )
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            assert endings_old[block.a + k] == endings_new[block.b + k], f"line {block.a + k + 1} lost its line ending"
    for ending in endings_new:
        assert ending in set(endings_old) | {""}, f"a line ending {ending!r} that the file did not use"


def _check_case(case: Case) -> tuple[str, list]:
    compile(case.text, "<generated>", "exec")  # the generator's own invariant
    run = fix_in_memory(case.text)
    assert not run.errors, run.errors
    assert not run.dropped, run.dropped
    new = run.stdin_output
    assert new is not None
    # Every generated construction is found and fixed (one finding per construction).
    fixed_rows = sorted(d.location.row for d in run.fixed)
    assert len(run.fixed) == len(case.constructions), (
        f"expected {len(case.constructions)} fixes at {case.constructions}, got rows {fixed_rows}; "
        f"remaining: {[(d.code, d.location.row, d.fix_note) for d in run.diagnostics]}\n{case.text}"
    )
    assert all(d.code == "PIN001" for d in run.fixed)
    ast.parse(new)
    assert compile(new, "<fixed>", "exec")
    # A fixed point: nothing left to fix, and fixing again changes nothing.
    assert not any(d.fixable for d in run.diagnostics), [(d.code, d.location) for d in run.diagnostics]
    again = fix_in_memory(new)
    assert again.stdin_output == new
    assert not again.fixed
    assert not [d for d in again.diagnostics if d.code == "PIN001"]
    _assert_only_finding_lines_changed(case.text, new, case.constructions)
    _assert_tokens_kept(case.text, new, len(case.constructions))
    _assert_line_endings_kept(case.text, new)
    return new, run.fixed


@settings(max_examples=150 * SCALE, **COMMON)
@given(case=pin_cases())
def test_fix_properties_on_generated_patterns(case: Case) -> None:
    _count("pin_cases")
    _check_case(case)


@settings(max_examples=25 * SCALE, **COMMON)
@given(cases=st.lists(pin_cases(), min_size=1, max_size=3))
def test_fix_through_run_check_keeps_bytes(tmp_path_factory, cases: list[Case]) -> None:
    """The file path (read bytes → decode → fix → encode → atomic write): the written bytes equal
    the in-memory fix, encoded like the original (line endings, BOM)."""
    _count("run_check")
    root = tmp_path_factory.mktemp("proj")
    files, expected = [], {}
    for i, case in enumerate(cases):
        path = root / f"m{i}.py"
        bom = i % 2 == 1
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + case.text.encode("utf-8"))
        files.append(path)
        new = fix_in_memory(case.text, filename=str(path)).stdin_output
        expected[path] = (b"\xef\xbb\xbf" if bom else b"") + new.encode("utf-8")
    config = Config(root=root, pin_memory_helper=HELPER_SPEC)
    options = CheckOptions(selected={"PIN001", "PIN002"}, fix=True, unsafe_fixes=True, use_cache=False, jobs=1)
    run = run_check(files, config, options)
    assert not run.errors, run.errors
    for path in files:
        assert path.read_bytes() == expected[path]
    leftovers = [p.name for p in root.iterdir() if p.suffix != ".py"]
    assert leftovers == [], leftovers
