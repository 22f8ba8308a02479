#!/usr/bin/env bash
# Run pinlint's GPU checks unattended, in one call, on a CUDA machine without network access:
#
#   scripts/gpu_check.sh [OUT_DIR]        (default: $OUT, else ./gpu-verdicts)
#
# 1. `pinlint probe` (both halves of the host-blocking claim, memcpy kinds vs the watch);
# 2. the `gpu`-marked tests (tests/runtime), with a JUnit report.
#
# It uses the torch already installed for $PYTHON (default: python3) and never installs torch.
# pinlint itself is taken from this checkout through PYTHONPATH (no install, no build backend).
# Every verdict goes to OUT_DIR: verdicts.txt (one line per check), summary.json, and each step's
# own output (probe.txt, probe.json with its chrome traces, gpu-tests.txt, gpu-tests.xml).
#
# Exit status: 0 every check passed; 1 a check failed (or a tool is missing); 3 no CUDA device
# (nothing was proven: never a pass). Without CUDA it still writes "no CUDA" verdicts.
set -u

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${1:-${OUT:-$PWD/gpu-verdicts}}"
PY="${PYTHON:-python3}"
STEP_TIMEOUT="${PINLINT_GPU_STEP_TIMEOUT:-420}"
mkdir -p "$OUT_DIR" || { echo "gpu_check.sh: cannot create $OUT_DIR" >&2; exit 1; }
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
VERDICTS="$OUT_DIR/verdicts.txt"
: >"$VERDICTS"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$REPO" || exit 1

verdict() { echo "$1" | tee -a "$VERDICTS"; }

# A step must not hang the whole run: `timeout` where the machine has it.
bounded() {
  if command -v timeout >/dev/null 2>&1; then timeout -k 10 "$STEP_TIMEOUT" "$@"; else "$@"; fi
}

# -- environment ----------------------------------------------------------------------------------
"$PY" - >"$OUT_DIR/env.txt" 2>&1 <<'EOF'
import platform, sys
print("python", platform.python_version(), sys.executable)
try:
    import torch
except Exception as exc:  # reported, then the steps below say "torch missing"
    print("torch: not importable:", exc)
    raise SystemExit(0)
print("torch", torch.__version__, "cuda build", torch.version.cuda)
print("cuda available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0), "count", torch.cuda.device_count())
EOF
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >>"$OUT_DIR/env.txt" 2>&1
cat "$OUT_DIR/env.txt"

if ! "$PY" -c "import torch" >/dev/null 2>&1; then
  verdict "probe: FAIL (torch is not importable by $PY; this script never installs it)"
  verdict "gpu-tests: FAIL (torch is not importable)"
  printf '{"probe": "fail", "gpu_tests": "fail", "cuda": false, "reason": "torch missing"}\n' >"$OUT_DIR/summary.json"
  exit 1
fi
if "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  CUDA=true
else
  CUDA=false
fi

# -- 1. pinlint probe -----------------------------------------------------------------------------
# The CLI form when its dependencies are there; the same code as a module otherwise.
if "$PY" -c "import click" >/dev/null 2>&1; then
  PROBE=("$PY" -m pinlint probe --json "$OUT_DIR/probe.json")
else
  PROBE=("$PY" -m pinlint.runtime.gpu_check --json "$OUT_DIR/probe.json")
fi
bounded "${PROBE[@]}" >"$OUT_DIR/probe.txt" 2>&1
PROBE_RC=$?
cat "$OUT_DIR/probe.txt"
case "$PROBE_RC" in
  0) PROBE_V=pass; verdict "probe: PASS" ;;
  3) PROBE_V=skipped; verdict "probe: SKIPPED, no CUDA device (not a pass)" ;;
  124|137) PROBE_V=fail; verdict "probe: FAIL (timed out after ${STEP_TIMEOUT}s)" ;;
  *) PROBE_V=fail; verdict "probe: FAIL (exit $PROBE_RC; see probe.txt)" ;;
esac

# -- 2. the gpu-marked tests ----------------------------------------------------------------------
TESTS_V=fail
if ! "$PY" -c "import pytest" >/dev/null 2>&1; then
  verdict "gpu-tests: FAIL (pytest is not installed for $PY)"
else
  # Load the plugin explicitly unless an installed entry point already does.
  PLUGIN=$("$PY" -c "from importlib.metadata import entry_points as e; print('' if any(p.value == 'pinlint.runtime.pytest_plugin' for p in e(group='pytest11')) else '-p pinlint.runtime.pytest_plugin')")
  # Only the files that hold gpu tests: the others may need packages this machine lacks.
  mapfile -t GPU_FILES < <(grep -rl --include='test_*.py' 'pytest.mark.gpu' tests | sort)
  # shellcheck disable=SC2086 # PLUGIN is zero or two words
  bounded "$PY" -m pytest $PLUGIN -p no:cacheprovider -m gpu -rA -q "${GPU_FILES[@]}" \
    --junitxml "$OUT_DIR/gpu-tests.xml" >"$OUT_DIR/gpu-tests.txt" 2>&1
  TESTS_RC=$?
  tail -n 40 "$OUT_DIR/gpu-tests.txt"
  # Skipped GPU tests never count as passed: read the counts from the JUnit report.
  read -r PASSED SKIPPED FAILED < <("$PY" - "$OUT_DIR/gpu-tests.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
except Exception:
    print(0, 0, 1)
    raise SystemExit
skipped = sum(1 for c in cases if c.find("skipped") is not None)
failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
print(len(cases) - skipped - failed, skipped, failed)
EOF
  )
  if [ "$TESTS_RC" -eq 0 ] && [ "$SKIPPED" -eq 0 ] && [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]; then
    TESTS_V=pass; verdict "gpu-tests: PASS ($PASSED passed)"
  elif [ "$CUDA" = false ] && [ "$FAILED" -eq 0 ] && [ "$TESTS_RC" -le 5 ]; then
    TESTS_V=skipped; verdict "gpu-tests: SKIPPED, no CUDA device ($SKIPPED skipped; not a pass)"
  else
    verdict "gpu-tests: FAIL (exit $TESTS_RC; $PASSED passed, $SKIPPED skipped, $FAILED failed; see gpu-tests.txt)"
  fi
fi

printf '{"cuda": %s, "probe": "%s", "probe_exit": %s, "gpu_tests": "%s"}\n' \
  "$CUDA" "$PROBE_V" "$PROBE_RC" "$TESTS_V" >"$OUT_DIR/summary.json"
echo "verdicts in $OUT_DIR"
if [ "$PROBE_V" = pass ] && [ "$TESTS_V" = pass ]; then exit 0; fi
if [ "$CUDA" = false ] && [ "$PROBE_V" = skipped ] && [ "$TESTS_V" != fail ]; then exit 3; fi
exit 1
