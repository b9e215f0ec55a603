#!/usr/bin/env bash
# The viewer's headless check: every scene runs under Xvfb and writes a screenshot, which
# check_screenshot.py reads back: the right size, a scene drawn over most of it, and cloth (the
# warm colours only cloths are drawn in) in a visible share of it. hello_cloth runs with the
# scripted hand (--drive), which grabs and cuts through the mouse code paths.
#   screenshot_test.sh VIEWER_BINARY OUTPUT_DIR
# Exits 77 (ctest: skipped) when the viewer was not built or Xvfb is missing.
set -euo pipefail
viewer=${1:-}
out=${2:?usage: screenshot_test.sh VIEWER_BINARY OUTPUT_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z $viewer || ! -x $viewer ]]; then
    echo "SKIPPED: the viewer was not built (GLFW, OpenGL, Dear ImGui or stb missing)"
    exit 77
fi
if ! command -v xvfb-run >/dev/null 2>&1; then
    echo "SKIPPED: xvfb-run not found (Debian: xvfb)"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIPPED: python3 not found"
    exit 77
fi
mkdir -p "$out"
# Mesa's software rasteriser; its GL 3.3 core needs no GPU.
export LIBGL_ALWAYS_SOFTWARE=1
shoot() { # scene, frames, extra flags...
    local scene=$1 frames=$2 png="$out/$1.png"
    shift 2
    rm -f "$png"
    xvfb-run -a -s "-screen 0 1280x720x24" "$viewer" --scene "$scene" --frames "$frames" --screenshot "$png" "$@" |
        tee "$out/$scene.log"
    python3 "$here/check_screenshot.py" "$png" --width 1280 --height 720
}
# The first scene with the scripted hand: the grab must have moved a particle, the knife cut springs.
shoot hello_cloth 240 --drive
moved=$(sed -nE 's/.*moved it ([0-9.]+) units.*/\1/p' "$out/hello_cloth.log")
cut=$(sed -nE 's/.*the knife cut ([0-9]+) springs.*/\1/p' "$out/hello_cloth.log")
if ! awk -v m="${moved:-0}" -v c="${cut:-0}" 'BEGIN { exit !(m > 0.05 && c > 0) }'; then
    echo "FAIL: the scripted hand moved the grabbed particle ${moved:-?} units and cut ${cut:-?} springs"
    exit 1
fi
for scene in flag rope_bridge pile cape garment; do
    shoot "$scene" 90
done
