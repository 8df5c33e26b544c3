'use strict';

// Outgoing requests: `req.fastEnd(data[, encoding][, callback])` on
// http.ClientRequest after install(), and every `req.end()` under
// install({ patchEnd: true }).
//
// Node's `req.end(data)` renders the request head in JavaScript
// (_implicitHeader() -> _storeHeader()). The agent gives the request its
// socket on a later tick (a pooled socket on the next one, a new connection
// once it is made, a queued request when a socket is freed), so end() queues
// head and body (`outputData`) with the 'finish' callback; when the socket
// is assigned, onSocketNT() calls the request's _flush(), whose
// _flushOutput() hands the queue to socket.write(): stream.Writable, then
// the strings converted to bytes in C++, one writev(2).
//
// Here the head is rendered natively (src/head.cc RenderRequestAndFields()
// and the _storeHeader() rules it shares with responses; Node renders it on
// Node 18, whose rules differ, and wherever the addon declines), and Node's
// own end() does all of end()'s bookkeeping with that head: `finished`,
// the queue, the 'finish' callback, 'prefinish' when the socket comes. The
// request's _flushOutput() is then flushRequest() below: when the socket
// is connected and idle, head and body go out with one writev(2) of the
// addon's (writeRendered()), at the moment and in the order Node's own
// write would have sent them, and the queued callbacks run as Node's
// completed write runs them. Otherwise (the socket still connecting on a new
// connection, writes queued on it, TLS, anything unusual) Node's own
// _flushOutput() writes the queue, byte for byte as always: nothing is
// written before 'connect', and nothing twice.
//
// A request ended when it already has its socket (in a 'socket' listener)
// is written at once, as lib/gate.js writes a response.

const { binding, layout, args, results } = require('./binding');
const { R } = require('./reasons');
const { SEP, joinHeaderMap } = require('./headers');
const { bodyKind, toBytes, bodyArgs } = require('./body');
const {
  ClientRequest, nodeEnd, nodeFlushOutput, nodeRequestImplicitHeader, kOutHeaders, uniqueHeadersOf,
  NODE_RENDERS_HEAD, FAILED_WRITE_COUNTED, CLIENT_PATH_GAINS, defineMethod, restoreProperty,
  callReplaced, methodToCall, patchedEnd,
} = require('./node-internals');
const { applyHead, complete, countBytes, failNextWrite, bytesOf } = require('./complete');
const { stateBits } = require('./gate');
const { socketFd } = require('./socket-fd');
const { countRequestFast, countRequestPartial, countRequestFallback } = require('./stats');

const {
  ARG_FD, ARG_WRITER, ARG_BODY_TAG, ARG_FIELD_COUNT, ARG_STATE_BITS, ARG_BODY_BYTES,
  ARG_HEAD_UNITS, RESULT_WRITTEN, RESULT_BITS, RESULT_HEAD_ASCII,
  BODY_NONE, BODY_UTF8, BODY_BYTES, BODY_KIND_MASK, HEAD_UTF8, CHUNKED, AGENT,
} = layout;

/** stats().requests: where complete() counts a request written at once. */
const REQUEST_COUNTS = Object.freeze({ fast: countRequestFast, partial: countRequestPartial });

/** What end() left for flushRequest(): on the request, under this key. */
const kQueued = Symbol('fastResponse.queuedRequest');

class Queued {
  constructor(body, flags, size, entries) {
    this.body = body;              // what the addon writes after the head
    this.flags = flags;            // its args[ARG_BODY_FLAGS]
    this.size = size;              // Node's `outputSize` after end()
    this.entries = entries;        // and `outputData.length`
  }
}

// ---------------------------------------------------------------------------
// end()

/**
 * Node's `req.end(data, encoding, callback)` for an http.ClientRequest, with
 * the head rendered natively and head and body written with one writev(2)
 * when the request has its socket. Steps aside to Node's own end() (or
 * Node's own write of the queue) in the cases lib/reasons.js names.
 *
 * @param {import('http').ClientRequest} req
 * @param {string|Uint8Array|Function} [data]
 * @param {string|Function} [encoding]
 * @param {Function} [callback]
 * @returns {import('http').ClientRequest} `req`, as Node's end().
 */
