#!/usr/bin/env bash
# Install what is missing, then configure, build and run the tests with g++ and with clang++,
# warnings as errors (workflow presets `ci` and `ci-clang`, build/dev and build/clang).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --workflow --preset ci
cmake --workflow --preset ci-clang
