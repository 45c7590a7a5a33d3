-- Draws what LÖVE's renderer is made of: shapes batched by its sprite batcher, text,
-- a mesh, a multisampled canvas drawn back through a pixel shader of its own, and a
-- stencilled circle. Each frame moves everything, so frames differ.
local canvas, shader, mesh, font, batch
local t = 0

function love.load()
  canvas = love.graphics.newCanvas(320, 240, { msaa = 4 })
  shader = love.graphics.newShader([[
    extern number time;
    vec4 effect(vec4 colour, Image tex, vec2 uv, vec2 px) {
      vec2 wobble = vec2(sin(uv.y * 20.0 + time), cos(uv.x * 20.0 + time)) * 0.01;
      vec4 c = Texel(tex, uv + wobble);
      return vec4(c.rgb * (0.6 + 0.4 * sin(time + uv.x * 6.0)), c.a) * colour;
    }
  ]])
  mesh = love.graphics.newMesh({
    { 0, 0, 0, 0, 1, 0, 0, 1 },
    { 120, 0, 1, 0, 0, 1, 0, 1 },
    { 120, 120, 1, 1, 0, 0, 1, 1 },
    { 0, 120, 0, 1, 1, 1, 0, 1 },
  }, "fan")
  font = love.graphics.newFont(18)
  local dot = love.image.newImageData(8, 8)
  dot:mapPixel(function(x, y) return x / 8, y / 8, 1, 1 end)
  batch = love.graphics.newSpriteBatch(love.graphics.newImage(dot), 256)
end

function love.update(dt)
  t = t + 1 / 60
  batch:clear()
  for i = 0, 199 do
    batch:add(320 + math.cos(t + i * 0.1) * (60 + i), 240 + math.sin(t * 1.3 + i * 0.1) * (40 + i / 2), t + i, 2, 2)
  end
end

function love.draw()
  love.graphics.setCanvas({ canvas, stencil = true })
  love.graphics.clear(0.1, 0.1, 0.2, 1)
  for i = 0, 30 do
    love.graphics.setColor(i / 30, 1 - i / 30, 0.5, 1)
    love.graphics.circle("fill", 160 + math.cos(t + i) * 100, 120 + math.sin(t + i) * 80, 10 + i % 7)
  end
  love.graphics.setColor(1, 1, 1, 1)
  love.graphics.rectangle("line", 20, 20, 280, 200, 12, 12)
  love.graphics.setCanvas()

  love.graphics.clear(0.05, 0.05, 0.05, 1)
  shader:send("time", t)
  love.graphics.setShader(shader)
  love.graphics.draw(canvas, 0, 0, 0, 2, 2)
  love.graphics.setShader()

  love.graphics.stencil(function() love.graphics.circle("fill", 480, 360, 90) end, "replace", 1)
  love.graphics.setStencilTest("greater", 0)
  love.graphics.draw(mesh, 480, 360, t, 1.5, 1.5, 60, 60)
  love.graphics.setStencilTest()

  love.graphics.draw(batch)
  love.graphics.setFont(font)
  love.graphics.print(string.format("frame %d", math.floor(t * 60)), 12, 440)
  love.graphics.polygon("fill", 600, 20, 630, 80, 570, 80)
end
