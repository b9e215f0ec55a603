"""simdverlet: SIMD Verlet cloth and rope physics from Python.

The classes wrap the header-only C++ library of the same name. ``Simulation`` is the float32
simulation (the fast one: twice the SIMD lanes), ``Simulation64`` the float64 one; every class a
float64 simulation hands out carries the same suffix (``Cloth64``, ``ColliderSet64``, ...).

    import simdverlet as sv
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=32, height=32, spacing=0.25, pinned=lambda col, row: row == 0)
    for frame in range(120):
        sim.step(gravity=(0, 9.81, 0), iterations=16)   # +y is down in the library's pictures
    print(sim.positions()[cloth.index((16, 31))])

Options are keyword arguments with the C++ defaults. Positions (``x``, ``y``, ``z``), previous
positions (``px``, ``py``, ``pz``) and ``inverse_mass`` are zero-copy NumPy views, valid until the
next step or particle addition. Bad input raises ValueError, IndexError or RuntimeError with the
library's message and leaves the simulation unchanged. ``simdverlet.batch`` runs many scenes on
Dask.

The extension is built once per x86-64 instruction set (SSE2, AVX2, AVX-512); importing the
package loads the widest one this processor runs, and ``instruction_set`` names it. Setting
``SIMDVERLET_INSTRUCTION_SET`` to ``sse2``, ``avx2`` or ``avx512`` before the import picks one; all
three give the same bits.
"""

import importlib as _importlib
import os as _os

from . import _cpu


def _load_extension():
    supported = _cpu.supported()
    wanted = _os.environ.get("SIMDVERLET_INSTRUCTION_SET", "")
    if wanted and wanted not in supported:
        raise ImportError(
            f"SIMDVERLET_INSTRUCTION_SET={wanted!r}: this processor runs {', '.join(supported)}"
        )
    return _importlib.import_module(f"._simdverlet_{wanted or supported[-1]}", __name__)


_extension = _load_extension()
globals().update({name: getattr(_extension, name) for name in dir(_extension) if not name.startswith("_")})
_extension_doc = _extension.__doc__

__all__ = [name for name in dir(_extension) if not name.startswith("_")]
