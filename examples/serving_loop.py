"""A small serving-like loop: which of pinlint's findings are worth fixing first?

Some constructions run once (the server's init), some a few times (the warm-up), and some on
every step of the loop. Statically they all look alike; a runtime profile tells them apart:

    pinlint trace --simulate-cuda --profile profile.json -- python examples/serving_loop.py
    pinlint check --extend-select PIN003 --profile profile.json examples/serving_loop.py
    pinlint check --extend-select PIN003 --profile profile.json --hot-only --min-runs 10 examples/

(``--simulate-cuda`` runs it on a machine without a GPU.) See docs/runtime.md, *Profiles*.
"""

from __future__ import annotations

import sys

import torch

STEPS = 64
WARMUP_BATCH_SIZES = (1, 2, 4)


class Server:
    def __init__(self, vocab_size: int, max_batch: int, device: str) -> None:
        self.device = device
        # Init time: each of these runs once.
        self.vocab_ids = torch.arange(vocab_size, dtype=torch.int64).to(device, non_blocking=True)
        self.limits = torch.tensor([max_batch, vocab_size], dtype=torch.int64, device=device)
        self.step_count = 0

    def warm_up(self) -> None:
        # A few times: once per captured batch size.
        for batch_size in WARMUP_BATCH_SIZES:
            dummy = torch.zeros(batch_size, dtype=torch.int32).to(self.device, non_blocking=True)
            self.limits = torch.tensor([batch_size, 0], dtype=torch.int64, device=self.device)
            del dummy

    def step(self, requests: list[list[int]]) -> torch.Tensor:
        # Every step: the scheduler's metadata for this batch.
        seq_lens = torch.tensor([len(r) for r in requests], dtype=torch.int32)
        seq_lens_gpu = seq_lens.to(self.device, non_blocking=True)
        flat = torch.cat([torch.tensor(r, dtype=torch.int64) for r in requests])
        input_ids = flat.to(self.device, non_blocking=True)
        num_tokens = torch.tensor(sum(len(r) for r in requests), device=self.device)
        self.step_count += 1
        return input_ids.sum() + seq_lens_gpu.sum() + num_tokens


def main(steps: int = STEPS) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    server = Server(vocab_size=32_000, max_batch=8, device=device)
    server.warm_up()
    for i in range(steps):
        requests = [[i, i + 1, i + 2], [i + 3] * (1 + i % 4)]
        server.step(requests)
    print(f"served {server.step_count} steps on {device}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else STEPS)
