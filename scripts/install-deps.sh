#!/usr/bin/env bash
# Install the Debian/Ubuntu packages simdverlet needs to build, test, benchmark and run its
# examples. Installs only what is missing; does nothing (and needs no root) when all is there.
#   bash scripts/install-deps.sh          everything (the test script builds the Python module too)
#   bash scripts/install-deps.sh python   only what the Python module needs (scripts/python.sh)
set -euo pipefail

# The Python package (python/, optional): setuptools, wheel, build and venv to build and install it
# with pip (no build isolation: nothing from any other source), pybind11 and the interpreter's
# headers to compile it, NumPy for its arrays, Dask's distributed scheduler for simdverlet.batch,
# pytest for its tests, matplotlib for examples/python. All from the distribution, for its
# /usr/bin/python3.
python_packages=(
    g++
    libxsimd-dev
    libeigen3-dev
    libtinyobjloader-dev # load_obj_mesh
    python3
    python3-dev
    python3-pip
    python3-venv
    python3-setuptools
    python3-wheel
    python3-build
    pybind11-dev
    python3-pybind11
    python3-numpy
    python3-pytest
    python3-distributed # also provides the dask-scheduler and dask-worker commands
    python3-matplotlib
)

packages=(
    cmake
    make
    g++
    clang
    clang-format    # scripts/check-format.sh: the test script fails on unformatted sources
    libomp-dev      # OpenMP for clang (the OpenMP executor adapter is tested with both compilers)
    git
    python3         # tests/check_figures.py parses the generated SVG with a real XML parser
    libxsimd-dev
    libeigen3-dev
    catch2
    libbenchmark-dev
    libtbb-dev
    libtinyobjloader-dev # optional: load_obj_mesh (obj_mesh.hpp) and its tests
    assimp-testmodels    # tests/cloth_solve.cpp: character and asset OBJ files simulated as material cloths
    # The viewer (examples/viewer, optional: built when these are found) and its headless
    # screenshot test under Xvfb with Mesa's software OpenGL.
    libglfw3-dev
    libgl-dev
    libimgui-dev       # Dear ImGui 1.86; its libimgui.a carries the GLFW and OpenGL 3 backends
    libstb-dev         # stb_image_write: the screenshot PNG
    xvfb
    xauth              # xvfb-run needs it
    libgl1-mesa-dri    # llvmpipe: OpenGL 3.3 core without a GPU
    "${python_packages[@]}"
)

case "${1:-all}" in
    all) ;;
    python) packages=("${python_packages[@]}") ;;
    *)
        echo "install-deps: unknown group '$1' (all, python)" >&2
        exit 2
        ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: not a Debian-like system (no dpkg/apt-get); install these yourself:" >&2
    echo "  ${packages[*]}" >&2
    exit 0
fi

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "install-deps: missing ${missing[*]}, and not root and no sudo to install them" >&2
        exit 1
    fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
