'use strict';

// Streamed responses (BENCHMARKING.md, cases "streamed writes"): the head
// and `writes` chunks of `len` bytes with res.write(), then res.end().
// `tick=each`: one write per turn of the event loop (setImmediate between
// them: server-sent events, token streaming); `tick=one`: all writes in one
// tick (server-side rendering). writeHead(200, { Content-Type }) first:
// Node frames the body chunked. method=end is Node's own write() and
// end(); patched is the same code under install({ patchEnd: true }).

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: [64, 1024],
  writes: [8],
  tick: ['each', 'one'],
  c: [50],
  duration: [5],
  method: ['end', 'patched'],
});

function main({ len, writes, tick, c, duration, method }) {
  const chunk = cases.body('string', len);
  const headers = { 'Content-Type': 'text/plain' };
  const handler = () => (req, res) => {
    res.writeHead(200, headers);
    if (tick === 'one') {
      for (let i = 0; i < writes; i++) res.write(chunk);
      res.end();
      return;
    }
    let left = writes;
    const next = () => {
      res.write(chunk);
      if (--left === 0) res.end();
      else setImmediate(next);
    };
    next();
  };
  cases.serve(bench, { method, c, duration }, { end: handler, patched: handler },
              { status: 200, headers, body: chunk.repeat(writes) });
}
