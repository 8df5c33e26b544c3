'use strict';

// Every reason a call steps aside to Node's own code, by the name stats()
// counts it under, with what it means. The names the addon gives
// (src/layout.h kStepAsideNames) are here too; test/reasons.test.js checks
// that each of them is, that lib/ uses only names from this list, and that
// index.d.ts's FallbackReason union is exactly this list.

const REASONS = Object.freeze({
  __proto__: null,
  // The package
  'no-addon': 'the native addon did not load (see loadError)',
  'end-replaced': "the response's end() is not Node's (compression, an APM agent): it is called",
  'writehead-replaced': "the response's writeHead() or _storeHeader() is not Node's (an APM agent's): send() calls writeHead(), which calls _storeHeader()",
  'write-replaced': "the response's write() is not Node's: it is called",
  'write-raw-replaced': "the response's _send() or _writeRaw() is not Node's (instrumentation counting bytes): Node's end() or write() runs, so that it sees them",
  'not-http1': 'not an http.ServerResponse (the HTTP/2 compatibility API; a ClientRequest, whose fast path is req.fastEnd()): its own end() or write() is called',
  // The body
  'no-body': 'end() without data: nothing to write fast',
  'empty-body': 'an empty string or Buffer: Node writes no body',
  'body-type': 'a body that is not a string, Buffer or Uint8Array: Node throws',
  encoding: "a string whose bytes Node counts otherwise: end() in an encoding whose bytes differ from Buffer.byteLength's count; write() in hex, base64, ... (the socket counts characters); or a socket whose default encoding (setDefaultEncoding()) is not UTF-8",
  // The response
  finished: 'the response was already ended or destroyed',
  'head-sent': 'the head went out already (res.write() before end())',
  'strict-content-length': 'strictContentLength: Node checks the body against Content-Length',
  chunked: 'the head says chunked and Node frames the body (trailers, or an empty chunk)',
  'no-head': 'Node rendered no head (trailers on Node 18)',
  'head-rendered': 'send() after writeHead(): Node throws or merges',
  'header-map': 'send() after setHeader(): writeHead() merges with the header map',
  'status-message': "template().send() on a response whose statusMessage is not the template's",
  'unique-headers': "the server's uniqueHeaders option joins an array value of this field",
  'keep-alive-value': 'a keepAliveTimeout or maxRequestsPerSocket the addon cannot print as Node does',
  'body-not-allowed': "the server's rejectNonStandardBodyWrites refuses a body here: Node throws",
  'no-body-allowed': 'write() on a response without a body (HEAD, 204, 304): Node ignores it or throws',
  'node-combines-chunks': 'Node collects the chunked writes into one chunk itself (kChunkedBuffer): every tick\'s on Node 24 and later, a response\'s the user corked (res.cork()) on Node 22: write() is Node\'s',
  'not-chunked': 'write() of a body Node does not frame (a Content-Length, an HTTP/1.0 client): one socket write either way, Node\'s',
  'removed-connection': "Node 18 closes the connection after removeHeader('Connection')",
  // The socket
  queued: 'the response has output queued (outputData)',
  'not-current': "the response waits behind the socket's current one (pipelining)",
  tls: 'the socket is TLS: the bytes must be encrypted',
  'socket-write-replaced': 'socket.write() is wrapped (instrumentation must see the bytes)',
  'socket-closed': 'the socket is destroyed or not writable',
  'socket-busy': 'the socket has writes queued, or is corked',
  'no-fd': 'the socket has no file descriptor (not a TCP or pipe handle)',
  // Outgoing requests (lib/client.js)
  'node-sends-request': 'Node 24 and later: Node\'s own req.end() costs less than the addon\'s path (measured on Node 26)',
  'request-end-replaced': "the request's end() is not Node's (an APM agent's wrapper): it is called",
  'flush-replaced': "the request's _flushOutput() is not Node's: it writes what the request queued",
  connecting: "the request's socket is still connecting (a new connection): Node writes the request at 'connect'",
  'queue-changed': 'what the request queued changed after end() (flushHeaders()): Node writes the queue',
  // The head (the addon's names: src/layout.h)
  invalid: "a status code, reason phrase, field-name or field-value fails Node's checks: Node throws",
  'field-transfer-encoding': 'a Transfer-Encoding field: Node frames the body',
  'field-expect': 'an Expect field: Node waits for 100-continue',
  'field-trailer': 'a Trailer field: Node writes trailers after the last chunk',
  'field-content-disposition': 'a Content-Disposition Node re-encodes through a Buffer (non-ASCII, or not a string)',
  'chunked-body': 'the head needs chunk framing (Content-Length removed): Node frames the body',
});

// Identifiers for lib/: R.NOT_CURRENT is 'not-current'.
const R = Object.freeze(Object.fromEntries(
  Object.keys(REASONS).map((name) => [name.toUpperCase().replace(/-/g, '_'), name])));

module.exports = { REASONS, R };
