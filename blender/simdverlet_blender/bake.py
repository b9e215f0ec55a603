"""The bake: Blender's scene in, a simdverlet simulation stepped over the frame range, a point
cache out.

The simulation runs in metres in Blender's world frame (z up, gravity -9.81 m/s^2 along z): scene
units times the unit scale. A cloth starts from its mesh as it is in the file (the Mesh Cache
modifier the bake adds goes first in the stack, so it replaces those same vertices); a collider is
its evaluated mesh, modifiers and animation included, read again every frame. Everything is
checked before anything is written, so a refused bake leaves no file and no modifier behind.
"""

import os
import re
import struct
import tempfile
import time
from dataclasses import dataclass

import bpy
import numpy as np

MODIFIER = "simdverlet cache"
GRAVITY = 9.81  # m/s^2


class BakeError(Exception):
    """A setting the bake cannot use; the message names the object and what is wrong."""


@dataclass
class BakeResult:
    cloths: int
    frames: int
    seconds: float  # stepping alone, not reading colliders or writing the cache
    paths: list


def _simdverlet():
    try:
        import simdverlet
    except ImportError as error:  # the module is installed beside the add-on by scripts/blender.sh
        raise BakeError(f"the simdverlet module is not installed where Blender finds it ({error})") from None
    return simdverlet


def material_of(settings, sv):
    if settings.preset == "CUSTOM":
        return sv.ClothMaterial(density=settings.density, stretch=settings.stretch, bending=settings.bending)
    return getattr(sv.ClothMaterial, settings.preset.lower())()


def _world(points, matrix):
    m = np.array(matrix, dtype=np.float64)
    return points @ m[:3, :3].T + m[:3, 3]


def _mesh_arrays(mesh):
    mesh.calc_loop_triangles()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
    mesh.vertices.foreach_get("co", co)
    triangles = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    return co.reshape(-1, 3), triangles.reshape(-1, 3)


def _evaluated_arrays(obj, depsgraph):
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        co, triangles = _mesh_arrays(mesh)
    finally:
        evaluated.to_mesh_clear()
    return _world(co, evaluated.matrix_world), triangles


def _pinned_vertices(obj, group_name):
    if not group_name:
        return []
    group = obj.vertex_groups.get(group_name)
    if group is None:
        raise BakeError(f"cloth '{obj.name}': it has no vertex group '{group_name}' to pin")
    return [v.index for v in obj.data.vertices for g in v.groups if g.group == group.index and g.weight > 0.5]


def cache_path(scene, obj):
    folder = scene.simdverlet.cache_directory
    if folder.startswith("//") and not bpy.data.filepath:
        folder = os.path.join(tempfile.gettempdir(), "simdverlet_cache")  # an unsaved file has no folder
    folder = bpy.path.abspath(folder)
    return os.path.join(folder, re.sub(r"[^\w.-]", "_", obj.name) + ".pc2")


