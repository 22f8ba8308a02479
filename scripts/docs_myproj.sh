#!/bin/sh
# Lay out the docs' `myproj/` project: the shipped example as a package of its own, in the
# directory given (default: here). The console blocks of docs/ that show `myproj` run after it.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-.}
mkdir -p "$dest/myproj"
cp "$here"/examples/__init__.py "$here"/examples/hot_path.py "$here"/examples/utils.py "$dest/myproj/"
sed -i 's/from examples\.utils/from myproj.utils/' "$dest/myproj/hot_path.py"
