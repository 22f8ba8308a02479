"""The text pre-filter for functions that may copy: a wrapper counts through the functions of its
file it calls, to a bounded depth, and recursion terminates."""

from __future__ import annotations

from pinlint.analysis.copy_text import FORWARD_DEPTH, may_copy
from pinlint.analysis.file_text import FileText
from pinlint.core.text import split_lines

SOURCE = """\
def copy_in(t, device):
    return t.to(device, non_blocking=True)


def send(t, device):
    return copy_in(t, device)


def relay(t, device):
    return send(t, device)


def relay_again(t, device):
    return relay(t, device)


def ring(t):
    return ring(t)


def unrelated(t):
    return t + 1


class Runner:
    def push(self, t):
        return self.send_method(t)

    def send_method(self, t):
        return t.cuda(non_blocking=True)
"""


def _may_copy(name: str, text: str = SOURCE) -> bool:
    lines = split_lines(text)
    scan = FileText(lines)
    [(start, _)] = scan.defs(name)
    return may_copy(lines, text, scan, start, {})


def test_a_wrapper_counts_through_the_functions_it_calls() -> None:
    assert FORWARD_DEPTH == 2
    assert _may_copy("copy_in")
    assert _may_copy("send")
    assert _may_copy("relay")
    assert not _may_copy("relay_again")  # three wrappers deep: past the bound
    assert _may_copy("push")  # `self.send_method(...)` of a method of the file


def test_recursion_and_unrelated_functions_say_no() -> None:
    assert not _may_copy("ring")
    assert not _may_copy("unrelated")


def test_a_file_without_non_blocking_never_copies() -> None:
    text = SOURCE.replace("non_blocking=True", "True")
    assert not _may_copy("send", text)
    assert not _may_copy("copy_in", text)
