'use strict';

// BENCHMARKING.md, case patched: the same handler, res.end(body) and
// nothing else, in plain Node (method=end, the baseline) and under
// fastResponse.install({ patchEnd: true }) (method=patched), as an app
// that does not know fast-response runs under `node -r fast-response/register`.
// The body: `len` bytes of 'a' (type=string, or --set type=buffer).

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: cases.LENS,
  type: ['string'],
  c: [50],
  duration: [5],
  method: ['end', 'patched'],
});

function main({ len, type, c, duration, method }) {
  const chunk = cases.body(type, len);
  const handler = () => (req, res) => {
    res.end(chunk);
  };
  cases.serve(bench, { method, c, duration }, { end: handler, patched: handler },
              { status: 200, headers: { 'Content-Length': len }, body: chunk });
}
