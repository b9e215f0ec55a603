#!/usr/bin/env bash
# The Blender add-on: installs Debian's blender (3.4, on the distribution's Python 3.11) if it is
# missing, builds and installs the simdverlet package (scripts/python.sh), copies the package and
# the add-on where that Blender finds them, and runs the add-on's headless tests.
#   bash scripts/blender.sh            install into ~/.config/blender/3.4/scripts and test
#   BLENDER_USER_SCRIPTS=DIR bash scripts/blender.sh   another scripts folder (Blender reads the
#                                                      same variable when it starts)
# Blender runs without the user site, so the package goes into its add-ons' module folder
# (<scripts>/addons/modules); NumPy comes from the distribution, which Blender's Python sees.
# Then, in Blender: Edit > Preferences > Add-ons, enable "simdverlet cloth".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v blender >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends blender
    else
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends blender
    fi
fi
bash scripts/python.sh

scripts="${BLENDER_USER_SCRIPTS:-${HOME}/.config/blender/3.4/scripts}"
package=$(build/python-venv/bin/python -c "import pathlib, simdverlet; print(pathlib.Path(simdverlet.__file__).parent)")
mkdir -p "${scripts}/addons/modules"
rm -rf "${scripts}/addons/modules/simdverlet" "${scripts}/addons/simdverlet_blender"
cp -r "${package}" "${scripts}/addons/modules/simdverlet"
cp -r blender/simdverlet_blender "${scripts}/addons/simdverlet_blender"
find "${scripts}/addons" -name __pycache__ -prune -exec rm -rf {} +
echo "blender: the add-on and the simdverlet module are in ${scripts}/addons"

export BLENDER_USER_SCRIPTS="${scripts}"
blender -b --factory-startup --python-exit-code 1 --python blender/tests/test_addon.py
