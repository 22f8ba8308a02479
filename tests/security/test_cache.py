"""Issue 20 / review #7, #17: the cache is hostile input. Crafted cache files in every framing
never execute anything and never hide findings; the cache never writes outside the project."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

import pytest

from pinlint import cache as cache_module
from tests.security.conftest import FINDING, pinlint, project

MARKER = "PWNED"


class _Payload:
    """Unpickling this runs a shell command that creates a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def _cache_file(proj: Path) -> Path:
    files = sorted(p for p in (proj / ".pinlint_cache").rglob("*.cache") if p.name != "diagnostics.cache")
    assert len(files) == 1, files
    return files[0]


def _concise(proj: Path, *args: str) -> tuple[int, str]:
    ran = pinlint("check", "--output-format", "concise", *args, ".", cwd=proj)
    return ran.returncode, ran.stdout


def test_warm_run_hits_and_gives_the_same_findings(tmp_path: Path, home: Path) -> None:
    proj = project(tmp_path / "p")
    cold = _concise(proj)
    assert cold[0] == 1 and "PIN001" in cold[1]
    warm = pinlint("check", "--output-format", "concise", "--timings", ".", cwd=proj)
    assert (warm.returncode, warm.stdout) == cold
    assert "1 cache hits" in warm.stderr
    blob = _cache_file(proj).read_bytes()
    assert b"PIN001" in blob and b"pickle" not in blob
    # The key that authenticates it lives in the user's cache folder, not in the project.
    key = home / ".cache" / "pinlint" / "cache-key"
    assert key.stat().st_mode & 0o777 == 0o600


