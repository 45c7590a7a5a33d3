// A cube hollowed by a sphere beside a cylinder: OpenSCAD's preview draws their
// faces, edges and the axes.
difference() {
  cube(10, center = true);
  sphere(6.5);
}
translate([15, 0, 0]) cylinder(h = 10, r = 4, $fn = 48);
