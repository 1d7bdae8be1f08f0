-- The token bucket of bucket.rs, applied by the Redis server in one atomic
-- step, on the server's clock (TIME), so hosts' clocks do not matter.
-- KEYS[1]: the budget's hash (retry:budget:NAME): milli (thousandths of a
-- token), at (microseconds), tokens (size), refill (millionths of a token
-- a second). ARGV: op (take, give, look), tokens to take or give (the
-- caller's price: a transient or a throttled retry's cost, or the last
-- retry's given back: no kind of failure costs more here), and the
-- caller's size and refill (millionths).
-- Returns {granted, milli, tokens, refill, found}.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local op, price = ARGV[1], tonumber(ARGV[2]) * 1000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'milli', 'at', 'tokens', 'refill')
local milli, at, tokens, refill = tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4])
local found = (milli and at and tokens and refill) and 1 or 0

-- Exact refill, as Bucket::refilled: whole thousandths are added and the
-- clock moves on by the time they took, so no fraction is lost; a clock
-- that went back refills nothing.
local function refilled(milli, at, cap, rate)
  milli = math.min(milli, cap)
  if now < at or milli >= cap then return milli, now end
  if rate <= 0 then return milli, at end
  local elapsed = now - at
  local added = math.floor(elapsed * rate / 1e9)
  if added >= cap - milli then return cap, now end
  local took = math.min(elapsed, math.floor(added * 1e9 / rate + 0.5))
  return milli + added, at + took
end

if found == 1 then
  milli, at = refilled(milli, at, tokens * 1000, refill)
end
-- New, or full again: the caller's size holds (looking sizes nothing).
if found == 0 or (op ~= 'look' and milli >= tokens * 1000) then
  tokens, refill = tonumber(ARGV[3]), tonumber(ARGV[4])
  milli, at = tokens * 1000, now
end
local cap = tokens * 1000

local granted = 1
if op == 'take' then
  if milli >= price then milli = milli - price else granted = 0 end
elseif op == 'give' then
  milli = math.min(cap, milli + price)
end

-- Refused, the bucket is recorded as of now all the same: after a clock
-- that went back it refills from the new time at once, not only once the
-- clock is past the recorded one again.
if op ~= 'look' then
  if milli >= cap then
    -- A full bucket is the same as none: nothing is left behind.
    redis.call('DEL', KEYS[1])
  else
    local n = function(x) return string.format('%.0f', x) end
    redis.call('HSET', KEYS[1], 'milli', n(milli), 'at', n(at), 'tokens', n(tokens), 'refill', n(refill))
    if refill > 0 then
      -- Gone when it would be full anyway.
      local full_in_us = (cap - milli) * 1e9 / refill - (now - at)
      redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(full_in_us / 1000)))
    else
      redis.call('PERSIST', KEYS[1])
    end
  end
end
return {granted, milli, tokens, refill, found}
