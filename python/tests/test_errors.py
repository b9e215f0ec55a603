"""Bad input from Python: the library's message as ValueError, IndexError or RuntimeError, and the
simulation exactly as it was (its saved bytes unchanged).

One test per kind of input the library refuses: pinning without per-particle masses, an index or
neighbour out of range, a bad step, a NaN or negative stiffness, a degenerate plane normal, a
removal that would renumber a cloth, grid coordinates on a mesh cloth, a handle used after its
stage or simulation is gone, bad stage options, a corrupt snapshot; and what only Python can send
(arrays of the wrong shape, a callable that raises). Three refusals of the C++ API cannot be
reached from Python, because what they guard is not offered there: a slot index out of 0..3
(Python's connect picks the slot), an attach with no free slot (constraint layers make room), and
an SDF collider's max_steps < 1 (SDF colliders take a C++ callable).
"""

import gc
import math

import numpy as np
import pytest

import simdverlet as sv

NAN = math.nan


@pytest.fixture
def scene():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=6, height=6, pinned=lambda c, r: r == 0)
    strand = sim.add_strand(count=5)
    world = sim.add_colliders()
    sim.step(gravity=(0, 9.81, 0))
    return sim, cloth, strand, world


def unchanged(sim, call, error, match):
    """Runs `call`, which must raise `error` with a message matching `match`, and checks that the
    simulation's snapshot bytes did not change."""
    before = sim.save()
    with pytest.raises(error, match=match):
        call()
    assert sim.save() == before


def test_pinning_without_per_particle_masses(scene):
    sim = sv.Simulation(sv.Masses.unit)
    sim.add_particle((0, 0, 0))
    unchanged(sim, lambda: sim.add_particle((1, 0, 0), 0.0), RuntimeError, "unit masses")
    unchanged(sim, lambda: sim.set_inverse_mass(0, 0.0), RuntimeError, "unit masses")


def test_a_neighbour_or_particle_out_of_range(scene):
    sim, *_ = scene
    n = sim.size()
    unchanged(sim, lambda: sim.connect(0, n, 1.0, 1.0), IndexError, str(n))
    unchanged(sim, lambda: sim.position(n), IndexError, str(n))
    unchanged(sim, lambda: sim.set_position(n + 5, (0, 0, 0)), IndexError, str(n + 5))
    unchanged(sim, lambda: sim.connect(3, 3, 1.0, 1.0), ValueError, "3")


def test_a_non_positive_or_non_finite_step(scene):
    sim, *_ = scene
    unchanged(sim, lambda: sim.step(dt=0.0), ValueError, "dt")
    unchanged(sim, lambda: sim.step(dt=NAN), ValueError, "dt")
    unchanged(sim, lambda: sim.step(damping=1.5), ValueError, "damping")
    unchanged(sim, lambda: sim.step(gravity=(0, NAN, 0)), ValueError, "gravity")
    unchanged(sim, lambda: sim.step(iterations=-1), ValueError, "iterations")
    unchanged(sim, lambda: sim.step(substeps=0), ValueError, "substeps")


def test_a_nan_or_negative_stiffness(scene):
    sim, *_ = scene
    unchanged(sim, lambda: sim.connect(0, 1, 1.0, NAN), ValueError, "nan|NaN")
    unchanged(sim, lambda: sim.connect(0, 1, -1.0, 1.0), ValueError, "-1")
    unchanged(sim, lambda: sim.add_cloth(stiffness=NAN), ValueError, "stiffness")
    unchanged(sim, lambda: sim.add_strand(stiffness=-2.0), ValueError, "stiffness")


def test_a_degenerate_plane_normal_or_bad_collider_value(scene):
    sim, _, _, world = scene
    unchanged(sim, lambda: world.add_plane(normal=(0, 0, 0)), ValueError, "degenerate")
    unchanged(sim, lambda: world.add_sphere(radius=-1.0), ValueError, "-1")
    unchanged(sim, lambda: world.add_sphere(friction=-0.5), ValueError, "friction")
    assert len(world) == 0
    ball = world.add_sphere()
    with pytest.raises(ValueError, match="restitution"):
        ball.restitution = 2.0
    assert ball.restitution == 0.0


def test_a_removal_that_would_renumber_a_cloth(scene):
    sim, cloth, *_ = scene
    unchanged(sim, lambda: sim.queue_remove(cloth.base() + 3), RuntimeError, "renumber")
    assert sim.pending_removals() == 0


def test_grid_coordinates_on_a_mesh_cloth_and_outside_a_grid(scene):
    sim, cloth, *_ = scene
    unchanged(sim, lambda: cloth.index((6, 0)), IndexError, r"\(6, 0\)")
    unchanged(sim, lambda: cloth.index(36), IndexError, "36")
    mesh = sim.add_mesh_cloth(vertices=[(0, 0, 0), (1, 0, 0), (0, 1, 0)], triangles=[(0, 1, 2)])
    unchanged(sim, lambda: mesh.index((0, 0)), RuntimeError, "grid")
    unchanged(sim, lambda: mesh.width(), RuntimeError, "grid")


def test_a_handle_used_after_its_stage_or_cloth_was_removed(scene):
    sim, cloth, strand, world = scene
    assert world.remove() and world.removed()
    unchanged(sim, lambda: world.add_sphere(), RuntimeError, "removed")
    assert not world.remove()
    assert strand.remove()
    unchanged(sim, lambda: strand.pin(0), RuntimeError, "removed")