def write_pc2(path, frames, start):
    """Blender's point cache: a header, then each frame's vertices as float32 x y z."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<12siiffi", b"POINTCACHE2\0", 1, len(frames[0]), float(start), 1.0, len(frames)))
        for points in frames:
            f.write(np.ascontiguousarray(points, dtype="<f4").tobytes())


def read_pc2(path):
    """The frames of a point cache as an array (frames, vertices, 3)."""
    with open(path, "rb") as f:
        magic, _, points, _, _, samples = struct.unpack("<12siiffi", f.read(32))
        if magic != b"POINTCACHE2\0":
            raise ValueError(f"{path} is not a PC2 point cache")
        return np.frombuffer(f.read(), dtype="<f4").reshape(samples, points, 3)


class _Cloth:
    """One marked mesh: its simdverlet cloth and the frames baked so far, in object space."""

    def __init__(self, obj, sim, sv, scale):
        settings = obj.simdverlet
        co, triangles = _mesh_arrays(obj.data)
        if len(triangles) == 0:
            raise BakeError(f"cloth '{obj.name}' has no faces: a cloth is made of triangles")
        pinned = _pinned_vertices(obj, settings.pin_group)
        # Vertices on no face (loose ones) are left where they are; the cloth is the others,
        # renumbered in order, so its numbering is the mesh's own to the library.
        self.used = np.unique(triangles)
        compact = np.searchsorted(self.used, triangles)
        on_faces = set(self.used.tolist())
        pinned_compact = np.searchsorted(self.used, [p for p in pinned if p in on_faces])
        self.matrix = np.array(obj.matrix_world, dtype=np.float64)
        self.rest = co
        world = _world(co[self.used], self.matrix) * scale
        try:
            self.cloth = sim.add_mesh_cloth(
                vertices=world,
                triangles=compact,
                material=material_of(settings, sv),
                pinned=[int(p) for p in pinned_compact],
                repair=sv.MeshRepair.refuse,
                name=obj.name,
            )
            if settings.self_collision:
                sim.add_self_collision(
                    thickness=settings.thickness * scale, range=self.cloth, cloths=[self.cloth],
                    name=f"self_collision@{obj.name}",
                )
        except (ValueError, IndexError, RuntimeError) as error:
            raise BakeError(f"cloth '{obj.name}': {error}") from None
        self.obj = obj
        self.scale = scale
        self.particles = np.array([self.cloth.index(v) for v in range(len(self.used))])
        self.inverse = np.linalg.inv(self.matrix)
        self.frames = []

    def record(self, sim):
        world = sim.positions()[self.particles].astype(np.float64) / self.scale
        local = self.rest.copy()
        local[self.used] = _world(world, self.inverse)
        self.frames.append(local)


def is_closed(triangles):
    """Whether every edge is shared by exactly two triangles: a body with an inside."""
    edges = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool(np.all(counts == 2))


class _Collider:
    def __init__(self, obj, colliders, depsgraph, scale):
        co, triangles = _evaluated_arrays(obj, depsgraph)
        if len(triangles) == 0:
            raise BakeError(f"collider '{obj.name}' has no faces")
        self.obj = obj
        self.scale = scale
        self.count = len(co)
        self.last = co
        # A closed body keeps cloth on its outside (one-sided: a particle pushed past a face is put
        # back in front of it); an open surface (a floor, a wall) has a side where the cloth is.
        try:
            self.collider = colliders.add_mesh(
                vertices=co * scale,
                triangles=triangles,
                thickness=obj.simdverlet.thickness * scale,
                two_sided=not is_closed(triangles),
            )
        except (ValueError, IndexError) as error:
            raise BakeError(f"collider '{obj.name}': {error}") from None

    def update(self, depsgraph):
        co, _ = _evaluated_arrays(self.obj, depsgraph)
        if len(co) != self.count:
            raise BakeError(f"collider '{self.obj.name}' changed its vertex count from {self.count} to {len(co)}")
        # Only a collider that moved is told so: a moved mesh refits its tree and sweeps its
        # contacts over the motion, which a still one does not need.
        if not np.array_equal(co, self.last):
            self.collider.set_vertices(co * self.scale)
            self.last = co


def marked(scene, kind):
    return [obj for obj in scene.objects if obj.type == "MESH" and obj.simdverlet.kind == kind]


def free_scene(scene):
    """Removes every simdverlet cache modifier and its file; returns how many."""
    freed = 0
    for obj in scene.objects:
        modifier = obj.modifiers.get(MODIFIER) if obj.type == "MESH" else None
        if modifier is None:
            continue
        path = bpy.path.abspath(modifier.filepath)
        obj.modifiers.remove(modifier)
        if os.path.exists(path):
            os.remove(path)
        freed += 1
    return freed


def _add_cache_modifier(obj, path, start):
    modifier = obj.modifiers.new(MODIFIER, "MESH_CACHE")
    modifier.cache_format = "PC2"
    modifier.filepath = path
    modifier.play_mode = "SCENE"
    modifier.time_mode = "FRAME"
    modifier.frame_start = start
    modifier.frame_scale = 1.0
    modifier.deform_mode = "OVERWRITE"
    modifier.forward_axis = "POS_Y"
    modifier.up_axis = "POS_Z"
    # First in the stack: it replaces the vertices the cloth was made from.
    while obj.modifiers[0] != modifier:
        with bpy.context.temp_override(object=obj):
            bpy.ops.object.modifier_move_up(modifier=modifier.name)


def bake_scene(context, progress=None):
    scene = context.scene
    sv = _simdverlet()
    cloth_objects = marked(scene, "CLOTH")
    if not cloth_objects:
        raise BakeError("no object is marked as a simdverlet cloth")
    free_scene(scene)
    scale = scene.unit_settings.scale_length or 1.0
    fps = scene.render.fps / scene.render.fps_base
    start, end = scene.frame_start, scene.frame_end
    substeps = scene.simdverlet.substeps
    remembered = scene.frame_current

    scene.frame_set(start)
    depsgraph = context.evaluated_depsgraph_get()
    sim = sv.Simulation()
    cloths = [_Cloth(obj, sim, sv, scale) for obj in cloth_objects]
    collider_objects = marked(scene, "COLLIDER")
    colliders = []
    if collider_objects:
        world = sim.add_colliders()
        colliders = [_Collider(obj, world, depsgraph, scale) for obj in collider_objects]

    frames = end - start + 1
    stepping = 0.0
    if progress:
        progress.begin(frames)
    try:
        for cloth in cloths:
            cloth.record(sim)
        for frame in range(start + 1, end + 1):
            scene.frame_set(frame)
            depsgraph = context.evaluated_depsgraph_get()
            for collider in colliders:
                collider.update(depsgraph)
            began = time.perf_counter()
            sim.step(dt=1.0 / fps, gravity=(0.0, 0.0, -GRAVITY), substeps=substeps)
            stepping += time.perf_counter() - began
            if sim.diverged():
                raise BakeError(f"the simulation diverged at frame {frame}: try more substeps")
            for cloth in cloths:
                cloth.record(sim)
            if progress:
                progress.update(frame - start)
    finally:
        if progress:
            progress.end()
        scene.frame_set(remembered)

    paths = []
    for cloth in cloths:
        path = cache_path(scene, cloth.obj)
        write_pc2(path, cloth.frames, start)
        _add_cache_modifier(cloth.obj, path, start)
        paths.append(path)
    return BakeResult(cloths=len(cloths), frames=frames, seconds=stepping, paths=paths)
