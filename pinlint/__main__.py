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
    from pinlint.cli import entry

    entry()


if __name__ == "__main__":
    main()
