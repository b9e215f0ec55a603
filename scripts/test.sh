#!/usr/bin/env bash
# Install what is missing, check the formatting (.clang-format), then configure, build and run the
# tests with g++ and with clang++, warnings as errors (workflow presets `ci` and `ci-clang`,
# build/dev and build/clang; the g++ build for the SSE2 baseline, with the examples, the clang++ one
# for this machine's widest instruction set, -march=native, so both batch widths are tested), again
# under the sanitizers with clang++ (`asan`), build and install the Python package with pip, build its wheel
# and run its pytest suite (scripts/python.sh, build/python-venv), and fuzz the simulation with
# 6000 seeded inputs (`fuzz-smoke`, build/fuzz).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Runs one stage and says how long it took, so a slow CI run shows which stage grew.
stage() {
    local start=$SECONDS
    "$@"
    echo "test.sh: '$*' took $((SECONDS - start)) s"
}

bash scripts/install-deps.sh
stage bash scripts/check-format.sh         # fails on any source clang-format would change
stage cmake --workflow --preset ci
stage cmake --workflow --preset ci-clang
stage cmake --workflow --preset asan       # the tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang++)
stage bash scripts/python.sh --wheel       # pip install ./python into build/python-venv, a wheel, pytest from python/
stage cmake --workflow --preset fuzz-smoke # 6000 seeded libFuzzer inputs over the whole simulation (clang)
