import torch


def is_pin_memory_available(device=None) -> bool:
    """The project's guard: pinned memory needs an accelerator."""
    return torch.cuda.is_available() and str(device) != "cpu"
