# A UV sphere as an OFF mesh (its vertices, then its triangles), for MeshLab to open:
# `awk -f sphere.awk >sphere.off`.
BEGIN {
  rings = 48; segments = 96; pi = atan2(0, -1)
  printf "OFF\n%d %d 0\n", (rings + 1) * segments, 2 * rings * segments
  for (i = 0; i <= rings; i++) {
    theta = pi * i / rings
    for (j = 0; j < segments; j++) {
      phi = 2 * pi * j / segments
      printf "%.5f %.5f %.5f\n", sin(theta) * cos(phi), cos(theta), sin(theta) * sin(phi)
    }
  }
  for (i = 0; i < rings; i++) {
    for (j = 0; j < segments; j++) {
      a = i * segments + j; b = i * segments + (j + 1) % segments
      printf "3 %d %d %d\n3 %d %d %d\n", a, a + segments, b, b, a + segments, b + segments
    }
  }
}