function requestEnd(req, data, encoding, callback) {
  let chunk = data;
  let enc = encoding;
  let cb = callback;
  if (typeof chunk === 'function') {
    cb = chunk;
    chunk = null;
    enc = null;
  } else if (typeof enc === 'function') {
    cb = enc;
    enc = null;
  }
  // Node's end() takes any falsy `data` ('', null, 0) as no body.
  let kind = BODY_NONE;
  if (chunk) {
    kind = bodyKind(chunk, enc);
    if (typeof kind === 'string') return fallback(req, kind, data, encoding, callback);
    if (kind === -1) {
      chunk = toBytes(chunk, enc);
      if (chunk === null) return fallback(req, R.ENCODING, data, encoding, callback);
      kind = BODY_BYTES;
    }
  } else {
    chunk = undefined;
  }
  const reason = requestRules(req);
  if (reason !== null) return fallback(req, reason, data, encoding, callback);
  const socket = req.socket;
  if (socket !== null && socket !== undefined) {
    return endWithSocket(req, socket, chunk, kind, cb, data, encoding, callback);
  }
  // No socket yet: the head now (the addon's, or Node's inside its end()),
  // then Node's end() queues it with the body and 'finish'.
  // An ASCII head reads the same as latin1 (HEAD_UTF8 is for the bytes
  // above 0x7F of a head sent with a UTF-8 body).
  if (req._header === null && renderHead(req, chunk, kind)) kind &= ~HEAD_UTF8;
  const ret = nodeEnd.call(req, data, encoding, callback);
  queue(req, chunk, kind, data);
  return ret;
}

/** Node's own end() with the same arguments, counted under `reason`. */
function fallback(req, reason, data, encoding, callback) {
  countRequestFallback(reason, req, data);
  return nodeEnd.call(req, data, encoding, callback);
}

/** What of the request's own state leaves it to Node, or null. */
function requestRules(req) {
  if (binding === null) return R.NO_ADDON;
  if (!CLIENT_PATH_GAINS) return R.NODE_SENDS_REQUEST;
  if (req.finished || req.destroyed) return R.FINISHED;
  if (req._header !== null) {
    // A head rendered when the request was made (headers as a flat array)
    // is written as Node rendered it; one already sent (write(),
    // flushHeaders(), an Expect field) leaves the body to Node.
    if (req._headerSent) return /\r\nexpect:/i.test(req._header) ? R.FIELD_EXPECT : R.HEAD_SENT;
  } else {
    // Node sends a head with an Expect field at once and waits for
    // 100-continue (the 'continue' event).
    const fields = kOutHeaders === undefined ? null : req[kOutHeaders];
    if (fields !== null && fields !== undefined && fields.expect !== undefined) return R.FIELD_EXPECT;
  }
  if (req.strictContentLength) return R.STRICT_CONTENT_LENGTH;
  if (req.protocol !== 'http:') return R.TLS;
  if (req._flushOutput !== nodeFlushOutput || nodeFlushOutput === null) return R.FLUSH_REPLACED;
  return null;
}

/** The body's length in bytes, as write_() computes `_contentLength`. */
function byteLength(chunk, kind) {
  switch (kind & BODY_KIND_MASK) {
    case BODY_NONE: return 0;
    case BODY_BYTES: return chunk.byteLength;
    case BODY_UTF8: return Buffer.byteLength(chunk, 'utf8');
    default: return chunk.length;
  }
}

/**
 * Renders the head natively, as end() -> _implicitHeader() ->
 * _storeHeader() would, and applies it to the request (`_header`,
 * `_contentLength`, what matchHeader() changes). Leaves `_header` null, for
 * Node to render, where Node's rules differ (Node 18), _implicitHeader() is
 * not Node's, a field is rendered otherwise (a non-string
 * Content-Disposition, an array the request's uniqueHeaders joins), or the
 * addon declines (src/message.h: Transfer-Encoding, Trailer, a non-ASCII
 * Content-Disposition, chunk framing; a method or path it cannot read).
 * Returns whether it rendered an ASCII head.
 */
function renderHead(req, chunk, kind) {
  if (NODE_RENDERS_HEAD || req._implicitHeader !== nodeRequestImplicitHeader) return false;
  const joined = joinHeaderMap(kOutHeaders === undefined ? null : req[kOutHeaders]);
  if (joined === null || (joined.arrays && uniqueHeadersOf(req))) return false;
  const bytes = byteLength(chunk, kind);
  args[ARG_FIELD_COUNT] = joined.count;
  args[ARG_STATE_BITS] = stateBits(req) | (req.agent ? AGENT : 0);
  args[ARG_BODY_BYTES] = bytes;
  const header = binding.renderRequest(req.method + SEP + req.path + SEP + joined.joined);
  if (header === undefined) return false;
  const ascii = (results[RESULT_BITS] & RESULT_HEAD_ASCII) !== 0;
  // write_(): `_contentLength` is the body's length, unless a Content-Length
  // field says otherwise (applyHead()).
  req._contentLength = bytes;
  applyHead(req, header, joined.joined, undefined);
  return ascii;
}

