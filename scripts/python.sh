#!/usr/bin/env bash
# Build, test and install the Python module for the distribution's /usr/bin/python3: installs the
# Debian packages it needs (pybind11, NumPy, Dask's distributed, pytest, matplotlib; nothing from
# any other source, so no build isolation), runs the `python` workflow preset (configure
# build/python, build the extension, run python/tests with pytest), then copies the package into
# that interpreter's user site-packages, so `/usr/bin/python3 -c "import simdverlet"` works from
# any folder (another place: configure with -DSIMDVERLET_PYTHON_INSTALL_DIR=...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh python
cmake --workflow --preset python
cmake --install build/python --component python
site=$(/usr/bin/python3 -c "import site; print(site.getusersitepackages())")
echo "python: simdverlet installed in ${site}"
(cd /tmp && /usr/bin/python3 -c "import simdverlet; print('python: import simdverlet works:', simdverlet.__file__)")
