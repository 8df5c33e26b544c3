'use strict';

// The bound: how fast any replacement of res.end() can be on this machine,
// as long as Node's own request handling and end() bookkeeping stay.
// method=end is the baseline of every other case (writeHead(200, headers)
// and res.end(body)); method=bound sends the same bytes with nothing left
// to compute: the head is a string rendered once a second (for Date), the
// body is written with it by the addon's one writev(2), and then Node's own
// end() runs exactly as after res.fastEnd() (lib/complete.js complete()). No
// header map, no rendering, no validation, no fallback checks. A target
// above bound/end cannot be met by this package: what is left is Node's
// request side (parsing, IncomingMessage, 'finish' handling) and the
// kernel's write.

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  len: cases.LENS,
  type: ['string'],
  c: [50],
  duration: [5],
  method: ['end', 'bound'],
});

function main({ len, type, c, duration, method }) {
  const chunk = cases.body(type, len);
  const headers = { 'Content-Type': 'text/plain', 'Content-Length': len };
  cases.serve(bench, { method, c, duration }, {
    end: () => (req, res) => {
      res.writeHead(200, headers);
      res.end(chunk);
    },
    bound: (fr, internals) => {
      const { writeRendered, written, complete, BODY_BYTES, BODY_UTF8, HEAD_UTF8 } = internals;
      const bodyFlags = typeof chunk === 'string' ? BODY_UTF8 | HEAD_UTF8 : BODY_BYTES;
      const units = typeof chunk === 'string' ? chunk.length : 0;
      const headNow = cases.renderedHead(len);
      return (req, res) => {
        const head = headNow();
        const remaining = writeRendered(res.socket._handle.fd, head, chunk, bodyFlags, units);
        res._header = head;
        complete(res, written(), remaining, chunk);
      };
    },
  }, { status: 200, headers, body: chunk });
}
