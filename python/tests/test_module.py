"""The Python module: what it binds behaves as the C++ library does, measured."""

import math
import os
import pathlib
import pydoc

import numpy as np
import pytest

import simdverlet as sv

GRAVITY = (0.0, 9.81, 0.0)  # +y is down in the library's pictures
SOURCE = pathlib.Path(os.environ.get("SIMDVERLET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def hanging_sheet(sim, width=12, height=12, **options):
    return sim.add_cloth(width=width, height=height, pinned=lambda col, row: row == 0, **options)


def settle(sim, frames, **params):
    for _ in range(frames):
        sim.step(**{"gravity": GRAVITY, **params})


# ---- particles and views ------------------------------------------------------------------


def test_views_share_the_simulations_memory_and_writing_moves_a_particle():
    sim = sv.Simulation()
    i = sim.add_particle((1.0, 2.0, 3.0))
    x, px = sim.x, sim.px
    x[i] = 5.0
    px[i] = 5.0  # moved at rest: both positions
    assert sim.position(i)[0] == np.float32(5.0)
    assert np.shares_memory(sim.x, x)
    sim.step()  # no gravity, no springs: it stays where the view put it
    assert sim.x[i] == np.float32(5.0)
    assert sim.x.dtype == np.float32 and sim.x.shape == (1,)


def test_a_view_fetched_after_a_step_reads_the_new_positions():
    sim = sv.Simulation()
    i = sim.add_particle((0.0, 0.0, 0.0))
    sim.step(gravity=GRAVITY)
    sim.step(gravity=GRAVITY)
    assert sim.y[i] == sim.position(i)[1] > 0
    assert sim.py[i] < sim.y[i]  # the previous position is behind it along +y


def test_inverse_masses_are_a_read_only_view_that_follows_pinning():
    sim = sv.Simulation()
    sim.add_particle((0, 0, 0))
    sim.add_particle((1, 0, 0), 0.25)
    w = sim.inverse_mass
    assert list(w) == [1.0, 0.25]
    with pytest.raises(ValueError):
        w[0] = 3.0
    sim.set_inverse_mass(0, 0.0)
    assert sim.inverse_mass[0] == 0.0
    assert sim.inverse_mass.flags.writeable is False


def test_float64_simulations_hand_out_float64_views():
    sim = sv.Simulation64()
    sim.add_particle((0.1, 0.2, 0.3))
    assert sim.x.dtype == np.float64 and sim.x[0] == 0.1


def test_a_view_keeps_its_simulation_alive():
    sim = sv.Simulation()
    sim.add_particle((7.0, 0.0, 0.0))
    x = sim.x
    del sim
    assert x[0] == 7.0  # the array's base holds the simulation


# ---- springs, cloths, strands ---------------------------------------------------------------


def test_a_bob_on_one_spring_rests_where_stiffness_times_iterations_balances_gravity():
    # Static balance: k x iterations x extension = m g, so the extension is 9.81 / (60 x 8).
    sim = sv.Simulation64()
    anchor = sim.add_particle((0, 0, 0), 0.0)
    bob = sim.add_particle((0, 1, 0))
    sim.connect(anchor, bob, 1.0, 60.0)
    settle(sim, 2000, iterations=8)
    extension = sim.position(bob)[1] - 1.0
    assert extension == pytest.approx(9.81 / 480, rel=1e-3)


def test_a_hanging_grid_sheet_stretches_under_its_weight_and_pins_hold():
    sim = sv.Simulation()
    cloth = hanging_sheet(sim, spacing=0.5, stiffness=60)
    settle(sim, 240, iterations=16)
    top = cloth.position((5, 0))
    bottom = cloth.position((5, 11))
    assert tuple(top) == (2.5, 0.0, 0.0)  # pinned: exactly where it was laid out
    length = bottom[1] - top[1]
    assert 11 * 0.5 < length < 11 * 0.5 * 1.3  # stretched, by less than 30 %
    assert 0.0 < sim.peak_strain(cloth) < 0.3
    assert not sim.diverged()


def test_a_grid_cloth_knows_its_triangles_and_grid():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=5, height=4)
    assert cloth.is_grid() and (cloth.width(), cloth.height()) == (5, 4)
    assert cloth.triangles().shape == (2 * 4 * 3, 3)
    assert cloth.index((2, 3)) == cloth.base() + 3 * 5 + 2 == cloth.index(17)


def test_a_layout_from_an_array_places_every_particle():
    sim = sv.Simulation()
    w, h = 4, 3
    layout = np.array([(c * 0.5, 0.0, r * 0.5) for r in range(h) for c in range(w)], dtype=np.float32)
    cloth = sim.add_cloth(width=w, height=h, spacing=0.5, position=layout)
    assert np.array_equal(sim.positions()[cloth.base() : cloth.end()], layout)


def irregular_square(n=6, seed=3):
    """A 5 x 5 square of n x n vertices, interior ones jittered, each cell split along a random diagonal.

    Edges near 1: the default material is stable for edges of 0.5 and longer (docs/guide.md)."""
    rng = np.random.default_rng(seed)
    vertices = []
    for r in range(n):
        for c in range(n):
            jitter = rng.uniform(-0.2, 0.2, 2) if 0 < r < n - 1 and 0 < c < n - 1 else (0.0, 0.0)
            vertices.append((5 * (c + jitter[0]) / (n - 1), 5 * (r + jitter[1]) / (n - 1), 0.0))
    triangles = []
    for r in range(n - 1):
        for c in range(n - 1):
            a, b, d, e = r * n + c, r * n + c + 1, (r + 1) * n + c, (r + 1) * n + c + 1
            triangles += [(a, b, e), (a, e, d)] if rng.random() < 0.5 else [(a, b, d), (b, e, d)]
    return np.array(vertices), np.array(triangles)


def test_a_mesh_cloth_from_arrays_has_a_particle_per_vertex_and_hangs_from_its_pins():
    vertices, triangles = irregular_square()
    sim = sv.Simulation()
    cloth = sim.add_mesh_cloth(vertices=vertices, triangles=triangles, stiffness=15, bend_stiffness=3,
                               pinned=[v for v in range(6)])  # the top row (y = 0), on springs
    assert cloth.count() == len(vertices) and not cloth.is_grid()
    assert cloth.triangles().shape == triangles.shape
    settle(sim, 180, iterations=16)
    assert tuple(cloth.position(0)) == (0.0, 0.0, 0.0)
    lowest = max(cloth.position(v)[1] for v in range(30, 36))
    assert 5.0 < lowest < 7.5  # hangs below its rest length, stretched < 50 %
    assert not sim.diverged()
    with pytest.raises(RuntimeError, match="grid"):
        cloth.index((1, 1))


def test_a_reordered_mesh_cloth_answers_by_the_vertex_numbers_it_was_given():
    # add_mesh_cloth reorders particles for locality; position, pin, is_pinned and teleport still
    # speak of the caller's vertex numbers, as index maps each to its particle.
    vertices, triangles = irregular_square()
    sim = sv.Simulation64()
    cloth = sim.add_mesh_cloth(vertices=vertices, triangles=triangles, pinned=[5])
    assert any(cloth.index(v) != v for v in range(len(vertices)))
    for v in range(len(vertices)):
        assert np.allclose(cloth.position(v), vertices[v])
        assert np.allclose(sim.positions()[cloth.index(v)], vertices[v])
    assert cloth.is_pinned(5) and not cloth.is_pinned(4)
    cloth.teleport(7, (9.0, 9.0, 9.0))
    assert tuple(cloth.position(7)) == (9.0, 9.0, 9.0)


def test_a_mesh_cloth_takes_a_triangle_mesh_loaded_from_an_obj():
    if not hasattr(sv, "load_obj_mesh"):
        pytest.skip("built without tinyobjloader")
    mesh = sv.load_obj_mesh(str(SOURCE / "tests" / "data" / "cape_up.obj"))
    assert mesh.vertices.shape[1] == 3 and mesh.triangles.shape[1] == 3
    sim = sv.Simulation()
    cloth = sim.add_mesh_cloth(mesh=mesh)
    assert cloth.count() == mesh.vertices.shape[0]
    assert np.allclose(sim.positions()[cloth.index(0)], mesh.vertices[0], atol=1e-6)


def test_a_material_cloth_takes_si_values_or_a_preset_and_refuses_a_solver_unit_knob_beside_it():
    # A 0.3 m strip of 2 cm edges hung from its top row: with a material it stretches by
    # density g L^2 / (2 stretch) in all (a strip free to narrow), whatever its edges' stiffness
    # ratio to their masses; the presets order their bending silk < cotton < denim < leather.
    silk, cotton, denim, leather = (sv.ClothMaterial.silk(), sv.ClothMaterial.cotton(),
                                    sv.ClothMaterial.denim(), sv.ClothMaterial.leather())
    assert silk.bending < cotton.bending < denim.bending < leather.bending
    assert "bending=" in repr(cotton)
    columns, rows, spacing = 6, 15, 0.02
    vertices = np.array([(c * spacing, r * spacing, 0.0) for r in range(rows + 1) for c in range(columns + 1)])
    triangles = []
    for r in range(rows):
        for c in range(columns):
            a = r * (columns + 1) + c
            triangles += [(a, a + 1, a + columns + 2), (a, a + columns + 2, a + columns + 1)]
    fabric = sv.ClothMaterial64(density=0.2, stretch=100.0, bending=0.0, damping=5.0)
    sim = sv.Simulation64()
    cloth = sim.add_mesh_cloth(vertices=vertices, triangles=np.array(triangles), material=fabric,
                               pinned=list(range(columns + 1)), reorder=False)
    for _ in range(240):
        sim.step(dt=1 / 60, gravity=(0, 9.81, 0), substeps=4)
    length = rows * spacing
    stretched = cloth.position(rows * (columns + 1) + columns // 2)[1] - length
    assert stretched == pytest.approx(0.2 * 9.81 * length**2 / (2 * 100.0), rel=0.1)
    with pytest.raises(ValueError, match="material and stiffness"):
        sv.Simulation64().add_mesh_cloth(vertices=vertices, triangles=np.array(triangles), material=fabric,
                                         stiffness=3.0)
    # The grid of the same strip is the same cloth, to the bit.
    grid_sim = sv.Simulation64()
    grid = grid_sim.add_cloth(width=columns + 1, height=rows + 1, material=fabric, spacing=spacing,
                              pinned=[(c, 0) for c in range(columns + 1)])
    for _ in range(240):
        grid_sim.step(dt=1 / 60, gravity=(0, 9.81, 0), substeps=4)
    for axis in ("x", "y", "z"):
        assert np.array_equal(getattr(grid_sim, axis), getattr(sim, axis))
    assert grid.position((columns // 2, rows))[1] - length == stretched
    with pytest.raises(ValueError, match="material and mass"):
        sv.Simulation64().add_cloth(width=4, height=4, material=fabric, mass=2.0)


def test_a_strand_hangs_at_its_length_plus_each_segments_static_stretch():
    # Segment k from the top carries the 10 - k nodes below it: it stretches by (10 - k) g / (k x
    # iterations), so the rope hangs 2 + 9.81 x 55 / 960 long.
    sim = sv.Simulation64()
    rope = sim.add_strand(count=11, spacing=0.2, stiffness=60, pinned=[0])
    settle(sim, 1500, iterations=16)
    top, end = rope.position(0), rope.position(10)
    assert end[1] - top[1] == pytest.approx(2.0 + 9.81 * 55 / 960, rel=0.01)
    assert abs(end[0] - top[0]) < 0.05  # hangs straight down


# ---- colliders -----------------------------------------------------------------------------


def sheet_over_ball(sim, n=16, spacing=0.25):
    cloth = sim.add_cloth(width=n, height=n, spacing=spacing, stiffness=60,
                          position=lambda c, r: (c * spacing, 0.0, r * spacing))
    centre = (n - 1) * spacing / 2
    world = sim.add_colliders()
    ball = world.add_sphere(center=(centre, 1.5, centre), radius=1.0, friction=0.5)
    return cloth, world, ball, np.array([centre, 1.5, centre])


def test_a_sheet_dropped_on_a_ball_rests_on_it_and_never_inside():
    sim = sv.Simulation()
    cloth, world, ball, centre = sheet_over_ball(sim)
    deepest = math.inf
    for _ in range(120):
        sim.step(gravity=GRAVITY, iterations=16)
        deepest = min(deepest, np.linalg.norm(sim.positions() - centre, axis=1).min())
    assert deepest >= 1.0 - 1e-4
    assert world.contacts() > 0 and ball.contacts() == world.contacts()


def test_a_particle_falling_on_a_triangle_mesh_floor_stops_on_it_with_either_detection():
    floor = (np.array([(-5, 2, -5), (5, 2, -5), (5, 2, 5), (-5, 2, 5)], dtype=float),
             np.array([(0, 1, 2), (0, 2, 3)]))
    for detection in (sv.ContactDetection.per_call, sv.ContactDetection.per_substep):
        sim = sv.Simulation()
        p = sim.add_particle((0.3, 0.0, 0.2))
        mesh = sim.add_colliders().add_mesh(vertices=floor[0], triangles=floor[1], thickness=0.05,
                                            detection=detection)
        settle(sim, 120, substeps=4)
        assert sim.position(p)[1] == pytest.approx(2.0 - 0.05, abs=1e-4)
        assert mesh.contacts() == 1


# ---- stages --------------------------------------------------------------------------------


def test_self_collision_keeps_two_colliding_particles_a_thickness_apart():
    sim = sv.Simulation64()
    a = sim.add_particle((0.0, 0, 0))
    b = sim.add_particle((1.0, 0, 0))
    sim.set_position(a, (0.0, 0, 0))
    sc = sim.add_self_collision(thickness=0.4)
    closest = math.inf
    for _ in range(60):
        sim.set_position(a, sim.position(a) + np.array([0.02, 0, 0]), keep_velocity=False)
        sim.set_position(b, sim.position(b) - np.array([0.02, 0, 0]), keep_velocity=False)
        sim.step()
        closest = min(closest, np.linalg.norm(sim.position(a) - sim.position(b)))
    assert closest >= 0.4 - 1e-9
    assert sc.contacts() == 1


def test_tethers_hold_every_particle_within_its_rest_distance_of_an_anchor():
    sim = sv.Simulation()
    cloth = hanging_sheet(sim, stiffness=5)  # soft: it would stretch far without them
    tethers = sim.add_tethers(cloth, slack=1.0)
    settle(sim, 240, iterations=4)
    assert tethers.tethered() == cloth.count()  # the anchors too, at distance 0
    worst = 0.0
    for p in range(cloth.base(), cloth.end()):
        anchor = tethers.anchor_of(p)
        if anchor is not None and anchor != p:
            d = np.linalg.norm(sim.position(p) - sim.position(anchor))
            worst = max(worst, d / tethers.rest_distance(p))
    assert worst <= 1.0 + 1e-5


def test_a_sheet_hung_from_two_corners_is_tethered_to_both_and_its_top_edge_stays_straight():
    sag = {}
    for islands in (1, 4):
        sim = sv.Simulation()
        cloth = sim.add_cloth(width=12, height=12, stiffness=5, pinned=[(0, 0), (11, 0)])
        tethers = sim.add_tethers(cloth, islands=islands)
        assert tethers.islands() == 2
        settle(sim, 240, iterations=4)
        top = np.array([sim.position(cloth.base() + c) for c in range(12)])
        sag[islands] = np.abs(top[:, 1] - top[0, 1]).max()
    # The top edge is exactly as long as the corners are apart: held from both it cannot sag.
    assert sag[4] < 1e-3
    assert sag[1] > 0.5


def test_strain_limiting_holds_a_soft_sheet_to_its_bound_in_every_direction():
    strains = {}
    for limited in (False, True):
        sim = sv.Simulation()
        cloth = sim.add_cloth(width=12, height=12, stiffness=5, pinned=lambda c, r: (c, r) in ((0, 0), (11, 0)))
        if limited:
            limit = sim.add_strain_limit(cloth, max_stretch=0.1, passes=8)
        settle(sim, 240, iterations=4)
        strains[limited] = sim.peak_strain(cloth)
    assert strains[False] > 0.3
    assert strains[True] < 0.15
    assert limit.limited() > 0


def test_motion_constraints_keep_particles_near_targets_set_each_frame_from_arrays():
    sim = sv.Simulation()
    cloth = hanging_sheet(sim, width=6, height=6)
    motion = sim.add_motion_constraints(range=cloth, max_distance=0.1)
    for frame in range(60):
        targets = sim.positions()[cloth.base() : cloth.end()].copy()
        targets[:, 2] = 1.0 + 0.01 * frame  # an animation carrying the sheet along +z
        motion.set_targets(targets, np.tile([0.0, 0.0, -1.0], (cloth.count(), 1)))
        sim.step(gravity=GRAVITY)
    free = [p for p in range(cloth.base(), cloth.end()) if sim.inverse_mass[p] > 0]
    assert np.all(np.abs(sim.z[free] - (1.0 + 0.01 * 59)) <= 0.1 + 1e-5)
    assert motion.size() == cloth.count()


def test_wind_blows_a_hanging_sheet_downwind():
    sim = sv.Simulation()
    cloth = hanging_sheet(sim)
    wind = sim.add_wind(velocity=(0, 0, 8.0), cloths=[cloth])
    settle(sim, 60)
    assert sim.positions()[cloth.index((6, 11))][2] > 0.5
    assert wind.time() == pytest.approx(1.0, rel=1e-4)


def test_a_cut_across_a_sheet_severs_one_spring_per_column_and_the_render_mesh_loses_a_row():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=6, height=6, spacing=1.0)
    before = cloth.render_mesh().triangles.shape[0]
    cut = sim.cut((-1.0, 2.5, 0.0), (7.0, 2.5, 0.0))
    assert cut == 6  # the vertical spring of each of the six columns
    assert cloth.render_mesh().triangles.shape[0] == before - 2 * 5


def test_tearing_rips_a_sheet_pulled_past_its_strain():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=6, height=6, spacing=0.5, pinned=lambda c, r: r == 0)
    tearing = sim.add_tearing(max_strain=0.5)
    cloth.teleport((2, 5), (1.0, 9.0, 0.0))
    cloth.pin((2, 5))
    sim.step()
    assert tearing.torn() >= 1


def test_write_obj_writes_the_render_mesh(tmp_path):
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=4, height=3)
    mesh = cloth.render_mesh()
    assert mesh.positions.shape == (12, 3) and mesh.uvs.shape == (12, 2) and mesh.triangles.shape == (12, 3)
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0)
    path = tmp_path / "sheet.obj"
    sv.write_obj(str(path), mesh)
    lines = path.read_text().splitlines()
    assert sum(line.startswith("v ") for line in lines) == 12
    assert sum(line.startswith("f ") for line in lines) == 12


