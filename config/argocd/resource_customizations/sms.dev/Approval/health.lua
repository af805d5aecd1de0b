-- Argo CD health of an sms.dev Approval, read from the conditions the sms
-- operator writes (docs/operator.md lists them). Healthy: the decision
-- reached the kernel, even if newer code has superseded it since.
-- Degraded: the decision never can reach it (the code changed before it
-- applied, or a self-approval was refused), or nobody decided within the
-- TTL. Anything else, such as waiting for a decision or for the kernel to
-- ask, is Progressing.
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
local expired = condition("Expired")
local denied = condition("Denied")
hs.message = ready.message
if denied ~= nil and denied.status == "True" and denied.reason == "TTLExpired" then
  hs.status = "Degraded"
  hs.message = denied.message
elseif ready.status == "True" then
  hs.status = "Healthy"
  if expired ~= nil and expired.status == "True" then
    hs.message = expired.message
  end
elseif expired ~= nil and expired.status == "True" then
  hs.status = "Degraded"
  hs.message = expired.message
end
return hs
