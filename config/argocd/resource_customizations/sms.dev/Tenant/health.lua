-- Argo CD health of an sms.dev Tenant, read from the conditions the sms
-- operator writes (docs/operator.md lists them). Suspended: spec.suspend.
-- Degraded: Stalled, an invalid spec. Healthy: its kernel is Ready.
-- Anything else is on its way: Progressing.
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
if ready.status == "True" then
  hs.status = "Healthy"
elseif ready.reason == "Suspended" then
  hs.status = "Suspended"
elseif stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
end
return hs
