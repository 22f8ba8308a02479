"""Cheap over-approximations, on a file's text, of what its code may do: a pattern that does
not match proves the code does not do it, so the walk that would look for it is skipped (or
the value it would decide is trusted). ``FileSummaries.text_matches`` runs each once a file."""

from __future__ import annotations

import re

from pinlint import torch_api

#: Over-approximates ``expressions._replaces_memory`` on text: a name of a storage-replacing method
#: or swapping function anywhere, or a storage attribute followed by ``=`` (not ``==``), through
#: spaces, continuations, closing parentheses and comments.
MEMORY_REPLACING_TEXT = re.compile(
    "|".join(
        [rf"\b{re.escape(m)}\b" for m in sorted(torch_api.STORAGE_REPLACING_METHODS)]
        + [rf"\b{re.escape(f.rsplit('.', 1)[-1])}\b" for f in sorted(torch_api.MEMORY_SWAPPING_FUNCTIONS)]
        + [rf"\.[\s\\]*{re.escape(a)}\b(?:[\s\\)]|#[^\n]*)*=(?!=)" for a in sorted(torch_api.STORAGE_ATTRIBUTES)]
    )
)
#: The data loader class, or what it does by default, patched: ``DataLoader.__init__ = ...``,
#: ``cls.__init__ = ...`` (through a helper it is handed to), ``data.DataLoader = ...``,
#: ``setattr(data, "DataLoader", ...)``, or the default collate function taught other types
#: (``default_collate_fn_map``). Code that runs first (a package ``__init__.py``, an imported
#: module) may do it too.
LOADER_CLASS_PATCHING_TEXT = re.compile(
    "|".join(
        [r"\.[\s\\]*__init__[\s\\]*=(?!=)", r"\bdefault_collate_fn_map\b"]
        + [
            rf"\b{c}\b(?:[\s\\]*\.[\s\\]*\w+)?(?:[\s\\)]|#[^\n]*)*=(?!=)|[\"']{c}[\"']"
            for c in sorted({name.rsplit(".", 1)[-1] for name in torch_api.HOST_BATCH_LOADERS})
        ]
    )
)
#: A data loader's batches made another way after it is built: ``loader.pin_memory = True``,
#: ``loader.collate_fn = f``, or those names as strings (``setattr(loader, "pin_memory", True)``,
#: a dict of keyword arguments); its attributes reached through ``__dict__``; a
#: ``TensorDataset``'s tensors replaced (``ds.tensors = ...``); or the class patched (above).
LOADER_CHANGING_TEXT = re.compile(
    "|".join(
        [rf"\.[\s\\]*{a}\b(?:[\s\\)]|#[^\n]*)*=(?!=)|[\"']{a}[\"']" for a in sorted(torch_api.LOADER_BATCH_ATTRIBUTES)]
        + [r"\b__dict__\b", r"\.[\s\\]*tensors\b(?:[\s\\)]|#[^\n]*)*=(?!=)", LOADER_CLASS_PATCHING_TEXT.pattern]
    )
)
#: A statement starting with ``global``, ``nonlocal`` or ``match`` (a soft keyword: over-approximated).
DECLARING_TEXT = re.compile(r"(?:^|;)[ \t]*(?:global|nonlocal|match)\b", re.M)
#: A dataset class whose samples may already be on a device (``.cuda()``, ``device=``,
#: ``.to(...)``): a loader's batches of them may be too.
DEVICE_SAMPLES_TEXT = re.compile(r"\bcuda\b|\bdevice\b|\.to\(")
#: One whose samples may be pinned: unbatched, a loader gives them as they are.
PINNED_SAMPLES_TEXT = re.compile(r"\bpin_memory\b|\bis_pinned\b")
#: What calling an object runs patched, or its arguments replaced before ``forward`` runs:
#: ``__call__ = ...`` (on a class, in a class body, ``nn.Module.__call__``), ``_call_impl``, a
#: forward pre-hook (``register_forward_pre_hook``, ``register_module_forward_pre_hook``,
#: ``_forward_pre_hooks``, ``_global_forward_pre_hooks``). Post-hooks see the result only.
CALL_PATCHING_TEXT = re.compile(r"forward_pre_hook|\b_call_impl\b|\b__call__\b(?:[\s\\)]|#[^\n]*)*=(?!=)")
