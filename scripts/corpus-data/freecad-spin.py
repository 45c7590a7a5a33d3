# What FreeCAD shows in the corpus (Coin3D's OpenGL scene graph in its 3D view): a box
# with a cylinder cut out of it and filleted edges, in an isometric view that spins.
import FreeCAD
import FreeCADGui
import Part

doc = FreeCAD.newDocument("corpus")
box = Part.makeBox(20, 20, 10)
solid = box.cut(Part.makeCylinder(5, 10, FreeCAD.Vector(10, 10, 0)))
solid = solid.makeFillet(1, solid.Edges[:4])
doc.addObject("Part::Feature", "Part").Shape = solid
doc.recompute()
view = FreeCADGui.activeDocument().activeView()
view.viewIsometric()
view.fitAll()
view.startAnimating(0, 0, 1, 0.5)
