# What ParaView shows in the corpus (pvpython, VTK's OpenGL renderer in a window):
# a shaded sphere cut by a plane, its edges as a wireframe and a glyph of cones on its
# normals, the camera orbiting it one degree a frame.
from paraview.simple import *

sphere = Sphere(ThetaResolution=48, PhiResolution=48)
clip = Clip(Input=sphere, ClipType="Plane")
view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [640, 480]
shown = Show(clip, view)
ColorBy(shown, ("POINTS", "Normals", "Magnitude"))
edges = Show(FeatureEdges(Input=ExtractSurface(Input=clip)), view)
edges.DiffuseColor = [1.0, 0.8, 0.2]
Show(Glyph(Input=sphere, GlyphType="Cone", OrientationArray=["POINTS", "Normals"],
           ScaleFactor=0.05), view)
view.ResetCamera()
camera = GetActiveCamera()
while True:
    camera.Azimuth(1)
    Render(view)
