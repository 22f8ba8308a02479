"""``python -m pinlint`` and the ``pinlint`` console script.

``pinlint --version`` is answered before click, libcst or rich are imported: pre-commit and
editors call it often, and it must start fast.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from pinlint import __version__

        sys.stdout.write(f"pinlint {__version__}\n")
        return
    import gc

    # The parsers allocate millions of small, acyclic nodes; CPython's default (a young-generation
    # collection every 700 allocations) spends about a tenth of a run's time scanning them. Fewer,
    # larger collections (the workers inherit this through fork) still reclaim the rare cycles.
    gc.set_threshold(10_000, 10, 10)
    from pinlint.cli import entry

    entry()


if __name__ == "__main__":
    main()
