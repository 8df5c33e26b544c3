'use strict';

// BENCHMARKING.md, case setheader: res.setHeader('Content-Type', ...) and
// then res.end(body) (method=end, the baseline) or res.fastEnd(body)
// (method=fastEnd): the head comes from Node's header map, Content-Length
// from the body. The body: `len` bytes of 'a' (type=string, or
// --set type=buffer).

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: cases.LENS,
  type: ['string'],
  c: [50],
  duration: [5],
  method: ['end', 'fastEnd'],
});

function main({ len, type, c, duration, method }) {
  const chunk = cases.body(type, len);
  cases.serve(bench, { method, c, duration }, {
    end: () => (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end(chunk);
    },
    fastEnd: () => (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.fastEnd(chunk);
    },
  }, { status: 200, headers: { 'Content-Type': 'text/plain', 'Content-Length': len }, body: chunk });
}
