'use strict';

// BENCHMARKING.md, case send: res.writeHead(200, headers) and then
// res.end(body) (method=end, the baseline) against
// fastResponse.send(res, 200, headers, body) (method=send), with the same
// `headers` (Content-Type and Content-Length), so that both put the same
// bytes on the wire. The body: `len` bytes of 'a' (type=string, or
// --set type=buffer).

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: cases.LENS,
  type: ['string'],
  c: [50],
  duration: [5],
  method: ['end', 'send'],
});

function main({ len, type, c, duration, method }) {
  const chunk = cases.body(type, len);
  const headers = { 'Content-Type': 'text/plain', 'Content-Length': len };
  cases.serve(bench, { method, c, duration }, {
    end: () => (req, res) => {
      res.writeHead(200, headers);
      res.end(chunk);
    },
    send: ({ send }) => (req, res) => {
      send(res, 200, headers, chunk);
    },
  }, { status: 200, headers, body: chunk });
}
