-- The adaptive throttle of window.rs, applied by the Redis server in one
-- atomic step, on the server's clock (TIME, in milliseconds), so hosts'
-- clocks do not matter.
-- KEYS[1]: the throttle's hash (retry:throttle:NAME): start (ms, the
-- current fixed window's), req and acc (its requests and accepts), preq
-- and pacc (the window before's).
-- ARGV: op (ask: count a request and decide it; tell: only the outcome;
-- look: change nothing), told (1: the run's previous attempt was accepted,
-- 0: it was not, or there is none to tell), a uniform draw in [0, 1), K,
-- the window's length (ms), and the most a count may be (mod.rs's
-- MAX_COUNT).
-- Returns {allowed (1 or 0), the probability the request was decided on,
-- the probability now (each in millionths), the sliding window's requests
-- and accepts (in thousandths), trusted (0: the hash held what no retry
-- writes, and was deleted), found (0: no key)}.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local op, told, draw = ARGV[1], ARGV[2] == '1', tonumber(ARGV[3])
local k, len, most = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'start', 'req', 'acc', 'preq', 'pacc')

-- A whole number in 0 .. limit, or nil: a sign, a fraction, NaN, infinity,
-- a string or a missing field is none.
local function whole(x, limit)
  x = tonumber(x)
  if x == nil or x ~= x or x < 0 or x > limit or x ~= math.floor(x) then return nil end
  return x
end

local found = 0
for i = 1, 5 do if s[i] then found = 1 end end
local start, req, acc, preq, pacc = 0, 0, 0, 0, 0
if found == 1 then
  -- A window further ahead than one window of the server's now: a clock
  -- that went back, or a hash written by hand.
  start = whole(s[1], now + len)
  req, acc = whole(s[2], most), whole(s[3], most)
  preq, pacc = whole(s[4], most), whole(s[5], most)
  if not (start and req and acc and preq and pacc) then
    if op ~= 'look' then redis.call('DEL', KEYS[1]) end
    return {1, 0, 0, 0, 0, 0, found}
  end
end

-- Window::at: moved on to the fixed window now falls in.
local now_start = now - now % len
if now_start > start then
  if now_start - start == len then preq, pacc = req, acc else preq, pacc = 0, 0 end
  start, req, acc = now_start, 0, 0
end

-- Window::reject_probability: the older window weighted by what the
-- sliding window still covers.
local function probability()
  local into = math.min(math.max(now - start, 0), len)
  local weight = 1 - into / len
  local r, a = req + weight * preq, acc + weight * pacc
  local p = (r - k * a) / (r + 1)
  return math.min(math.max(p, 0), 1), r, a
end

if told then acc = math.min(acc + 1, most) end
local allowed, decided = 1, 0
if op == 'ask' then
  decided = probability()
  if draw < decided then allowed = 0 end
  req = math.min(req + 1, most)
end
if op ~= 'look' and (op == 'ask' or told) then
  local n = function(x) return string.format('%.0f', x) end
  redis.call('HSET', KEYS[1], 'start', n(start), 'req', n(req), 'acc', n(acc), 'preq', n(preq),
    'pacc', n(pacc))
  -- Forgotten two windows on anyway.
  redis.call('PEXPIRE', KEYS[1], 2 * len)
end
local p, r, a = probability()
local millionths = function(x) return math.floor(x * 1000000 + 0.5) end
return {allowed, millionths(decided), millionths(p), math.floor(r * 1000 + 0.5),
  math.floor(a * 1000 + 0.5), 1, found}
