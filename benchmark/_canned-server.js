'use strict';

// The server of the client benchmarks (benchmark/http/client-post.js): a
// plain `net` server on 127.0.0.1 that answers every request with the same
// canned response, so that the client is what is measured. Started by the
// benchmark child (pinned to the load generator's CPU) with an IPC channel:
// it sends { port } once listening. Requests are framed by their head and
// Content-Length; each request's bytes (head and body) must equal the first
// one's, and the first must equal the bytes the client said it sends:
// { type: 'expect', request } sets them (answered with { type: 'expected' }
// before the client sends any). { type: 'check' } is answered with
// { type: 'checked', requests, mismatched, first }: the requests parsed, how
// many differed, and the first one (latin1).

const net = require('node:net');

const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n' +
                             'Content-Length: 11\r\nConnection: keep-alive\r\n\r\n{"ok":true}', 'latin1');
const CRLF2 = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)\r\n/i;

let first = null;
let requests = 0;
let mismatched = 0;

function onRequest(bytes) {
  requests++;
  if (first === null) first = Buffer.from(bytes);
  else if (!first.equals(bytes)) mismatched++;
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let pending = null;
  socket.on('data', (data) => {
    const buf = pending === null ? data : Buffer.concat([pending, data]);
    let at = 0;
    let answers = 0;
    for (;;) {
      const end = buf.indexOf(CRLF2, at);
      if (end === -1) break;
      const match = CONTENT_LENGTH.exec(buf.toString('latin1', at, end + 2));
      const size = end + 4 - at + (match === null ? 0 : Number(match[1]));
      if (at + size > buf.length) break;
      onRequest(buf.subarray(at, at + size));
      at += size;
      answers++;
    }
    pending = at === buf.length ? null : Buffer.from(buf.subarray(at));
    if (answers === 1) socket.write(RESPONSE);
    else if (answers > 1) socket.write(Buffer.concat(new Array(answers).fill(RESPONSE)));
  });
  socket.on('error', () => {});
});

process.on('message', (message) => {
  if (message.type === 'expect') {
    first = Buffer.from(message.request, 'latin1');
    process.send({ type: 'expected' });
  } else if (message.type === 'check') {
    process.send({ type: 'checked', requests, mismatched, first: first === null ? null : first.toString('latin1') });
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
