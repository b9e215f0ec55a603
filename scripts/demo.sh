#!/usr/bin/env bash
# Install what is missing, build the examples in Release and run hello_cloth
# (its pictures land in build/demo/examples/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --workflow --preset demo
