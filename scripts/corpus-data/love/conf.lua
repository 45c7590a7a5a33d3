-- A small LÖVE 11 scene for scripts/corpus: a window of 640x480, no audio.
function love.conf(t)
  t.window.width = 640
  t.window.height = 480
  t.window.vsync = 0
  t.modules.audio = false
  t.modules.sound = false
end
