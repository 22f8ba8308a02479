"""The text over-approximations that let the analysis skip a walk (or trust a value): each
matches what it stands for, through the spellings the code may use, and not its look-alikes."""

from __future__ import annotations

import re

import pytest

from pinlint.analysis.text_patterns import (
    CALL_PATCHING_TEXT,
    DEVICE_SAMPLES_TEXT,
    LOADER_CHANGING_TEXT,
    LOADER_CLASS_PATCHING_TEXT,
    PINNED_SAMPLES_TEXT,
)

CASES: list[tuple[re.Pattern[str], list[str], list[str]]] = [
    (
        LOADER_CHANGING_TEXT,
        [
            "loader.pin_memory = True",
            "loader.collate_fn=pad",
            'setattr(loader, "pin_memory", True)',
            "vars(loader)['collate_fn'] = f",
            "loader.__dict__.update(opts)",
            "ds.tensors = (x.cuda(),)",
            "DataLoader.__init__ = patched",
        ],
        ["DataLoader(ds, pin_memory=True)", "if loader.pin_memory == flag:", "t.pin_memory()", "ds.tensors[0]"],
    ),
    (
        LOADER_CLASS_PATCHING_TEXT,
        [
            "torch.utils.data.DataLoader = PinnedLoader",
            "DataLoader.__init__ = functools.partialmethod(DataLoader.__init__, pin_memory=True)",
            "cls.__init__ = functools.partialmethod(cls.__init__, pin_memory=True)",
            'setattr(torch.utils.data, "DataLoader", PinnedLoader)',
            "default_collate_fn_map[torch.Tensor] = pinned_collate",
        ],
        [
            "loader = DataLoader(ds)",
            "from torch.utils.data import DataLoader",
            "super().__init__()",
            "def __init__(self):",
        ],
    ),
    (
        CALL_PATCHING_TEXT,
        [
            "nn.Module.__call__ = pinning_call",
            "    __call__ = run",
            "Module._call_impl = wrapped",
            "self.register_forward_pre_hook(pin_inputs)",
            "register_module_forward_pre_hook(pin_inputs)",
            "torch.nn.modules.module._global_forward_pre_hooks[0] = pin_inputs",
        ],
        ["def __call__(self, x):", "self.register_forward_hook(log)", "return self.__call__(x)"],
    ),
    (DEVICE_SAMPLES_TEXT, ["x.cuda()", "device=dev", "t.to(self.dev)"], ["self.devices_seen", "x.pin_memory()"]),
    (PINNED_SAMPLES_TEXT, ["x.pin_memory()", "t.is_pinned()"], ["pin_memory_device", "x.cuda()"]),
]


@pytest.mark.parametrize(("pattern", "matching", "other"), CASES, ids=lambda c: getattr(c, "pattern", "")[:20])
def test_pattern(pattern: re.Pattern[str], matching: list[str], other: list[str]) -> None:
    assert [text for text in matching if not pattern.search(text)] == []
    assert [text for text in other if pattern.search(text)] == []