/**
 * args[ARG_BODY_FLAGS] for writing the request's `_header` and `chunk`, or a
 * fallback reason: Node frames a chunked body with trailers (addTrailers())
 * or an empty one itself. A request without a body (`_hasBody` false) gets
 * its head alone, as write_() ignores the body then.
 */
function bodyFlags(req, chunk, kind) {
  const flags = req._hasBody ? kind : BODY_NONE;
  if (!req.chunkedEncoding) return flags;
  if (req._trailer !== '' || ((kind & BODY_KIND_MASK) === BODY_BYTES && chunk.byteLength === 0)) return R.CHUNKED;
  // write_() sends the chunk-size line first, as latin1, and the head with
  // it: a chunked head is latin1 whatever the body's encoding.
  return (flags & ~HEAD_UTF8) | CHUNKED;
}

/**
 * After Node's end() queued the request: marks it for flushRequest(), when
 * the queue is head and body (plus chunk framing) as the addon writes them.
 */
function queue(req, chunk, kind, data) {
  if (!req.finished || !req._headerSent || req.socket !== null || req.outputData.length === 0) return;
  const flags = bodyFlags(req, chunk, kind);
  if (typeof flags === 'string') {
    countRequestFallback(flags, req, data);
    return;
  }
  req[kQueued] = new Queued(chunk, flags, req.outputSize, req.outputData.length);
  req._flushOutput = flushRequest;
}

// ---------------------------------------------------------------------------
// The socket

/**
 * The request's _flushOutput(socket), called by Node's _flush() when the
 * agent assigned the socket (onSocketNT(), after 'socket'): head and body
 * with one writev(2) when the socket is connected and idle, else Node's own
 * _flushOutput(). Node's _flush() then emits 'prefinish'; the queued
 * callbacks ('finish') run on the next tick, as after Node's own write that
 * completed at once.
 */
function flushRequest(socket) {
  const queued = this[kQueued];
  if (queued === null || queued === undefined) return nodeFlushOutput.call(this, socket);
  this[kQueued] = null;
  const fd = flushFd(this, socket, queued);
  if (typeof fd === 'string') {
    countRequestFallback(fd, this, queued.body);
    return nodeFlushOutput.call(this, socket);
  }
  const outputData = this.outputData;
  this.outputData = [];
  this._onPendingData(-this.outputSize);
  this.outputSize = 0;
  const callback = callbackOf(outputData);
  const remaining = write(this, fd, queued.body, queued.flags);
  const written = results[RESULT_WRITTEN];
  const handle = socket._handle;
  if (written !== 0) {
    // A failed write counts its bytes where Node's own would.
    countBytes(handle, written > 0 ? written : (FAILED_WRITE_COUNTED ? remaining : 0));
    socket._unrefTimer();
  }
  if (remaining === 0) {
    countRequestFast();
    if (callback !== null) process.nextTick(callback, null);
    return true;
  }
  // The rest to socket.write() (libuv queues it, Node's backpressure and
  // error handling take it), the callbacks with its last part; a failed
  // writev(2) fails that write with the same error, as libuv would report
  // it.
  countRequestPartial();
  if (written < 0) failNextWrite(handle, written);
  const parts = binding.pending();
  const body = () => queued.body;
  let ret = true;
  socket.cork();
  for (let i = 0; i < parts.length; i++) {
    const part = bytesOf(parts[i], body);
    ret = i === parts.length - 1 && callback !== null ? socket.write(part, callback) : socket.write(part);
  }
  socket.uncork();
  return ret;
}

/**
 * The socket's file descriptor when the queue may be written directly now,
 * or a fallback reason.
 */
function flushFd(req, socket, queued) {
  if (req.outputSize !== queued.size || req.outputData.length !== queued.entries) return R.QUEUE_CHANGED;
  if (socket.connecting) return R.CONNECTING;
  return socketFd(socket, req.writableCorked);
}

/** The callbacks of Node's queue entries as one, in order, or null. */
function callbackOf(outputData) {
  let only = null;
  let all = null;
  for (let i = 0; i < outputData.length; i++) {
    const callback = outputData[i].callback;
    if (typeof callback !== 'function') continue;
    if (only === null) {
      only = callback;
    } else {
      if (all === null) all = [only];
      all.push(callback);
    }
  }
  if (all === null) return only;
  return (err) => {
    for (let i = 0; i < all.length; i++) all[i](err);
  };
}