# ---- snapshots, executors, determinism -------------------------------------------------------


def busy_scene(cls=sv.Simulation):
    sim = cls()
    cloth = sim.add_cloth(width=16, height=16, spacing=0.25, pinned=lambda c, r: r == 0 and c % 5 == 0)
    sim.add_colliders().add_sphere(center=(2.0, 3.0, 0.5), radius=1.0)
    sim.add_self_collision(thickness=0.2)
    sim.add_tethers(cloth, slack=1.1)
    sim.add_wind(velocity=(0, 0, 3.0), cloths=[cloth])
    return sim


def test_a_snapshot_saved_to_bytes_or_a_file_replays_the_same_bits(tmp_path):
    sim = busy_scene()
    settle(sim, 20)
    saved = sim.save()
    sim.save(str(tmp_path / "snap.bin"))
    snap = sim.snapshot()
    settle(sim, 20)
    reference = sim.positions().tobytes()
    for restore in (lambda: sim.load(saved), lambda: sim.load(str(tmp_path / "snap.bin")),
                    lambda: sim.restore(snap)):
        restore()
        settle(sim, 20)
        assert sim.positions().tobytes() == reference


def test_threads_vector_and_scalar_paths_give_the_same_bits():
    results = []
    for setup in ("serial", "scalar", "threads"):
        sim = busy_scene()
        if setup == "scalar":
            sim.vectorized = False
        if setup == "threads":
            if not sv.has_openmp:
                continue
            sim.set_executor(sv.OpenMPExecutor(2), grain=64)
        settle(sim, 30)
        results.append(sim.positions().tobytes())
    assert all(r == results[0] for r in results)


