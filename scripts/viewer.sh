#!/usr/bin/env bash
# Install what is missing, build the interactive viewer (Release, in build/demo) and start it.
# Arguments go to the viewer: bash scripts/viewer.sh --scene pile
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset demo >/dev/null
if ! cmake --build build/demo --target viewer -j 2; then
    echo "viewer.sh: the viewer did not build; it needs GLFW, OpenGL, Dear ImGui and stb" \
         "(Debian: libglfw3-dev libgl-dev libimgui-dev libstb-dev)" >&2
    exit 1
fi
exec build/demo/examples/viewer/viewer "$@"