def test_a_handle_used_after_its_simulation_is_gone():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=4, height=4, pinned=[(0, 0)])
    tethers = sim.add_tethers(cloth)
    del sim
    gc.collect()
    assert cloth.removed()
    with pytest.raises(RuntimeError, match="destroyed"):
        cloth.position(0)
    with pytest.raises(RuntimeError, match="destroyed"):
        tethers.slack = 1.5


def test_a_cloth_of_another_simulation(scene):
    sim, *_ = scene
    other = sv.Simulation()
    foreign = other.add_cloth(width=4, height=4)
    unchanged(sim, lambda: sim.add_tethers(foreign), ValueError, "not in this simulation")
    unchanged(sim, lambda: sim.add_self_collision(cloths=[foreign]), ValueError, foreign.name())


def test_bad_stage_options(scene):
    sim, cloth, *_ = scene
    unchanged(sim, lambda: sim.add_self_collision(thickness=0.0), ValueError, "thickness")
    unchanged(sim, lambda: sim.add_tethers(cloth, slack=0.5), ValueError, "slack")
    unchanged(sim, lambda: sim.add_tethers(cloth, anchors=[10_000]), IndexError, "10000")
    unchanged(sim, lambda: sim.add_tethers(cloth, islands=0), ValueError, "islands >= 1, got 0")
    unchanged(sim, lambda: sim.add_strain_limit(max_compression=1.0), ValueError, "compression")
    unchanged(sim, lambda: sim.add_motion_constraints(max_distance=-1.0), ValueError, "max_distance")
    unchanged(sim, lambda: sim.add_tearing(max_strain=0.0), ValueError, "strain")
    unchanged(sim, lambda: sim.add_wind(drag=-1.0), ValueError, "drag")
    unchanged(sim, lambda: sim.add_colliders(relaxations=0), ValueError, "relaxations")
    unchanged(sim, lambda: sim.add_colliders(range=(5, 2)), ValueError, "begin after end")
    unchanged(sim, lambda: sim.cut((0, 0, 0), (0, 0, 0)), ValueError, "zero length")


def test_motion_targets_of_the_wrong_count_or_not_finite(scene):
    sim, cloth, *_ = scene
    motion = sim.add_motion_constraints(range=cloth, max_distance=0.5)
    n = cloth.count()
    unchanged(sim, lambda: motion.set_targets(np.zeros((n - 1, 3)), np.zeros((n - 1, 3))), ValueError, str(n))
    bad = np.zeros((n, 3))
    bad[7, 1] = NAN
    unchanged(sim, lambda: motion.set_targets(bad, np.zeros((n, 3))), ValueError, "target 7")
    unchanged(sim, lambda: motion.set_max_distance(np.full(n, -1.0)), ValueError, "max distance 0")


def test_arrays_of_the_wrong_shape_name_what_they_were(scene):
    sim, _, _, world = scene
    unchanged(sim, lambda: sim.add_mesh_cloth(vertices=np.zeros((4, 2)), triangles=[(0, 1, 2)]), ValueError,
              r"mesh vertices must be an \(n, 3\) array, got shape \(4, 2\)")
    unchanged(sim, lambda: sim.add_mesh_cloth(vertices=np.zeros((3, 3)), triangles=[(0, 1, -1)]), IndexError,
              "index -1")
    unchanged(sim, lambda: sim.add_mesh_cloth(vertices=[(0, 0, 0), (1, 0, 0), (0, 1, 0)], triangles=[(0, 1, 5)]),
              ValueError, "vertex 5")
    unchanged(sim, lambda: world.add_mesh(vertices=[(0, 0, 0), (1, 0, NAN), (0, 1, 0)], triangles=[(0, 1, 2)]),
              ValueError, "vertex 1")
    unchanged(sim, lambda: sim.add_cloth(width=3, height=3, position=np.zeros((8, 3))), ValueError, "8 points")
    unchanged(sim, lambda: sim.add_cloth(width=3, height=3, pinned=[(3, 0)]), IndexError, r"\(3, 0\)")


def test_a_pinned_callable_that_raises_adds_nothing(scene):
    sim, *_ = scene

    def broken(col, row):
        raise KeyError("no such pin")

    unchanged(sim, lambda: sim.add_cloth(width=3, height=3, pinned=broken), KeyError, "no such pin")


def test_a_corrupt_or_truncated_snapshot(scene, tmp_path):
    sim, *_ = scene
    good = sim.save()
    unchanged(sim, lambda: sim.load(good[: len(good) // 2]), RuntimeError, "cannot load snapshot")
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF
    unchanged(sim, lambda: sim.load(bytes(flipped)), RuntimeError, "cannot load snapshot")
    unchanged(sim, lambda: sim.load(str(tmp_path / "missing.bin")), RuntimeError, "missing.bin")
    other = sv.Simulation()
    other.add_particle((0, 0, 0))
    unchanged(sim, lambda: sim.load(other.save()), RuntimeError, "cannot restore a snapshot of 1 particles")


def test_a_snapshot_of_the_other_scalar_type():
    sim32, sim64 = sv.Simulation(), sv.Simulation64()
    sim32.add_particle((0, 0, 0))
    sim64.add_particle((0, 0, 0))
    unchanged(sim64, lambda: sim64.load(sim32.save()), RuntimeError, "cannot load snapshot")
    with pytest.raises(TypeError):
        sim64.restore(sim32.snapshot())