/** writeRendered(): the request's `_header` and `body` to `fd`; returns the bytes not written. */
function write(req, fd, body, flags) {
  const header = req._header;
  args[ARG_FD] = fd;
  args[ARG_WRITER] = -1;
  args[ARG_BODY_TAG] = 0;
  const data = bodyArgs(flags, body);
  args[ARG_HEAD_UNITS] = header.length;
  return binding.writeRendered(header, data);
}

/**
 * end() on a request that already has its socket (ended in a 'socket'
 * listener, or after the response): written at once when the socket is
 * connected and idle, then Node's end() finishes the request as for a
 * response (lib/complete.js).
 */
function endWithSocket(req, socket, chunk, kind, cb, data, encoding, callback) {
  if (socket.connecting) return fallback(req, R.CONNECTING, data, encoding, callback);
  // Node's end() queues a request whose socket went on to another request
  // (it is never written), and writes nothing ahead of queued output.
  if (socket._httpMessage !== req) return fallback(req, R.NOT_CURRENT, data, encoding, callback);
  if (req.outputData.length !== 0) return fallback(req, R.QUEUED, data, encoding, callback);
  const fd = socketFd(socket, req.writableCorked);
  if (typeof fd === 'string') return fallback(req, fd, data, encoding, callback);
  if (req._header === null) {
    if (renderHead(req, chunk, kind)) kind &= ~HEAD_UTF8;
    if (req._header === null) {
      // Node renders, corked as in its end().
      req._contentLength = byteLength(chunk, kind);
      socket.cork();
      req._implicitHeader();
      socket.uncork();
      if (req._header === null || req._headerSent) return fallback(req, R.NO_HEAD, data, encoding, callback);
    }
  }
  const flags = bodyFlags(req, chunk, kind);
  if (typeof flags === 'string') return fallback(req, flags, data, encoding, callback);
  const remaining = write(req, fd, chunk, flags);
  return complete(req, results[RESULT_WRITTEN], remaining, chunk, cb, REQUEST_COUNTS);
}

// ---------------------------------------------------------------------------
// install()

let installed = null;

/**
 * Node's own end(), or the package's patch of it: only then may the
 * package take the call over.
 */
function isOwnEnd(fn) {
  if (nodeEnd === null) return false;
  if (fn === nodeEnd) return true;
  const endPatch = installed !== null ? installed.endPatch : null;
  return endPatch !== null && fn === endPatch.method && endPatch.overNodes();
}

function fastEndMethod(data, encoding, callback) {
  // Inside a replaced end() that calls fastEnd() back: what it stands over
  // (lib/index.js fastResponseEnd()).
  const own = methodToCall(this, 'end');
  if (!isOwnEnd(own) && typeof own === 'function') {
    countRequestFallback(R.REQUEST_END_REPLACED, this, data);
    return callReplaced(own, this, 'end', data, encoding, callback);
  }
  return requestEnd(this, data, encoding, callback);
}

/**
 * lib/index.js install(): defines ClientRequest.prototype.fastEnd, and with
 * `patchEnd` routes every req.end() through requestEnd().
 */
function installClient(patchEnd) {
  const proto = ClientRequest.prototype;
  if (installed === null) {
    installed = {
      fastEnd: Object.getOwnPropertyDescriptor(proto, 'fastEnd'),
      endPatch: null,
    };
    defineMethod(proto, 'fastEnd', fastEndMethod);
  }
  // Where Node's own req.end() is the cheaper one, patchEnd leaves it.
  if (patchEnd && installed.endPatch === null && CLIENT_PATH_GAINS) {
    // What stands there now: an end() someone wrapped after install() and
    // before patchEnd is called by the patch and put back by uninstall().
    installed.endPatch = patchedEnd(proto, requestEnd);
    defineMethod(proto, 'end', installed.endPatch.method);
  }
}

/** lib/index.js uninstall(): puts back what installClient() replaced. */
function uninstallClient() {
  if (installed === null) return;
  const proto = ClientRequest.prototype;
  restoreProperty(proto, 'fastEnd', installed.fastEnd);
  // Put back while still the package's: a wrapper added over it stays
  // (node-internals.js patchedEnd()).
  if (installed.endPatch !== null) {
    installed.endPatch.retire();
    if (proto.end === installed.endPatch.method) restoreProperty(proto, 'end', installed.endPatch.descriptor);
  }
  installed = null;
}

module.exports = { requestEnd, installClient, uninstallClient };
