# Redraws every area of Blender's window twenty times a second, so that its idle
# interface presents frames for the capture (Blender draws only when something changes).
import bpy


def redraw():
    for window in bpy.context.window_manager.windows:
        for area in window.screen.areas:
            area.tag_redraw()
    return 0.05


bpy.app.timers.register(redraw)