def _payloads(marker: Path, genuine: bytes) -> dict[str, bytes]:
    raw = pickle.dumps({"x": _Payload(marker)})
    header_len = len(cache_module._MAGIC) + 65
    old_checksum = hashlib.blake2b(raw, digest_size=16).hexdigest().encode()
    return {
        "bare pickle": raw,
        "old framing, valid checksum": b"PINLINT-CACHE-1\n" + old_checksum + raw,
        "new framing, forged mac": cache_module._MAGIC + b"0" * 64 + b"\n" + raw,
        "new framing, genuine mac, pickle payload": genuine[:header_len] + raw,
        "pickle protocol 0": pickle.dumps(_Payload(marker), protocol=0),
        "json, forged mac": cache_module._MAGIC + b"f" * 64 + b"\n" + b'{"format": "pinlint-cache"}',
        "an earlier layout's number, genuine mac": b"PINLINT-CACHE-3\n" + genuine[len(cache_module._MAGIC) :],
        "truncated": genuine[: len(genuine) // 2],
        "empty": b"",
        "utf-16": genuine.decode("latin-1").encode("utf-16"),
        "huge": genuine + b" " * (1 << 20),
        "deep nesting": cache_module._MAGIC + b"0" * 64 + b"\n" + b"[" * 200_000,
    }


@pytest.mark.parametrize("kind", list(_payloads(Path("/x"), b"").keys()))
def test_crafted_cache_is_ignored_and_runs_nothing(tmp_path: Path, home: Path, kind: str) -> None:
    proj = project(tmp_path / "p")
    expected = _concise(proj, "--no-cache")
    _concise(proj)  # writes a genuine cache
    cache = _cache_file(proj)
    marker = tmp_path / MARKER
    cache.write_bytes(_payloads(marker, cache.read_bytes())[kind])
    assert _concise(proj) == expected
    assert not marker.exists(), "a crafted cache executed code"


def _genuine_entries(proj: Path) -> tuple[bytes, dict]:  # type: ignore[type-arg]
    blob = _cache_file(proj).read_bytes()
    header = len(cache_module._MAGIC) + 65
    return blob[:header], json.loads(blob[header:])


@pytest.mark.parametrize(
    "mutation",
    ["unknown key", "wrong type", "missing field", "bool for int", "entry too short"],
)
def test_wrong_shapes_are_no_cache(tmp_path: Path, home: Path, mutation: str) -> None:
    """Even with a valid MAC (as if this machine had written it), a shape we did not write is
    'no cache': the findings come back, nothing crashes."""
    import hmac

    proj = project(tmp_path / "p")
    expected = _concise(proj, "--no-cache")
    _concise(proj)
    _header, data = _genuine_entries(proj)
    entry = next(iter(data["entries"].values()))
    analysis = entry[4]
    if mutation == "unknown key":
        analysis["extra"] = 1
    elif mutation == "wrong type":
        analysis["findings"] = "nope"
    elif mutation == "missing field":
        del analysis["findings"][0]["code"]
    elif mutation == "bool for int":
        entry[0] = True
    else:
        del entry[4]
    payload = json.dumps(data).encode()
    key = (home / ".cache" / "pinlint" / "cache-key").read_bytes()
    mac = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    _cache_file(proj).write_bytes(cache_module._MAGIC + mac + b"\n" + payload)
    assert _concise(proj) == expected


def test_committed_cache_cannot_hide_findings(tmp_path: Path, home: Path) -> None:
    """Review #17: a well-formed cache made elsewhere (another key), holding an empty result
    with the right size and digest for the attacker's file, is not trusted."""
    proj = project(tmp_path / "p")
    expected = _concise(proj, "--no-cache")
    # Make the "committed" cache with another HOME, i.e. another machine's key.
    elsewhere = tmp_path / "attacker-home"
    elsewhere.mkdir()
    os.environ["XDG_CACHE_HOME"] = str(elsewhere)
    try:
        _concise(proj)
        _header, data = _genuine_entries(proj)
    finally:
        os.environ["XDG_CACHE_HOME"] = str(home / ".cache")
    for entry in data["entries"].values():
        entry[4] = None  # "nothing in this file"
    # Sign it as the attacker can: with the attacker's key.
    import hmac

    key = (elsewhere / "pinlint" / "cache-key").read_bytes()
    payload = json.dumps(data).encode()
    mac = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    _cache_file(proj).write_bytes(cache_module._MAGIC + mac + b"\n" + payload)
    (proj / "a.py").touch()  # a fresh clone: new mtime
    assert _concise(proj) == expected


def test_cache_dir_in_config_outside_the_project_is_refused(tmp_path: Path, home: Path) -> None:
    """Review #7a."""
    proj = project(
        tmp_path / "p",
        {"m.py": FINDING, "pyproject.toml": '[tool.pinlint]\ncache-dir = "../outside/deep"\n'},
    )
    ran = pinlint("check", ".", cwd=proj)
    assert ran.returncode == 2 and "cache-dir" in ran.stderr and "Traceback" not in ran.stderr
    assert not (tmp_path / "outside").exists()


def test_committed_cache_symlink_is_not_followed(tmp_path: Path, home: Path) -> None:
    """Review #7b: `.pinlint_cache -> ../outside/dir`."""
    outside = tmp_path / "outside"
    outside.mkdir()
    proj = project(tmp_path / "p")
    (proj / ".pinlint_cache").symlink_to(outside)
    assert _concise(proj)[0] == 1
    assert list(outside.iterdir()) == []


def test_dangling_gitignore_symlink_in_cache_is_not_created(tmp_path: Path, home: Path) -> None:
    """Review #7c: a dangling `.pinlint_cache/.gitignore` link must not create its target
    (aimed at ~/.config/git/ignore it would make git ignore every untracked file)."""
    target = home / ".config" / "git" / "ignore"
    target.parent.mkdir(parents=True)
    proj = project(tmp_path / "p")
    (proj / ".pinlint_cache").mkdir()
    (proj / ".pinlint_cache" / ".gitignore").symlink_to(target)
    assert _concise(proj)[0] == 1
    assert not target.exists()
    # The cache itself still works.
    assert "1 cache hits" in pinlint("check", "--timings", ".", cwd=proj).stderr
