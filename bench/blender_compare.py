"""simdverlet's Blender bake against Blender's own cloth modifier on the same scenes, run inside
Blender with the add-on installed (scripts/blender.sh installs it):

    blender -b --factory-startup --python bench/blender_compare.py -- --out bench/results/blender.md

Two scenes, each baked both ways from the same start:
- drop: a 66 x 66 grid sheet, 2 m square, dropped from 0.3 m onto a 0.5 m UV sphere, 90 frames at
  24 fps;
- S1 of the garment scenes (docs/performance.md): a 10 000-vertex irregular 2 m sheet (a jittered
  100 x 100 lattice, random diagonals) dropped 0.3 m onto a 0.5 m icosphere of 5 120 triangles on
  a floor, 240 frames at 60 fps, 0.2 kg/m^2.
Blender's cloth keeps its defaults but for its quality (steps a frame), given per row, and, with
--blender-mass scene, its vertex mass, set to the sheet's 0.2 kg/m^2 instead of its default
0.3 kg a vertex (a few milligrams a vertex: on the drop scene its default air damping then holds
the sheet in the air, 1 mm fallen in 90 frames). The sphere and the floor get Collision modifiers.
simdverlet's cloth is cotton at 0.2 kg/m^2, at each of the --substeps counts. Timed is the whole
bake: for Blender's cloth the frames stepped in order (what baking its cache does), for simdverlet
the bake operator (colliders read from Blender each frame, the cache written). Strain is the
largest |length / rest - 1| of the sheet's edges over the run and over its last second, read
from what each bake shows at every frame.
"""

import argparse
import math
import os
import platform
import sys
import tempfile
import time

import bpy
import numpy as np

bpy.ops.preferences.addon_enable(module="simdverlet_blender")
from simdverlet_blender import bake as bake_module  # noqa: E402 (imported once the add-on is enabled)

DENSITY = 0.2  # kg/m^2


def arguments():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", help="also write the report here")
    parser.add_argument("--scenes", default="drop,s1")
    parser.add_argument("--blender-quality", default="5", help="Blender cloth steps a frame, comma-separated")
    parser.add_argument("--substeps", default="8,32", help="simdverlet substeps a frame, comma-separated")
    parser.add_argument("--blender-mass", choices=["default", "scene"], default="default",
                        help="Blender cloth's vertex mass: its default 0.3 kg, or the sheet's 0.2 kg/m^2")
    return parser.parse_args(argv)


def fresh_scene(frames, fps):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.preferences.addon_enable(module="simdverlet_blender")
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    scene.render.fps = fps
    scene.simdverlet.cache_directory = tempfile.mkdtemp(prefix="simdverlet_compare_")
    return scene


def mesh_object(name, vertices, triangles):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in vertices], [], [tuple(int(i) for i in t) for t in triangles])
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def drop_scene():
    scene = fresh_scene(90, 24)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5, location=(0.0, 0.0, 0.0))
    sphere = bpy.context.object
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=65, y_subdivisions=65, size=2.0, location=(0.0, 0.0, 0.8))
    sheet = bpy.context.object
    return scene, sheet, [sphere]


def irregular_sheet(count=100, side=2.0, height=1.3, seed=12345):
    """S1's sheet: a count x count lattice over side x side metres, interior vertices jittered by up
    to 30 % of the spacing, each cell cut along a random diagonal, flat at `height` (z up)."""
    rng = np.random.default_rng(seed)
    spacing = side / (count - 1)
    u, v = np.meshgrid(np.linspace(-side / 2, side / 2, count), np.linspace(-side / 2, side / 2, count),
                       indexing="ij")
    jitter = rng.uniform(-0.3, 0.3, size=(count, count, 2)) * spacing
    interior = np.zeros((count, count), bool)
    interior[1:-1, 1:-1] = True
    u = u + np.where(interior, jitter[..., 0], 0.0)
    v = v + np.where(interior, jitter[..., 1], 0.0)
    vertices = np.stack([u.ravel(), v.ravel(), np.full(count * count, height)], axis=1)
    cut = rng.integers(0, 2, size=(count - 1, count - 1))
    triangles = []
    for i in range(count - 1):
        for j in range(count - 1):
            a, b, c, d = i * count + j, (i + 1) * count + j, (i + 1) * count + j + 1, i * count + j + 1
            triangles += [(a, b, c), (a, c, d)] if cut[i, j] else [(a, b, d), (b, c, d)]
    return vertices, np.array(triangles)


def s1_scene():
    scene = fresh_scene(240, 60)
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=5, radius=0.5, location=(0.0, 0.0, 0.5))
    sphere = bpy.context.object
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.0, 0.0))
    floor = bpy.context.object
    sheet = mesh_object("sheet", *irregular_sheet())
    return scene, sheet, [sphere, floor]


