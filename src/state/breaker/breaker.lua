-- The circuit of machine.rs, applied by the Redis server in one atomic
-- step, on the server's clock (TIME, in microseconds), so hosts' clocks do
-- not matter.
-- KEYS[1]: the circuit's hash (retry:breaker:NAME): failures, level, state
-- (0 closed, 1 open, 2 probing), until and lease (microseconds).
-- ARGV: op (ask, tell, look), the lease's length (us), how the run ended
-- (s, f, n), its lease (0: not a probe), --breaker-after, the cooldown and
-- its cap (us), a uniform draw in [0, 1) for the jitter, the key's TTL (ms).
-- Returns {admit (0 run, 1 probe, 2 skip), state, failures, level, until,
-- lease, now}.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local op = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'failures', 'level', 'state', 'until', 'lease')
local failures, level = tonumber(s[1]) or 0, tonumber(s[2]) or 0
local state, till, lease = tonumber(s[3]) or 0, tonumber(s[4]) or 0, tonumber(s[5]) or 0
local before = {failures, level, state, till, lease}

-- Cooldown k: equal jitter of min(cap, cooldown * 2^k).
local function open(k)
  local ceiling = math.min(tonumber(ARGV[7]), tonumber(ARGV[6]) * 2 ^ k)
  local half = ceiling / 2
  state, till, lease = 1, now + math.floor(math.min(ceiling, half + half * tonumber(ARGV[8]))), 0
end

local admit = 0
if op == 'ask' then
  if state == 0 then
    admit = 0
  elseif now >= till then
    -- Open and the cooldown over, or a lease that ended: this run probes.
    admit, state, lease, till = 1, 2, now, now + tonumber(ARGV[2])
  else
    admit = 2
  end
elseif op == 'tell' then
  local ended, mine = ARGV[3], tonumber(ARGV[4])
  local probing = state == 2 and mine ~= 0 and lease == mine
  if ended == 's' then
    failures, level, state, till, lease = 0, 0, 0, 0, 0
  elseif ended == 'f' and probing then
    failures, level = failures + 1, level + 1
    open(level)
  elseif ended == 'f' then
    failures = failures + 1
    if state == 0 and failures >= tonumber(ARGV[5]) then
      level = 0
      open(0)
    end
  elseif probing then
    -- Neither way: the lease goes back, the next run may probe at once.
    state, till, lease = 1, now, 0
  end
end

local after = {failures, level, state, till, lease}
local changed = false
for i = 1, 5 do
  if before[i] ~= after[i] then changed = true end
end
if changed then
  if state == 0 and failures == 0 then
    -- Closed with nothing counted is the same as no key.
    redis.call('DEL', KEYS[1])
  else
    local n = function(x) return string.format('%.0f', x) end
    redis.call('HSET', KEYS[1], 'failures', n(failures), 'level', n(level), 'state', n(state),
      'until', n(till), 'lease', n(lease))
    redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[9]))
  end
end
return {admit, state, failures, level, till, lease, now}
