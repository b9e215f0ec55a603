"""The guide's Blender figures: a baked drape rendered with Workbench, and the add-on's panel.

    xvfb-run -a -s "-screen 0 1280x900x24" blender -b --factory-startup --python blender/tools/figures.py -- docs/figures render
    xvfb-run -a -s "-screen 0 1280x900x24" blender --factory-startup build/simdverlet_figures.blend \
        --python blender/tools/figures.py -- docs/figures panel

The first builds a silk sheet over a sphere, bakes it with the add-on, renders the last frame to
blender_drape.png (Workbench, drawn by Mesa's software OpenGL on Xvfb) and saves the scene; the
second opens that scene in a window (a file given on the command line skips the splash), shows the
sheet's Physics properties and saves that editor to blender_panel.png, then quits.
"""

import os
import sys
import tempfile
import traceback

import bpy

ARGS = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
OUT = ARGS[0] if ARGS else "."
MODE = ARGS[1] if len(ARGS) > 1 else "render"


def build_scene():
    bpy.ops.preferences.addon_enable(module="simdverlet_blender")
    scene = bpy.context.scene
    for obj in list(scene.objects):
        if obj.type == "MESH":
            bpy.data.objects.remove(obj)
    scene.frame_start, scene.frame_end = 1, 48
    scene.simdverlet.cache_directory = tempfile.mkdtemp(prefix="simdverlet_figures_")
    bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=0.4, location=(0.0, 0.0, 0.4))
    ball = bpy.context.view_layer.objects.active
    bpy.ops.object.shade_smooth()
    ball.simdverlet.kind = "COLLIDER"
    ball.simdverlet.thickness = 0.005
    bpy.ops.mesh.primitive_plane_add(size=4.0)
    floor = bpy.context.view_layer.objects.active
    floor.simdverlet.kind = "COLLIDER"
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=60, y_subdivisions=60, size=1.6, location=(0.0, 0.0, 1.0))
    sheet = bpy.context.view_layer.objects.active
    sheet.name = "sheet"
    bpy.ops.object.shade_smooth()
    sheet.simdverlet.kind = "CLOTH"
    sheet.simdverlet.preset = "SILK"
    sheet.simdverlet.self_collision = True
    camera = scene.camera
    camera.location = (2.6, -2.6, 1.9)
    camera.rotation_euler = (1.15, 0.0, 0.785)
    return scene, sheet


def render(scene):
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "RANDOM"
    scene.render.resolution_x, scene.render.resolution_y = 960, 720
    scene.render.filepath = os.path.join(OUT, "blender_drape.png")
    scene.frame_set(scene.frame_end)
    bpy.ops.render.render(write_still=True)


def screenshot_panel(sheet):
    """The Properties editor, showing the sheet's Physics tab, saved alone."""
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "PROPERTIES")
    path = os.path.join(OUT, "blender_panel.png")
    with bpy.context.temp_override(window=window, screen=window.screen, area=area):
        bpy.ops.screen.screenshot_area(filepath=path)
    print("figures: wrote", path)


def render_mode():
    scene, sheet = build_scene()
    assert bpy.ops.simdverlet.bake() == {"FINISHED"}
    render(scene)
    # The scene for the panel run, in the build tree (run from the repository root).
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(os.path.join("build", "simdverlet_figures.blend")))


def panel_mode():
    # Blender runs this script before its window is up: the screenshot is taken from a timer, once
    # the window has drawn the panel, and Blender quits after it (or after a failure).
    bpy.ops.preferences.addon_enable(module="simdverlet_blender")
    sheet = bpy.data.objects["sheet"]

    def show():
        bpy.context.view_layer.objects.active = sheet
        sheet.select_set(True)
        for area in bpy.context.window_manager.windows[0].screen.areas:
            if area.type == "PROPERTIES":
                area.spaces.active.context = "PHYSICS"
        return None

    def shoot():
        try:
            screenshot_panel(sheet)
        except Exception:
            traceback.print_exc()
        bpy.ops.wm.quit_blender()
        return None

    bpy.app.timers.register(show, first_interval=1.0)
    bpy.app.timers.register(shoot, first_interval=4.0)


if MODE == "render":
    render_mode()
else:
    panel_mode()
