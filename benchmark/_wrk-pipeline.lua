-- wrk -s benchmark/_wrk-pipeline.lua <url> -- <depth> [close]: every
-- connection sends <depth> GET requests in one write and reads their
-- responses before it sends the next <depth> (wrk counts each response), as
-- wrk's own scripts/pipeline.lua; done() as _wrk-report.lua, so the harness
-- reads the same exact counts. With `close` the last request of each burst
-- carries Connection: close: the server closes the connection after its
-- response and wrk opens a new one for the next burst (a client that
-- pipelines one burst per connection).
local dir = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
dofile(dir .. '_wrk-report.lua')

init = function(args)
  local depth = tonumber(args[1]) or 16
  local r = {}
  for i = 1, depth do r[i] = wrk.format(nil, nil) end
  if args[2] == 'close' then r[depth] = wrk.format(nil, nil, { Connection = 'close' }) end
  req = table.concat(r)
end

request = function()
  return req
end