SCENES = {"drop": drop_scene, "s1": s1_scene}


def world_positions(obj, evaluated=True):
    source = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()) if evaluated else obj
    co = np.empty(len(source.data.vertices) * 3)
    source.data.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world)
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]


def strains(obj, frames, fps):
    edges = np.array([e.vertices[:] for e in obj.data.edges])
    rest = world_positions(obj, evaluated=False)
    rest_length = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)
    per_frame = [np.abs(np.linalg.norm(f[edges[:, 0]] - f[edges[:, 1]], axis=1) / rest_length - 1).max()
                 for f in frames]
    last_second = per_frame[-int(round(fps)):]
    return max(per_frame), max(last_second)


def sheet_area(obj):
    return sum(p.area for p in obj.data.polygons)


def run_blender_cloth(make, quality, mass):
    scene, sheet, colliders = make()
    for obj in colliders:
        obj.modifiers.new("collision", "COLLISION")
    cloth = sheet.modifiers.new("cloth", "CLOTH")
    cloth.settings.quality = quality
    if mass == "scene":
        cloth.settings.mass = DENSITY * sheet_area(sheet) / len(sheet.data.vertices)
    cloth.point_cache.frame_start = scene.frame_start
    cloth.point_cache.frame_end = scene.frame_end
    fps = scene.render.fps
    frames = []
    began = time.perf_counter()
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        frames.append(world_positions(sheet))
    seconds = time.perf_counter() - began
    return seconds, strains(sheet, frames, fps), len(sheet.data.vertices)


def run_simdverlet(make, substeps):
    scene, sheet, colliders = make()
    scene.simdverlet.substeps = substeps
    for obj in colliders:
        obj.simdverlet.kind = "COLLIDER"
        obj.simdverlet.thickness = 0.005
    sheet.simdverlet.kind = "CLOTH"
    sheet.simdverlet.preset = "CUSTOM"
    import simdverlet as sv

    cotton = sv.ClothMaterial.cotton()
    sheet.simdverlet.density, sheet.simdverlet.stretch, sheet.simdverlet.bending = (
        DENSITY, cotton.stretch, cotton.bending)
    began = time.perf_counter()
    assert bpy.ops.simdverlet.bake() == {"FINISHED"}
    seconds = time.perf_counter() - began
    path = bpy.path.abspath(sheet.modifiers[bake_module.MODIFIER].filepath)
    local = bake_module.read_pc2(path).astype(np.float64)
    m = np.array(sheet.matrix_world)
    frames = list(local @ m[:3, :3].T + m[:3, 3])
    return seconds, strains(sheet, frames, scene.render.fps), sv.instruction_set


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    args = arguments()
    rows = []
    for name in args.scenes.split(","):
        make = SCENES[name]
        for quality in (int(q) for q in args.blender_quality.split(",")):
            theirs, (b_peak, b_late), vertices = run_blender_cloth(make, quality, args.blender_mass)
            frames = bpy.context.scene.frame_end
            rows.append(f"| {name} ({vertices} vertices, {frames} frames) | Blender cloth, quality {quality}, {args.blender_mass} mass | "
                        f"{theirs:.2f} | {1e3 * theirs / frames:.1f} | {100 * b_peak:.1f} % | {100 * b_late:.1f} % | |")
        for substeps in (int(n) for n in args.substeps.split(",")):
            ours, (peak, late), isa = run_simdverlet(make, substeps)
            rows.append(f"| {name} | simdverlet, {substeps} substeps ({isa}) | {ours:.2f} | {1e3 * ours / frames:.1f} | "
                        f"{100 * peak:.1f} % | {100 * late:.1f} % | {theirs / ours:.1f}x |")
    report = "\n".join([
        "# Benchmark result: the Blender add-on against Blender's cloth modifier",
        "",
        "- command: `blender -b --factory-startup --python bench/blender_compare.py -- "
        f"--scenes {args.scenes} --blender-quality {args.blender_quality} --substeps {args.substeps} --blender-mass {args.blender_mass}`",
        f"- Blender {bpy.app.version_string} (Debian), Python {platform.python_version()}; "
        f"CPU: {cpu_name()}, {os.cpu_count()} cores visible; date: {time.strftime('%Y-%m-%d')}",
        "",
        "Seconds for the whole bake, ms a frame, and the sheet's largest edge strain over the run and",
        "over its last second. The last column: the time of Blender's cloth (the last quality row of",
        "the scene) over simdverlet's.",
        "",
        "| scene | solver | bake s | ms a frame | peak strain | last second | speed-up |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
    ])
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


main()
