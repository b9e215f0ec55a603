#!/usr/bin/env bash
# Build, install and test the Python package the way Python users install one: installs the Debian
# packages it needs (nothing from any other source, so pip runs without build isolation), makes a
# virtual environment at build/python-venv that sees the distribution's packages (NumPy, Dask,
# pytest, pybind11), installs the package into it with `pip install --no-build-isolation ./python`
# (setup.py: one build of the extension per x86-64 instruction set), and runs the pytest suite
# from python/, against the installed package.
#   bash scripts/python.sh          build, install, test
#   bash scripts/python.sh --wheel  also build a wheel with `python3 -m build` into python/dist/
# Then: build/python-venv/bin/python -c "import simdverlet" (or activate the environment).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh python
venv=build/python-venv
if [ ! -x "${venv}/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "${venv}"
fi
"${venv}/bin/python" -m pip install --no-build-isolation --no-deps --no-index --force-reinstall ./python
if [ "${1:-}" = "--wheel" ]; then
    /usr/bin/python3 -m build --no-isolation --wheel --outdir python/dist python
fi
(cd python && SIMDVERLET_SOURCE_DIR="$(pwd)/.." "../${venv}/bin/python" -m pytest -q)
echo "python: simdverlet installed in ${venv} (the ${venv}/bin/python interpreter)"
