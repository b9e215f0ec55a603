"""simdverlet for Blender: bake cloth with the simdverlet library instead of Blender's cloth modifier.

Mark a mesh as a simdverlet cloth (a fabric preset or physical values, a vertex group of pinned
vertices, self-collision) or as a collider in its Physics properties, then Bake: every cloth is
simulated over the scene's frame range and written to a point cache (PC2) that a Mesh Cache
modifier plays back. Colliders are read from their evaluated mesh every frame, so animated and
deforming ones push the cloth. Blender's z is up and its unit scale gives metres: the cloth falls
along -z at 9.81 m/s^2 in the scene's units.
"""

bl_info = {
    "name": "simdverlet cloth",
    "author": "the simdverlet authors",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Properties > Physics > simdverlet",
    "description": "Bakes cloth with the simdverlet library (SIMD Verlet physics) into a point cache",
    "category": "Physics",
}

import bpy

from . import bake as _bake


FABRICS = [
    ("COTTON", "Cotton", "Woven cotton shirting"),
    ("SILK", "Silk", "Light, limp silk"),
    ("DENIM", "Denim", "Heavy, stiff denim"),
    ("JERSEY", "Jersey", "A knit: soft to stretch"),
    ("LEATHER", "Leather", "Thick garment leather"),
    ("CUSTOM", "Custom", "Density, stretch and bending given below"),
]


class SimdverletObjectSettings(bpy.types.PropertyGroup):
    """What simdverlet does with one object (Object.simdverlet)."""

    kind: bpy.props.EnumProperty(
        name="Kind",
        items=[
            ("NONE", "None", "Not simulated by simdverlet"),
            ("CLOTH", "Cloth", "A cloth, baked into a point cache"),
            ("COLLIDER", "Collider", "A body cloth collides with, read from its evaluated mesh each frame"),
        ],
        default="NONE",
    )
    preset: bpy.props.EnumProperty(name="Fabric", items=FABRICS, default="COTTON")
    density: bpy.props.FloatProperty(
        name="Density", description="Mass per area, kg/m^2", default=0.15, min=1e-4, soft_max=2.0, precision=3
    )
    stretch: bpy.props.FloatProperty(
        name="Stretch", description="Stretch stiffness, N/m", default=300.0, min=1e-3, soft_max=1e5
    )
    bending: bpy.props.FloatProperty(
        name="Bending", description="Bending rigidity, N m", default=1e-5, min=0.0, soft_max=1e-3, precision=7
    )
    pin_group: bpy.props.StringProperty(
        name="Pin Group", description="Vertex group whose vertices (weight > 0.5) do not move"
    )
    self_collision: bpy.props.BoolProperty(name="Self Collision", description="Keep the cloth off itself")
    thickness: bpy.props.FloatProperty(
        name="Thickness",
        description="Self-collision distance for a cloth, contact distance for a collider (scene units)",
        default=0.01,
        min=1e-5,
        soft_max=0.2,
        precision=4,
    )


class SimdverletSceneSettings(bpy.types.PropertyGroup):
    """The bake's step (Scene.simdverlet)."""

    substeps: bpy.props.IntProperty(
        name="Substeps", description="Solver substeps per frame", default=8, min=1, soft_max=64
    )
    cache_directory: bpy.props.StringProperty(
        name="Cache",
        description="Folder of the point caches; beside the .blend file by default (the system's "
        "temporary folder while the file is unsaved)",
        default="//simdverlet_cache",
        subtype="DIR_PATH",
    )


class SIMDVERLET_OT_bake(bpy.types.Operator):
    """Simulate every simdverlet cloth over the scene's frame range into a point cache"""

    bl_idname = "simdverlet.bake"
    bl_label = "Bake simdverlet Cloth"

    def execute(self, context):
        try:
            result = _bake.bake_scene(context, progress=_Progress(context))
        except _bake.BakeError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        self.report(
            {"INFO"},
            f"simdverlet: baked {result.cloths} cloth(s), {result.frames} frames in {result.seconds:.2f} s",
        )
        return {"FINISHED"}


class SIMDVERLET_OT_free_bake(bpy.types.Operator):
    """Remove the simdverlet point caches and their Mesh Cache modifiers"""

    bl_idname = "simdverlet.free_bake"
    bl_label = "Free simdverlet Bake"

    def execute(self, context):
        freed = _bake.free_scene(context.scene)
        self.report({"INFO"}, f"simdverlet: freed {freed} bake(s)")
        return {"FINISHED"}


class _Progress:
    """Blender's progress indicator in the status bar; quiet in background mode."""

    def __init__(self, context):
        self.window_manager = context.window_manager

    def begin(self, total):
        self.window_manager.progress_begin(0, max(total, 1))

    def update(self, done):
        self.window_manager.progress_update(done)

    def end(self):
        self.window_manager.progress_end()


class PHYSICS_PT_simdverlet(bpy.types.Panel):
    bl_label = "simdverlet"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "MESH"

    def draw(self, context):
        layout = self.layout
        settings = context.object.simdverlet
        layout.prop(settings, "kind")
        if settings.kind == "CLOTH":
            layout.prop(settings, "preset")
            if settings.preset == "CUSTOM":
                column = layout.column(align=True)
                column.prop(settings, "density")
                column.prop(settings, "stretch")
                column.prop(settings, "bending")
            layout.prop_search(settings, "pin_group", context.object, "vertex_groups")
            row = layout.row()
            row.prop(settings, "self_collision")
            row.prop(settings, "thickness")
        elif settings.kind == "COLLIDER":
            layout.prop(settings, "thickness")
        layout.separator()
        layout.prop(context.scene.simdverlet, "substeps")
        layout.prop(context.scene.simdverlet, "cache_directory")
        row = layout.row()
        row.operator(SIMDVERLET_OT_bake.bl_idname, icon="PHYSICS")
        row.operator(SIMDVERLET_OT_free_bake.bl_idname, icon="TRASH")


CLASSES = (
    SimdverletObjectSettings,
    SimdverletSceneSettings,
    SIMDVERLET_OT_bake,
    SIMDVERLET_OT_free_bake,
    PHYSICS_PT_simdverlet,
)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.simdverlet = bpy.props.PointerProperty(type=SimdverletObjectSettings)
    bpy.types.Scene.simdverlet = bpy.props.PointerProperty(type=SimdverletSceneSettings)


def unregister():
    del bpy.types.Scene.simdverlet
    del bpy.types.Object.simdverlet
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
