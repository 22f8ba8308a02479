"""A scheduler hot path with the patterns pinlint finds (adapted from the SGLang change it is named after).

Try it:  pinlint check examples/    then    pinlint check examples/ --diff
"""

import numpy as np
import torch

from examples.utils import is_pin_memory_available


def alloc_for_extend(prefix_lens, extend_lens, req_pool_indices, device):
    prefix_lens_cpu = torch.tensor(prefix_lens, dtype=torch.int64)
    extend_lens_cpu = torch.tensor(extend_lens, dtype=torch.int64)
    req_pool_indices_cpu = torch.tensor(
        [int(i) for i in req_pool_indices],
        dtype=torch.int64,
    )
    prefix_lens_gpu = prefix_lens_cpu.to(device, non_blocking=True)
    extend_lens_gpu = extend_lens_cpu.to(device, non_blocking=True)
    req_pool_indices_gpu = req_pool_indices_cpu.to(device, non_blocking=True)
    return prefix_lens_gpu, extend_lens_gpu, req_pool_indices_gpu


def make_num_token_non_padded(num_tokens, device):
    return torch.tensor(num_tokens, dtype=torch.int32).to(device, non_blocking=True)


def global_num_tokens(counts, device):
    pinned = torch.tensor(counts, dtype=torch.int64, pin_memory=is_pin_memory_available(device))
    return pinned.to(device, non_blocking=True)  # already pinned: not flagged


def positions_from_numpy(seq_lens: np.ndarray, device):
    positions = torch.from_numpy(np.concatenate([np.arange(n) for n in seq_lens]))
    return positions.to(device, non_blocking=True)  # PIN002: cannot be pinned where it is made
