# A UV sphere (its vertices, then its triangles), for MeshLab to open as OFF:
# `awk -f sphere.awk >sphere.off`; or as Wavefront OBJ, for F3D:
# `awk -v format=obj -f sphere.awk >sphere.obj`.
BEGIN {
  rings = 48; segments = 96; pi = atan2(0, -1)
  obj = format == "obj"
  if (!obj) printf "OFF\n%d %d 0\n", (rings + 1) * segments, 2 * rings * segments
  for (i = 0; i <= rings; i++) {
    theta = pi * i / rings
    for (j = 0; j < segments; j++) {
      phi = 2 * pi * j / segments
      printf "%s%.5f %.5f %.5f\n", obj ? "v " : "", sin(theta) * cos(phi), cos(theta), sin(theta) * sin(phi)
    }
  }
  for (i = 0; i < rings; i++) {
    for (j = 0; j < segments; j++) {
      a = i * segments + j; b = i * segments + (j + 1) % segments
      if (obj)
        printf "f %d %d %d\nf %d %d %d\n", a + 1, a + segments + 1, b + 1, b + 1, a + segments + 1, b + segments + 1
      else
        printf "3 %d %d %d\n3 %d %d %d\n", a, a + segments, b, b, a + segments, b + segments
    }
  }
}
