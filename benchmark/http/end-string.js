'use strict';

// Node's benchmark/http/end-string.js with fast-response (BENCHMARKING.md,
// case end-string): writeHead(200, { Content-Type, Content-Length }) and then
// res.end(body) (method=end, the baseline) or res.fastEnd(body)
// (method=fastEnd). The body: `len` bytes of 'a', a string.

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: cases.LENS,
  c: [50],
  duration: [5],
  method: ['end', 'fastEnd'],
});

function main({ len, c, duration, method }) {
  const chunk = cases.body('string', len);
  const headers = { 'Content-Type': 'text/plain', 'Content-Length': len };
  cases.serve(bench, { method, c, duration }, {
    end: () => (req, res) => {
      res.writeHead(200, headers);
      res.end(chunk);
    },
    fastEnd: () => (req, res) => {
      res.writeHead(200, headers);
      res.fastEnd(chunk);
    },
  }, { status: 200, headers, body: chunk });
}
