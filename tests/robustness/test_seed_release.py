"""The SGLang change pinlint is named after, on the release it changed (sglang 0.5.18 from PyPI).

The change pinned the host tensors of eleven non_blocking copies and turned three blocking device
constructions into pinned host tensors copied asynchronously. On the release as it was, PIN001
must flag every one of the eleven and PIN003 the three, and ``--fix --unsafe-fixes`` must write
the pinned pattern there: files that compile, that pinlint then finds clean.

Marked ``corpus`` (outside the default run; ``.ci/run`` runs it): the wheel is fetched by
``benchmarks/corpus.py fetch --set seed`` and cached under ``benchmarks/.corpus/.seed``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

_spec = importlib.util.spec_from_file_location("pinlint_corpus_report", Path(__file__).with_name("corpus_report.py"))
corpus_report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = corpus_report
_spec.loader.exec_module(corpus_report)

DRAFT = "sglang/srt/speculative/dspark_components/dspark_draft.py"
WORKER = "sglang/srt/speculative/dspark_components/dspark_worker_v2.py"
ALLOCATION = "sglang/srt/mem_cache/allocation.py"
BATCH = "sglang/srt/model_executor/forward_batch_info.py"

#: (file, row, column, code) of each site the change converted, with the line as the release has it.
SITES = {
    # alloc_for_extend(): prefix_lens_cpu, extend_lens_cpu, req_pool_indices_cpu
    (ALLOCATION, 304, 23, "PIN001"): "prefix_lens_cpu = torch.tensor(batch.prefix_lens, dtype=torch.int64)",
    (ALLOCATION, 305, 23, "PIN001"): "extend_lens_cpu = torch.tensor(batch.extend_lens, dtype=torch.int64)",
    (ALLOCATION, 313, 28, "PIN001"): "req_pool_indices_cpu = torch.tensor(req_pool_indices, dtype=torch.int64)",
    # ForwardBatch.init_mlp_sync_metadata(): global_num_tokens_gpu, global_num_tokens_for_logprob_gpu
    (BATCH, 694, 38, "PIN001"): "self.global_num_tokens_gpu = torch.tensor(",
    (BATCH, 698, 50, "PIN001"): "self.global_num_tokens_for_logprob_gpu = torch.tensor(",
    # ForwardBatch.init_new(): num_token_non_padded, extend_seq_lens, extend_prefix_lens
    (BATCH, 837, 40, "PIN001"): "ret.num_token_non_padded = torch.tensor(num_tokens, dtype=torch.int32).to(",
    (BATCH, 877, 39, "PIN001"): "ret.extend_seq_lens = torch.tensor(",
    (BATCH, 880, 42, "PIN001"): "ret.extend_prefix_lens = torch.tensor(",
    # _make_num_token_non_padded() and _fill_dp_moe_sync_metadata()
    (DRAFT, 57, 12, "PIN001"): "return torch.tensor(num_tokens, dtype=torch.int32).to(device, non_blocking=True)",
    (DRAFT, 418, 47, "PIN001"): "forward_batch.global_num_tokens_gpu = torch.tensor(gnt, dtype=torch.int64).to(",
    (DRAFT, 421, 59, "PIN001"): "forward_batch.global_num_tokens_for_logprob_gpu = torch.tensor(",
    # The three blocking device constructions, `num_tokens = forward_batch.input_ids.numel()` first.
    (DRAFT, 412, 50, "PIN003"): "forward_batch.num_token_non_padded = torch.tensor(",
    (WORKER, 469, 20, "PIN003"): "ctx_lens = torch.tensor(batch.extend_lens, dtype=torch.int32, device=device)",
    (WORKER, 470, 26, "PIN003"): "draft_seq_lens = torch.tensor(",
}
FILES = sorted({site[0] for site in SITES})


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the release's sources, as a project of its own (fixes are written into it)."""
    try:
        # Beside the other corpora, not among them: runs over the review corpus root would learn
        # this release's idioms too.
        (tree,) = corpus_report.fetch("seed", corpus_report.REPO / "benchmarks" / ".corpus" / ".seed")
    except corpus_report.FetchError as exc:
        if not corpus_report.pypi_reachable():
            pytest.skip(f"PyPI is unreachable and sglang 0.5.18 is not cached: {str(exc)[-300:]}")
        raise
    work = tmp_path_factory.mktemp("sglang-0.5.18")
    shutil.copytree(tree / "sglang", work / "sglang")
    (work / "pyproject.toml").write_text("[tool.pinlint]\n")
    return work


def _pinlint(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pinlint", "check", *FILES, "--select", "PIN001,PIN003", "--no-cache", *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_every_site_of_the_change_is_flagged_and_fixed(release: Path) -> None:
    for (path, row, _column, _code), line in SITES.items():
        assert (release / path).read_text().splitlines()[row - 1].strip() == line, (path, row)

    checked = _pinlint(release, "--output-format", "json", "--exit-zero")
    assert checked.returncode == 0, checked.stderr
    found = {
        (Path(d["filename"]).resolve().relative_to(release.resolve()).as_posix(), *d["location"].values(), d["code"])
        for d in json.loads(checked.stdout)
    }
    assert set(SITES) <= found, sorted(set(SITES) - found)

    fixed = _pinlint(release, "--fix", "--unsafe-fixes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    for path in FILES:
        tree = ast.parse((release / path).read_text(), path)
        imported = {
            alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        assert "is_pin_memory_available" in imported, path  # the project's helper, imported at the top
    worker = (release / WORKER).read_text()
    assert (
        "ctx_lens = torch.tensor(\n"
        "            batch.extend_lens,\n"
        "            dtype=torch.int32,\n"
        "            pin_memory=is_pin_memory_available(device),\n"
        "        ).to(device, non_blocking=True)"
    ) in worker
    draft = (release / DRAFT).read_text()
    assert (
        "num_tokens, dtype=torch.int32, pin_memory=is_pin_memory_available(device)\n            ).to(device, non_blocking=True)"
        in draft
    )

    again = _pinlint(release, "--output-format", "json", "--exit-zero")
    assert json.loads(again.stdout) == [], again.stdout
