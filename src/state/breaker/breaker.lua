-- The circuit of machine.rs, applied by the Redis server in one atomic
-- step, on the server's clock (TIME, in microseconds), so hosts' clocks do
-- not matter.
-- KEYS[1]: the circuit's hash (retry:breaker:NAME): failures, level, state
-- (0 closed, 1 open, 2 probing), until and lease (microseconds), after
-- (the --breaker-after of the run that last counted a failure), and limit
-- (us: how far ahead of its now the run that set until could set it) with
-- limit_until, the until it was kept with: an older retry's script, which
-- keeps no limit, moves until and leaves limit behind.
-- ARGV: op (ask, tell, look, renew), the lease's length (us), how the run
-- ended (s, f, n), its lease (0: not a probe), --breaker-after, the
-- cooldown and its cap (us), a uniform draw in [0, 1) for the jitter, the
-- key's TTL (ms), this run's limit (us: the cap and the lease), the limit
-- taken for an end kept without one (us: an hour and the lease), the
-- TTL in limits (the key outlives a longer writer's end too), and the
-- longest limit kept with an end that is trusted (us: a day and the lease).
-- Returns {admit (0 run, 1 probe, 2 skip), state, failures, level, until,
-- lease, now, clamped (1: the end lay further ahead and was brought in),
-- after, limit, how far ahead the end could lie (us)}.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local op = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'failures', 'level', 'state', 'until', 'lease', 'after',
  'limit', 'limit_until')
-- A count as the reply can carry it: a whole number in 0 .. 2^32 - 1.
local function count(x)
  x = tonumber(x) or 0
  if not (x >= 0) then return 0 end
  return math.floor(math.min(x, 4294967295))
end
local failures, level, after = count(s[1]), count(s[2]), count(s[6])
local state, till, lease = tonumber(s[3]) or 0, tonumber(s[4]) or 0, tonumber(s[5]) or 0
if state ~= 1 and state ~= 2 then state = 0 end
if not (lease >= 0 and lease < 2 ^ 53) then lease = 0 end
local limit = tonumber(s[7]) or 0
if not (limit > 0 and limit < 2 ^ 53 and tonumber(s[8]) == till) then limit = 0 end
limit = math.min(limit, tonumber(ARGV[13]))
-- Closed, the times mean nothing (and a NaN would differ from itself).
if state == 0 then till, lease, limit = 0, 0, 0 end
local before = {failures, level, state, till, lease, after, limit}

-- An end no run on this clock could have set (machine.rs's clamp): a
-- clock that went back, or a hash written by hand. Infinite or not a
-- number counts too: brought in to now + this run's limit, or the one
-- kept with the end if longer (for none, an hour and the lease).
local own = tonumber(ARGV[10])
local far = limit
if far == 0 then far = tonumber(ARGV[11]) end
far = math.max(own, far)
local clamped = 0
local most = now + far
if state ~= 0 and not (till <= most) then
  till, limit, clamped = most, far, 1
end
local was_state, was_till, was_lease = state, till, lease

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
    failures, level, after = failures + 1, level + 1, count(ARGV[5])
    open(level)
  elseif ended == 'f' then
    failures, after = failures + 1, count(ARGV[5])
    if state == 0 and failures >= tonumber(ARGV[5]) then
      level = 0
      open(0)
    end
  elseif probing then
    -- Neither way: the lease goes back, the next run may probe at once.
    state, till, lease = 1, now, 0
  end
elseif op == 'renew' then
  -- The probe still runs: its lease lasts from now, if it is still its.
  local mine = tonumber(ARGV[4])
  if state == 2 and mine ~= 0 and lease == mine then
    till = now + tonumber(ARGV[2])
  end
end

-- An end this run set is kept with its own limit (machine.rs's mark);
-- closed, there is none.
if state == 0 then
  limit = 0
elseif state ~= was_state or till ~= was_till or lease ~= was_lease then
  limit = own
end

local later = {failures, level, state, till, lease, after, limit}
local changed = false
for i = 1, 7 do
  if before[i] ~= later[i] then changed = true end
end
-- A look writes nothing, not even a clamped end.
if changed and op ~= 'look' then
  if state == 0 and failures == 0 then
    -- Closed with nothing counted is the same as no key.
    redis.call('DEL', KEYS[1])
  else
    local n = function(x) return string.format('%.0f', x) end
    redis.call('HSET', KEYS[1], 'failures', n(failures), 'level', n(level), 'state', n(state),
      'until', n(till), 'lease', n(lease), 'after', n(after), 'limit', n(limit),
      'limit_until', n(till))
    local ttl = math.max(tonumber(ARGV[9]), math.floor(limit / 1000) * tonumber(ARGV[12]))
    redis.call('PEXPIRE', KEYS[1], n(ttl))
  end
end
return {admit, state, failures, level, till, lease, now, clamped, after, limit, far}
