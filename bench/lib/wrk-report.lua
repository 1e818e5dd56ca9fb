-- wrk script of the flotilla benchmark.
-- BENCH_ID_COUNT=n: request /items/1 … /items/n in turn instead of the command line's URL.
-- BENCH_BODY=...: send it with every request, as a POST (the Content-Type comes with -H).
-- done() prints one line, BENCH_JSON {...}, with the counts and the latency percentiles (µs).
local ids = tonumber(os.getenv("BENCH_ID_COUNT") or "")
local body = os.getenv("BENCH_BODY") or ""
if body ~= "" then
  wrk.method = "POST"
  wrk.body = body
end
if ids then
  local n = 0
  request = function()
    n = n % ids + 1
    return wrk.format(nil, "/items/" .. n)
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
