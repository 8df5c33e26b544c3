'use strict';

// Pipelined requests (BENCHMARKING.md, case pipelined): every connection
// sends `depth` GET requests in one write and reads their responses before
// sending the next burst (wrk with benchmark/_wrk-pipeline.lua). Node parses
// the burst at once and runs each handler; the response of every request
// but the first waits behind its predecessor. Handlers as end-string:
// writeHead(200, { Content-Type, Content-Length }) and res.end(body)
// (method=end, the baseline), res.fastEnd(body) (fastEnd), the same res.end
// under install({ patchEnd: true }) (patched), or template().send().
// method=bound: the bound of any head rendering here: the head is a string
// rendered once a second and set as `_header` (what writeHead() leaves),
// then res.fastEnd(body): the socket's batch, Node's bookkeeping, nothing
// rendered or validated.

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: [64, 1024],
  depth: [1, 4, 16],
  c: [50],
  duration: [5],
  method: ['end', 'fastEnd', 'patched', 'template', 'bound'],
});

function main({ len, depth, c, duration, method }) {
  const chunk = cases.body('string', len);
  const headers = { 'Content-Type': 'text/plain', 'Content-Length': len };
  cases.serve(bench, { method, c, duration, pipeline: depth }, {
    ...cases.pipelinedHandlers(chunk, headers),
    template: (fr) => {
      const tpl = fr.template(200, { 'Content-Type': 'text/plain' });
      return (req, res) => tpl.send(res, chunk);
    },
    bound: (fr) => {
      fr.install();
      const headNow = cases.renderedHead(len);
      return (req, res) => {
        res._header = headNow();
        res.fastEnd(chunk);
      };
    },
  }, { status: 200, headers, body: chunk });
}
