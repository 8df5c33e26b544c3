-- wrk -s benchmark/_wrk-report.lua: prints wrk's own summary as one JSON
-- line, so that benchmark/_http-benchmarkers.js reads exact counts (total
-- responses, bytes, errors) instead of rounded text. Only done() is
-- defined: wrk keeps its fast C path for requests and responses.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nFAST_RESPONSE_WRK {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"latency_p50_us":%d,"latency_p99_us":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
