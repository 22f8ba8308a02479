"""What one file tells about the project's pin-memory helper: imports, definitions, calls.

Read from text (a few regexes, only when the helper's name occurs), so files that are not
analysed can still teach the project's helper.
"""

from __future__ import annotations

import re

from pinlint import torch_api
from pinlint.analysis.names import FileNames
from pinlint.core.results import HelperFacts

_NAME = re.escape(torch_api.PIN_HELPER_NAME)
_HELPER_DEF = re.compile(rf"^(?:async[ \t]+)?def[ \t]+{_NAME}[ \t]*\(([^)]*)\)", re.MULTILINE)
_HELPER_CALL_NO_ARGS = re.compile(rf"{_NAME}\(\s*\)")
_HELPER_CALL_ARGS = re.compile(rf"(?<!def ){_NAME}\(\s*[^)\s]")


def helper_facts(text: str, names: FileNames, newline: str) -> HelperFacts:
    mentions_helper = torch_api.PIN_HELPER_NAME in text  # the regexes below only if it can matter
    definition = _HELPER_DEF.search(text) if mentions_helper else None
    takes_device: bool | None = None
    if definition:
        params = [p.strip() for p in definition.group(1).split(",") if p.strip()]
        params = [p for p in params if p not in ("*", "/") and not p.startswith("*")]
        takes_device = bool(params and params[0].split(":")[0].split("=")[0].strip() not in ("self", "cls"))
    return HelperFacts(
        bindings=tuple(sorted(names.helper_bindings.items())),
        attribute_calls=tuple(names.helper_attribute_calls),
        defines_helper=definition is not None,
        definition_takes_device=takes_device,
        calls_without_args=len(_HELPER_CALL_NO_ARGS.findall(text)) if mentions_helper else 0,
        calls_with_args=len(_HELPER_CALL_ARGS.findall(text)) if mentions_helper else 0,
        module_level_bindings=frozenset(names.module_level_bindings),
        last_top_level_import_line=names.last_top_level_import_line,
        import_group_lines=tuple(sorted(names.import_group_lines.items())),
        newline=newline,
    )
