"""Which functions could hold a finding, by their text: the ``name(`` of every host-tensor
construction, and whether a function reads what another function (of the file, or imported)
may have built."""

from __future__ import annotations

import functools
import re

from pinlint import torch_api
from pinlint.analysis.names import FileNames, project_imports

#: Every way a host tensor can be born: a function without one of these tokens cannot hold a
#: finding, so it is not parsed.
_SOURCE_NAMES = sorted(
    torch_api.PINNABLE_FACTORIES
    | torch_api.PINNABLE_LIKE_FACTORIES
    | torch_api.PINNABLE_NEW_METHODS
    | torch_api.UNPINNABLE_DATA_FACTORIES
    | torch_api.MEMORY_SHARING_FACTORIES
    | torch_api.TO_HOST_METHODS
    # Known library loaders (`load_file(path)`, `st.load_file(path)`): pageable host tensors.
    | {name.rsplit(".", 1)[-1] for name in torch_api.HOST_LIBRARY_FUNCTIONS}
    | {name.rsplit(".", 1)[-1] for name in torch_api.HOST_FILE_HANDLES}
    # Data loaders (`DataLoader(ds)`): their batches are pageable host tensors.
    | {name.rsplit(".", 1)[-1] for name in torch_api.HOST_BATCH_LOADERS}
)


class SourceTokens:
    """``name(`` substrings (fast ``in`` tests, no regex): a function without any of them holds no
    host-tensor construction. ``torch.zeros (3)``, with a space, is not seen: a style no formatter
    produces."""

    def __init__(self, names: FileNames) -> None:
        extra = [n.rsplit(".", 1)[-1] for n in (*names.torch_functions, *names.host_functions)]
        self.needles = [f"{name}(" for name in (*_SOURCE_NAMES, *extra)] + ['"cpu', "'cpu"]
        self._file_has_source: bool | None = None
        #: The names of the functions defined in this file (their calls may hand over a tensor).
        self._defined: frozenset[str] = frozenset()
        self._names = names
        self._calls_imported: re.Pattern[str] | bool | None = None

    def search(self, text: str) -> bool:
        return any(needle in text for needle in self.needles)

    def calls_imported(self, segment: str) -> bool:
        """The segment calls a name imported from elsewhere (``f(`` or ``mod.f(``): the
        project's other files may answer what it returns."""
        if self._calls_imported is None:
            imported = sorted(project_imports(self._names))
            if not imported:
                self._calls_imported = False
            else:
                self._calls_imported = re.compile(
                    r"(?<![\w.])(?:" + "|".join(map(re.escape, imported)) + r")[ \t]*[.(]"
                )
        return self._calls_imported is not False and self._calls_imported.search(segment) is not None

    def may_receive(self, segment: str, text: str, cross_file: bool = False) -> bool:
        """The segment may copy a tensor made elsewhere in the file: the file makes host tensors
        somewhere (``cross_file``: or calls an imported function, which may return one that a
        method stores in ``self.``), and the segment reads ``self.`` attributes or calls a
        function defined here."""
        if self._file_has_source is None:
            self._file_has_source = self.search(text) or (
                cross_file and (self.calls_imported(text) or self._derives_from_imported(text))
            )
            self._defined = frozenset(_DEF_NAME.findall(text))
        if not self._file_has_source:
            return False
        if "self." in segment:
            return True
        # The called words, matched against the set (an alternation of every name defined in a
        # large file takes longer to compile than the search saves).
        return bool(self._defined) and not self._defined.isdisjoint(_CALLED_WORD.findall(segment))

    def _derives_from_imported(self, text: str) -> bool:
        """A class of the file derives from a name imported from the project (its base's methods
        may set the ``self.`` attributes a method here copies)."""
        imported = project_imports(self._names)
        return bool(imported) and not class_bases(text).isdisjoint(imported)


def derived_from(local: str, text: str) -> bool:
    """A class of ``text`` names ``local`` among its bases (`class Inherit(Sender):`): its
    objects run the base's methods, and its methods read what the base's assign."""
    return local in class_bases(text)


@functools.lru_cache(maxsize=4)
def class_bases(text: str) -> frozenset[str]:
    """The bases the ``class`` statements of ``text`` name, as written (`nn.Module`; `Base` of
    `Base[T]`). Memoised: every imported name of a file is asked about."""
    if "class" not in text:
        return frozenset()
    return frozenset(b.split("[", 1)[0].strip() for bases in _CLASS_BASES.findall(text) for b in bases.split(","))


_CALLED_WORD = re.compile(r"\b(\w+)\(")
#: A ``class`` statement's bases (they may span lines, inside the parentheses).
_CLASS_BASES = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)", re.M)
_DEF_NAME = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


def may_build_tensors(data: bytes) -> bool:
    """Whether a function of this file may return a host tensor another file copies (a file
    the whole-project analysis could report into): it names torch and returns something, which
    it builds or computes from what a caller passes (``return a[1:] - a[:-1]``), or a method
    stores one in ``self.`` (read by a subclass's method in another file)."""
    return b"torch" in data and (b"return" in data or b"self." in data)
