'use strict';

// Streamed responses (BENCHMARKING.md, cases "streamed writes"): the head
// and `writes` chunks of `len` bytes with res.write(), then res.end().
// `tick=each`: one write per turn of the event loop (setImmediate between
// them: server-sent events, token streaming); `tick=one`: all writes in one
// tick (server-side rendering). writeHead(200, { Content-Type }) first:
// Node frames the body chunked. method=end is Node's own write() and
// end(); patched is the same code under install({ patchEnd: true }).
// method=bound: the bound of any write() here: the head and the chunks
// framed in advance (the head rendered once a second), one socket.write()
// per tick (tick=one: head and all chunks as one Buffer), the socket corked
// for the tick as Node corks it, and Node's own end() for the last chunk and
// the response's bookkeeping: nothing rendered, framed or validated.
// method=fastWrite: res.fastWrite() and res.fastEnd() after install().

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: [64, 1024],
  writes: [8],
  tick: ['each', 'one'],
  c: [50],
  duration: [5],
  method: ['end', 'fastWrite', 'patched', 'bound'],
});

function main({ len, writes, tick, c, duration, method }) {
  const chunk = cases.body('string', len);
  const headers = { 'Content-Type': 'text/plain' };
  const fast = method === 'fastWrite';
  const handler = () => cases.streamedHandler({
    chunk, writes, tick, headers, write: fast ? 'fastWrite' : 'write', end: fast ? 'fastEnd' : 'end',
  });
  // Node 24 and later collect every tick's chunks themselves (as the
  // package at FAST_RESPONSE_PATH finds it): write() is Node's there, and
  // the package's uncork() frames what it collected (lib/chunked-buffer.js;
  // under patchEnd, and for the ticks res.fastWrite() starts,
  // lib/stream.js writeCollected()). The progress line shows stats()'s
  // uncorks framed and joined.
  const nodePath = (method === 'patched' || method === 'fastWrite') && collectsChunks() ?
    'Node\'s own write() (it collects a tick\'s chunks), the package\'s uncork()' :
    undefined;
  cases.serve(bench, { method, c, duration, nodePath }, { end: handler, fastWrite: handler, patched: handler, bound: () => cases.streamedBound(chunk, writes, tick) },
              { status: 200, headers, body: chunk.repeat(writes) });
}

/**
 * Whether the package leaves write() to Node on this Node: its
 * NODE_COLLECTS_TICK_CHUNKS (Node 24 and later); a package from before it
 * (comparing git refs) left write() to every Node with kChunkedBuffer (22
 * and later).
 */
function collectsChunks() {
  const internals = require(require('node:path').join(cases.packagePath, 'lib', 'node-internals.js'));
  if (typeof internals.NODE_COLLECTS_TICK_CHUNKS === 'boolean') return internals.NODE_COLLECTS_TICK_CHUNKS;
  const res = new (require('node:http').ServerResponse)({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 });
  return Object.getOwnPropertySymbols(res).some((s) => s.description === 'kChunkedBuffer');
}