def test_the_float64_simulation_runs_the_same_scene():
    sim = busy_scene(sv.Simulation64)
    settle(sim, 30)
    assert sim.positions().dtype == np.float64 and not sim.diverged()


def test_a_diverging_scene_reports_it():
    sim = sv.Simulation()
    a = sim.add_particle((0, 0, 0), 0.0)
    b = sim.add_particle((1, 0, 0))
    sim.connect(a, b, 1.0, 1e6)  # far past what one iteration of dt = 1/60 holds
    sim.set_position(b, (3.0, 0.0, 0.0))
    settle(sim, 200, iterations=8)
    assert sim.diverged()


# ---- help --------------------------------------------------------------------------------


def test_help_describes_the_simulation_and_its_keywords():
    text = pydoc.render_doc(sv.Simulation)
    for expected in ("add_cloth", "add_mesh_cloth", "step", "iterations", "substeps", "ValueError", "zero-copy"):
        assert expected in text
    assert "simdverlet.batch" in sv.__doc__


def test_a_second_thread_stepping_the_same_simulation_is_refused_not_raced():
    import threading

    sim = sv.Simulation()
    sim.add_cloth(width=128, height=128, pinned=lambda c, r: r == 0)
    refused = []

    def stepper():
        for _ in range(20):
            try:
                sim.step(gravity=GRAVITY, substeps=4)
            except RuntimeError as error:
                refused.append(str(error))

    threads = [threading.Thread(target=stepper) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert refused and all("already stepping" in r for r in refused)
    assert sim.step_count() == 4 * (40 - len(refused)) and not sim.diverged()


def test_a_range_read_back_from_a_handle_is_accepted_again():
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=4, height=4)
    world = sim.add_colliders()
    assert world.range == (0, None)  # follows the simulation's size
    world.range = (3, None)
    assert world.range == (3, None)
    world.range = cloth
    assert world.range == (cloth.base(), cloth.end())
    other = sim.add_colliders(name="other", range=world.range)
    assert other.range == (0, 16)
