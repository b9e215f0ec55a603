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
"""

from ._simdverlet import *  # noqa: F401,F403
from ._simdverlet import __doc__ as _extension_doc  # noqa: F401

__all__ = [name for name in dir() if not name.startswith("_")]
