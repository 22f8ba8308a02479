"""Configuration: ``[tool.pinlint]`` in the nearest ``pyproject.toml``, or a ``pinlint.toml``.

Every key is validated: an unknown key, a wrong type or an unknown rule code is a ``ConfigError``
with one clear line (the CLI exits 2), never a traceback.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pinlint import catalog
from pinlint.safeio import MAX_CONFIG_BYTES, printable, project_root, read_regular, within


class ConfigError(Exception):
    pass


#: key -> (python type, description). The docs' configuration reference is generated from
#: this table (and a test checks that every key is documented), so it cannot drift.
KEYS: dict[str, tuple[type, str]] = {
    "select": (
        list,
        "Rule codes or prefixes to enable (`PIN`, `PIN001`, `ALL`). Default: the rules that are on by default (PIN001, PIN002).",
    ),
    "extend-select": (list, 'Rule codes or prefixes to enable in addition to `select` (e.g. `["PIN003"]`).'),
    "ignore": (list, "Rule codes or prefixes to disable."),
    "exclude": (
        list,
        "Glob patterns of files and directories to skip, replacing the defaults (`.git`, `.venv`, `build`, `dist`, `site-packages`, ...).",
    ),
    "extend-exclude": (list, "Glob patterns to skip in addition to `exclude`."),
    "per-file-ignores": (
        dict,
        "A table from a glob pattern (relative to the project root) to the codes ignored in matching files.",
    ),
    "respect-gitignore": (bool, "Skip files ignored by `.gitignore` files. Default: true."),
    "force-exclude": (
        bool,
        "Apply the exclusions even to paths passed explicitly on the command line (useful under pre-commit). Default: false.",
    ),
    "pin-memory-helper": (
        str,
        'The project\'s pin-memory guard the fixer calls when none is found in the file or project: `"package.module:function(device)"` when it takes the device, `"package.module:function()"` when it takes nothing.',
    ),
    "pinned-functions": (
        list,
        "Names (as called, e.g. `make_pinned_buffer` or `utils.pinned_empty`) of project functions that return pinned host tensors.",
    ),
    "host-functions": (
        list,
        "Names of project functions that return new pageable host tensors (their results are PIN002 sources).",
    ),
    "cache-dir": (
        str,
        "Where the result cache lives; must lie inside the project (`--cache-dir` may point anywhere). Default: `.pinlint_cache` in the project root.",
    ),
    "output-format": (
        str,
        "Default output format (`full`, `concise`, `json`, `json-lines`, `github`, `sarif`, `gitlab`, `junit`).",
    ),
    "hot-only": (
        bool,
        "With `pinlint check --profile FILE`: report only the findings whose site ran at least `min-runs` times in the profile (rules the profile cannot measure, PIN004, are kept). Without a profile it does nothing. Default: false.",
    ),
    "min-runs": (
        int,
        "The least run count a finding's site needs in the profile to be reported under `hot-only`. Default: 1.",
    ),
}

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".pinlint_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)


@dataclass
class Config:
    path: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    respect_gitignore: bool = True
    force_exclude: bool = False
    pin_memory_helper: str | None = None
    pinned_functions: list[str] = field(default_factory=list)
    host_functions: list[str] = field(default_factory=list)
    cache_dir: Path | None = None
    output_format: str | None = None
    #: Where the project ends (the repository root): nothing above it is read, nothing outside
    #: it is written through a link found in the repository.
    project_root: Path = field(default_factory=Path.cwd)
    hot_only: bool = False
    min_runs: int | None = None

    def per_file_ignored(self, path: Path) -> set[str]:
        try:
            relative = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            relative = path.as_posix()
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            negate = pattern.startswith("!")
            glob = pattern[1:] if negate else pattern
            hit = fnmatch.fnmatch(relative, glob) or fnmatch.fnmatch(path.name, glob)
            if hit != negate:
                ignored |= resolve_selectors(codes, f"per-file-ignores[{pattern!r}]")
        return ignored


def resolve_selectors(selectors: list[str], where: str) -> set[str]:
    """Expand codes, prefixes (``PIN``, ``PIN00``) and ``ALL`` to rule codes; unknown is an error."""
    codes = catalog.all_codes()
    out: set[str] = set()
    for raw in selectors:
        selector = str(raw).strip()
        if not selector:
            continue
        if selector.upper() == "ALL":
            out |= set(codes)
            continue
        rule = catalog.get_rule(selector)
        if rule is not None:
            out.add(rule.code)
            continue
        matched = {code for code in codes if code.startswith(selector.upper())}
        if not matched:
            raise ConfigError(
                f"unknown rule selector `{printable(selector)}` in {where} (known: {', '.join(codes)}, or a prefix, or ALL)"
            )
        out |= matched
    return out


def _read_toml(path: Path) -> str:
    # Bounded, regular files only (a committed link to /dev/zero must not exhaust memory).
    return read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")


def find_config(start: Path) -> Path | None:
    """The nearest config file from ``start`` up to the project root, never above it: a file
    planted in a shared parent (``/tmp``, a CI workspace, ``$HOME``) must not configure us."""
    start = Path(os.path.abspath(start))
    root = project_root(start)
    for directory in [start, *start.parents]:
        found = config_here(directory)
        if found is not None:
            return found
        if directory == root:
            break
    return None


def config_here(directory: Path) -> Path | None:
    """The config file in ``directory`` itself, if any."""
    # os.path, not pathlib: a run asks this of every directory it checks files in.
    text = str(directory)
    for name in ("pinlint.toml", ".pinlint.toml"):
        if os.path.isfile(os.path.join(text, name)):
            return directory / name
    candidate = directory / "pyproject.toml"
    if os.path.isfile(os.path.join(text, "pyproject.toml")):
        try:
            raw = read_regular(candidate, MAX_CONFIG_BYTES)
        except OSError:
            return candidate  # unreadable, too large, not a file: loading it says so clearly
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
            # A broken pyproject.toml *with* our section is reported when loaded explicitly.
            return candidate if b"[tool.pinlint" in raw else None
        if "pinlint" in data.get("tool", {}):
            return candidate
    return None


def _table(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(_read_toml(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("pinlint", {})
        where = "[tool.pinlint]"
    else:
        table = data.get("tool", {}).get("pinlint", data)
        where = "the top level"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    return table


def parse_override(config_arg: str) -> dict[str, Any]:
    """``--config KEY=VALUE`` as a table (a ``ConfigError`` when it is not TOML)."""
    try:
        return tomllib.loads(config_arg)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--config {config_arg!r} is neither a file nor a valid `key = value` TOML override: {exc}"
        ) from exc


def load(config_arg: str | None, cwd: Path | None = None) -> Config:
    cwd = cwd or Path.cwd()
    overrides: dict[str, Any] = {}
    path: Path | None = None
    if config_arg:
        candidate = Path(config_arg)
        if candidate.is_file():
            path = candidate.resolve()
        elif "=" in config_arg:
            overrides = parse_override(config_arg)
            path = find_config(cwd)
        else:
            raise ConfigError(f"--config {config_arg}: no such file")
    else:
        path = find_config(cwd)
    return load_path(path, cwd, overrides, f"--config {config_arg!r}" if overrides else "")


def load_path(
    path: Path | None, cwd: Path, overrides: dict[str, Any] | None = None, override_where: str = ""
) -> Config:
    """The Config of one configuration file (or the defaults, rooted at ``cwd``), with the
    command line's ``--config KEY=VALUE`` overrides on top. An error names where it is: the file,
    or the override."""
    table = _table(path) if path else {}
    config = Config(
        path=path, root=path.parent if path else cwd, project_root=project_root(path.parent if path else cwd)
    )
    _apply(
        config,
        table,
        f"{path}" if path else "--config",
        "[tool.pinlint]" if path is None or path.name == "pyproject.toml" else path.name,
    )
    if overrides:
        _apply(config, overrides, override_where or "--config", "the override")
    return config


def _did_you_mean(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
    if not close and key.replace("_", "-") in KEYS:
        close = [key.replace("_", "-")]
    return f"; did you mean `{close[0]}`?" if close else ""


def _apply(config: Config, table: dict[str, Any], where: str, section: str) -> None:
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(
                f"{where}: unknown key `{printable(str(key))}` in {section}{_did_you_mean(str(key))} (known keys: {known})"
            )
        expected, _doc = KEYS[key]
        if not isinstance(value, expected) or (expected is list and not all(isinstance(v, str) for v in value)):
            kind = {
                list: "a list of strings",
                dict: "a table",
                bool: "true or false",
                str: "a string",
                int: "an integer",
            }[expected]
            raise ConfigError(f"{where}: `{key}` must be {kind}, got {printable(repr(value))}")
        attr = key.replace("-", "_")
        if key == "per-file-ignores":
            for pattern, codes in value.items():
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"{where}: per-file-ignores[{printable(repr(pattern))}] must be a list of codes")
                resolve_selectors(codes, f"{where}: per-file-ignores[{printable(repr(pattern))}]")
        if key in ("select", "extend-select", "ignore"):
            resolve_selectors(value, f"{where}: `{key}`")
        if key == "min-runs" and (isinstance(value, bool) or value < 1):
            raise ConfigError(f"{where}: `min-runs` must be an integer of at least 1, got {value!r}")
        if key == "cache-dir":
            value = (config.root / value).resolve()
            # A repository's config may not send our writes elsewhere (--cache-dir may).
            if not within(value, config.project_root):
                raise ConfigError(
                    f"{where}: `cache-dir` must lie inside the project ({config.project_root}), got {printable(repr(raw_cache_dir(table)))}"
                )
        if key == "output-format":
            from pinlint.report import FORMATS

            if value not in FORMATS:
                raise ConfigError(
                    f"{where}: `output-format` must be one of {', '.join(FORMATS)}, got {printable(repr(value))}"
                )
        if key == "pin-memory-helper":
            from pinlint.fix.helper import ConfiguredHelper

            try:
                ConfiguredHelper.parse(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from exc
        setattr(config, attr, value)


def raw_cache_dir(table: dict[str, Any]) -> str:
    return str(table.get("cache-dir", ""))


def selected_codes(config: Config, select: list[str] | None, extend_select: list[str], ignore: list[str]) -> set[str]:
    if select:
        base = resolve_selectors(select, "--select")
    elif config.select is not None:
        base = resolve_selectors(config.select, "select")
    else:
        base = {rule.code for rule in catalog.all_rules() if rule.default_enabled}
    base |= resolve_selectors(config.extend_select, "extend-select")
    base |= resolve_selectors(extend_select, "--extend-select")
    base -= resolve_selectors(config.ignore, "ignore")
    base -= resolve_selectors(ignore, "--ignore")
    return base
