'use strict';

// Pipelined requests, one burst per connection (BENCHMARKING.md, case
// pipelined): every connection sends `depth` GET requests in one write, the
// last with Connection: close; the server closes the connection after its
// response and wrk opens a new one for the next burst (wrk with
// benchmark/_wrk-pipeline.lua's `close`). Each burst is its connection's
// first: the writer (lib/pipeline.js) starts on the burst's second
// response, which takes Node's path, and batches the rest; so the case
// shows what a connection's writer costs (opened, numbered, closed with
// the connection) against the writev(2) calls it saves. Handlers as
// http/pipeline.js: writeHead(200, { Content-Type, Content-Length }) and
// res.end(body) (method=end, the baseline), res.fastEnd(body) (fastEnd),
// res.end under install({ patchEnd: true }) (patched). method=bound, as
// http/pipeline.js's: the head rendered once a second and set as `_header`
// (Connection: close on the burst's last response, which closes the
// connection as Node's own would: `_last`), then res.fastEnd(body).
//
// The server closes every connection first, so each run leaves its
// connections in TIME_WAIT for a minute (about 20,000 in a 5 s run here):
// some runs are slower for every method (more kernel time per response);
// interleaving keeps the ratios comparable, the rates less so.

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: [64, 1024],
  depth: [16],
  c: [50],
  duration: [5],
  method: ['end', 'fastEnd', 'patched', 'bound'],
});

function main({ len, depth, c, duration, method }) {
  const chunk = cases.body('string', len);
  const headers = { 'Content-Type': 'text/plain', 'Content-Length': len };
  cases.serve(bench, { method, c, duration, pipeline: depth, closeAfterBurst: true }, {
    ...cases.pipelinedHandlers(chunk, headers),
    bound: (fr) => {
      fr.install();
      let keepAlive = '';
      let close = '';
      cases.renderedHead(len, (head) => {
        keepAlive = head;
        close = head.replace('Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n', 'Connection: close\r\n');
      });
      return (req, res) => {
        if (res.shouldKeepAlive) {
          res._header = keepAlive;
        } else {
          res._header = close;
          res._last = true;
        }
        res.fastEnd(chunk);
      };
    },
  }, { status: 200, headers, body: chunk });
}
