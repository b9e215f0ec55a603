#!/usr/bin/env bash
# Install what is missing, then configure, build and run the tests with g++ and with clang++,
# warnings as errors (workflow presets `ci` and `ci-clang`, build/dev and build/clang), again under
# the sanitizers (`asan`), and fuzz the simulation for 30 seconds (`fuzz-smoke`, build/fuzz).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --workflow --preset ci
cmake --workflow --preset ci-clang
cmake --workflow --preset asan       # the tests under AddressSanitizer + UndefinedBehaviorSanitizer
cmake --workflow --preset fuzz-smoke # 30 s of libFuzzer over the whole simulation (clang)
