"""One package for any x86-64: the extension is built once per instruction set, the package imports
the widest the processor runs, and every build gives the same bits. Each build runs in its own
interpreter, picked with SIMDVERLET_INSTRUCTION_SET before the import."""

import os
import subprocess
import sys

import pytest

from simdverlet import _cpu

# A scene that reaches the kernels of every stage family: springs, a collider, self-collision,
# tethers and wind on a grid, then a material cloth held by the implicit solve; both in float32
# and float64, on the vector path and the scalar twin. Prints one line per run: the build's
# instruction set, then a digest of the positions.
SCENE = """
import hashlib
import numpy as np
import simdverlet as sv

def springs(cls):
    sim = cls()
    cloth = sim.add_cloth(width=24, height=24, spacing=0.25, pinned=lambda c, r: r == 0 and c % 5 == 0)
    sim.add_colliders().add_sphere(center=(3.0, 3.0, 0.5), radius=1.0)
    sim.add_self_collision(thickness=0.2)
    sim.add_tethers(cloth, slack=1.1)
    sim.add_wind(velocity=(0, 0, 3.0), cloths=[cloth])
    return sim

def material(cls, fabric):
    sim = cls()
    sim.add_cloth(width=17, height=17, spacing=0.02, material=fabric, pinned=[(0, 0), (16, 0)])
    sim.add_colliders().add_sphere(center=(0.16, 0.25, 0.0), radius=0.1)
    return sim

digest = hashlib.sha256()
for cls, fabric in ((sv.Simulation, sv.ClothMaterial.cotton()), (sv.Simulation64, sv.ClothMaterial64.cotton())):
    for make in (lambda: springs(cls), lambda: material(cls, fabric)):
        for vectorized in (True, False):
            sim = make()
            sim.vectorized = vectorized
            for _ in range(40):
                sim.step(dt=1 / 60, gravity=(0, 9.81, 0), substeps=4)
            assert not sim.diverged()
            digest.update(sim.positions().tobytes())
print(sv.instruction_set, digest.hexdigest())
"""

# What simd::arch_name() says each build was compiled for.
COMPILED_FOR = {"sse2": "sse2", "avx2": "fma3+avx2", "avx512": "avx512bw"}


def run_scene(instruction_set):
    env = dict(os.environ, SIMDVERLET_INSTRUCTION_SET=instruction_set)
    done = subprocess.run([sys.executable, "-c", SCENE], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    name, digest = done.stdout.split()
    return name, digest


def test_every_build_this_processor_runs_steps_to_the_same_bits():
    sets = _cpu.supported()
    assert sets[0] == "sse2"  # any x86-64
    results = {isa: run_scene(isa) for isa in sets}
    for isa, (name, _) in results.items():
        assert name == COMPILED_FOR[isa]
    digests = {digest for _, digest in results.values()}
    assert len(digests) == 1, results


def test_the_widest_build_is_imported_by_default():
    done = subprocess.run([sys.executable, "-c", "import simdverlet as sv; print(sv.instruction_set)"],
                          env={k: v for k, v in os.environ.items() if k != "SIMDVERLET_INSTRUCTION_SET"},
                          capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == COMPILED_FOR[_cpu.supported()[-1]]


@pytest.mark.parametrize("wanted", ["neon", "avx1024"])
def test_an_instruction_set_the_processor_does_not_run_is_refused_naming_what_it_runs(wanted):
    env = dict(os.environ, SIMDVERLET_INSTRUCTION_SET=wanted)
    done = subprocess.run([sys.executable, "-c", "import simdverlet"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert f"SIMDVERLET_INSTRUCTION_SET='{wanted}': this processor runs sse2" in done.stderr
