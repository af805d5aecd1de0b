-- Argo CD health of an sms.dev Plugin, read from the conditions the sms
-- operator writes (docs/operator.md lists them). Suspended: disabled.
-- Degraded: Stalled, that is rejected, denied or failed until the spec
-- changes. Healthy: Ready. Anything else is on its way: Progressing.
local hs = { status = "Progressing", message = "waiting for the sms operator" }
local function condition(typ)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == typ then
      return c
    end
  end
  return nil
end
local ready = condition("Ready")
if ready == nil or ready.observedGeneration ~= obj.metadata.generation then
  return hs
end
local stalled = condition("Stalled")
hs.message = ready.message
if ready.status == "True" and ready.reason == "Disabled" then
  hs.status = "Suspended"
elseif ready.status == "True" then
  hs.status = "Healthy"
elseif stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
end
return hs
