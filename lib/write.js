'use strict';

// The part every fast call shares: may this response be written directly,
// how is the body handed to the addon, and what happens once the bytes are
// out (or only partly out). The head rendering lives in src/head.cc.

const { binding } = require('./binding');
const { splitJoined } = require('./fields');
const {
  ServerResponse, STATUS_CODES, nodeEnd, ownWriteHead, kRejectNonStandardBodyWrites,
} = require('./node-internals');

// Body kinds and flags, as src/addon.cc reads `bodyFlags`.
const BODY_NONE = 0;
const BODY_UTF8 = 1;
const BODY_LATIN1 = 2;
const BODY_BYTES = 3;
const HEAD_UTF8 = 4;
const CHUNKED = 8;

// `stateBits`, as src/addon.cc reads them.
const SEND_DATE = 1 << 0;
const SHOULD_KEEP_ALIVE = 1 << 1;
const USE_CHUNKED_BY_DEFAULT = 1 << 2;
const HAS_BODY = 1 << 3;
const REMOVED_CONNECTION = 1 << 4;
const REMOVED_CONTENT_LENGTH = 1 << 5;
const REMOVED_TRANSFER_ENCODING = 1 << 6;
const MAX_REQUESTS_REACHED = 1 << 7;
const LAST = 1 << 8;
const KEEP_ALIVE_TIMEOUT_SET = 1 << 9;
const VALIDATE = 1 << 10;
const CONTENT_LENGTH_AS_FIELD = 1 << 11;

// Result bits (results[1]) and the FieldFlag bits of src/head.h above them.
const RESULT_LAST = 1 << 0;
const RESULT_CHUNKED = 1 << 1;
const RESULT_SHOULD_KEEP_ALIVE = 1 << 2;
const FIELD_SHIFT = 8;
const FIELD_CONNECTION = 1 << (FIELD_SHIFT + 0);
const FIELD_CONTENT_LENGTH = 1 << (FIELD_SHIFT + 2);
const FIELD_KEEP_ALIVE = 1 << (FIELD_SHIFT + 8);

// FieldFlag kFieldContentLength (src/head.h), as compileTemplate() reports
// the template's fields in results[1].
const FIELD_FLAG_CONTENT_LENGTH = 1 << 2;

// FieldFlag bits (src/head.h) that make the fast path step aside:
// Transfer-Encoding, Expect, Trailer, non-ASCII Content-Disposition.
const FALLBACK_FIELDS = (1 << 3) | (1 << 6) | (1 << 7) | (1 << 9);

// results[0] when nothing was written.
const INVALID = -1;

const results = binding === null ? new Float64Array(5) : binding.results;
const args = binding === null ? new Float64Array(9) : binding.args;

// ---------------------------------------------------------------------------
// The addon's write calls. Numbers go through `args` (src/addon.cc kArg*),
// the strings and the body as arguments.

const ARG_FD = 0;
const ARG_STATUS_CODE = 1;
const ARG_FIELD_COUNT = 2;
const ARG_STATE_BITS = 3;
const ARG_KEEP_ALIVE_SECONDS = 4;
const ARG_MAX_REQUESTS = 5;
const ARG_BODY_FLAGS = 6;
const ARG_BODY_UNITS = 7;
const ARG_FIELD_FLAGS = 8;

// The arguments every rendering write takes.
function setWriteArgs(fd, bits, seconds, max, bodyFlags, units) {
  args[ARG_FD] = fd;
  args[ARG_STATE_BITS] = bits;
  args[ARG_KEEP_ALIVE_SECONDS] = seconds;
  args[ARG_MAX_REQUESTS] = max;
  args[ARG_BODY_FLAGS] = bodyFlags;
  args[ARG_BODY_UNITS] = units;
}

/**
 * Renders the head (status line, the fields of `text`, then what
 * _storeHeader() adds) and writes head and body with one writev(2).
 * `text`: the reason phrase and `count` fields, lib/fields.js. Returns the
 * head as a latin1 string, or undefined when nothing was written
 * (results[0]: INVALID, or a case left to Node).
 */
function writeResponse(fd, statusCode, text, count, bits, seconds, max, body, bodyFlags, units) {
  setWriteArgs(fd, bits, seconds, max, bodyFlags, units);
  args[ARG_STATUS_CODE] = statusCode;
  args[ARG_FIELD_COUNT] = count;
  return binding.writeResponse(text, body);
}

/** writeResponse() with a head compiled by binding.compileTemplate(). */
function writeTemplate(fd, prepared, fieldFlags, bits, seconds, max, body, bodyFlags, units) {
  setWriteArgs(fd, bits, seconds, max, bodyFlags, units);
  args[ARG_FIELD_FLAGS] = fieldFlags;
  return binding.writeTemplate(prepared, body);
}

/** Writes a head Node rendered (`_header`) and the body; returns the bytes not written. */
function writeRendered(fd, header, body, bodyFlags, units) {
  args[ARG_FD] = fd;
  args[ARG_BODY_FLAGS] = bodyFlags;
  args[ARG_BODY_UNITS] = units;
  return binding.writeRendered(header, body);
}

// ---------------------------------------------------------------------------
// Statistics: per thread, like everything in this module.

let fastWrites = 0;
let partialWrites = 0;
let fallbacks = 0;
let reasons = { __proto__: null };

function countFallback(reason) {
  fallbacks++;
  reasons[reason] = (reasons[reason] || 0) + 1;
}

function stats() {
  return {
    fast: fastWrites,
    partial: partialWrites,
    fallback: fallbacks,
    reasons: { ...reasons },
  };
}

function resetStats() {
  fastWrites = 0;
  partialWrites = 0;
  fallbacks = 0;
  reasons = { __proto__: null };
}

// ---------------------------------------------------------------------------
// When the fast path may run (the design's "fast path and its fallback").

const net = require('node:net');
const { OutgoingMessage } = require('./node-internals');

// Node 18's _storeHeader() closes the connection after removeHeader
// ('Connection'); Node 20 and later keep it alive when the request asked to.
// src/head.cc renders the later rule, so on Node 18 that case is Node's.
const REMOVED_CONNECTION_KEEPS_ALIVE =
  /_last\s*=\s*!this\.shouldKeepAlive/.test(OutgoingMessage.prototype._storeHeader.toString());
const socketWrite = net.Socket.prototype.write;

/**
 * Whether the response refuses a body (HEAD, 1xx, 204, 304) with
 * ERR_HTTP_BODY_NOT_ALLOWED (the server's rejectNonStandardBodyWrites):
 * then Node throws, so the call is Node's.
 */
function rejectsBody(res) {
  return !res._hasBody && kRejectNonStandardBodyWrites !== undefined &&
    res[kRejectNonStandardBodyWrites] === true;
}

/** Whether a response with this status code carries a body (not 1xx, 204, 304). */
function statusHasBody(statusCode) {
  return !(statusCode === 204 || statusCode === 304 ||
           (statusCode >= 100 && statusCode <= 199));
}

/**
 * What writeHead() does to the response before it renders (status code and
 * message, no body for 204/304/1xx, no keep-alive after an unanswered
 * `Expect: 100-continue`). Returns the reason phrase as a string.
 */
function prepareStatus(res, statusCode) {
  if (!res.statusMessage) res.statusMessage = STATUS_CODES[statusCode] || 'unknown';
  res.statusCode = statusCode;
  if (!statusHasBody(statusCode)) res._hasBody = false;
  if (res._expect_continue && !res._sent100) res.shouldKeepAlive = false;
  const reason = res.statusMessage;
  return typeof reason === 'string' ? reason : '' + reason;
}

/**
 * Returns the socket's file descriptor when `res` may be written directly,
 * or a fallback reason (a string).
 */
function directFd(res) {
  if (binding === null) return 'no-addon';
  if (res.finished || res.destroyed) return 'finished';
  if (res._headerSent) return 'head-sent';
  if (res.strictContentLength) return 'strict-content-length';
  if (res.outputData.length !== 0) return 'queued';
  const socket = res.socket;
  if (socket === null || socket === undefined || socket._httpMessage !== res) {
    return 'not-current';
  }
  if (socket.encrypted) return 'tls';
  // Instrumentation that wraps socket.write() must see the bytes.
  if (socket.write !== socketWrite) return 'socket-write-replaced';
  if (socket.destroyed || !socket.writable) return 'socket-closed';
  if (socket.writableLength !== 0 || socket.writableCorked !== 0) {
    return 'socket-busy';
  }
  const handle = socket._handle;
  if (handle === null || handle === undefined) return 'no-fd';
  if (handle.writeQueueSize !== 0) return 'socket-busy';
  const fd = handle.fd;
  if (typeof fd !== 'number' || fd < 0) return 'no-fd';
  if (rejectsBody(res)) return 'body-not-allowed';
  if (res._removedConnection && !REMOVED_CONNECTION_KEEPS_ALIVE) {
    return 'removed-connection';
  }
  return fd;
}

/**
 * Classifies a body for the addon. Returns the body kind (BODY_*, with
 * HEAD_UTF8 where Node sends `_header + chunk` as one UTF-8 string), or -1
 * when the encoding is one this package converts first (see toBytes), or a
 * fallback reason.
 */
function bodyKind(chunk, encoding) {
  if (typeof chunk === 'string') {
    if (chunk.length === 0) return 'empty-body';
    // lib/_http_outgoing.js _send(): `encoding === 'utf8' || !encoding`
    // concatenates the head to the body, so the head is UTF-8 encoded too.
    if (!encoding || encoding === 'utf8') return BODY_UTF8 | HEAD_UTF8;
    if (encoding === 'latin1' || encoding === 'binary' || encoding === 'ascii') {
      return BODY_LATIN1;
    }
    if (typeof encoding === 'string') {
      const lower = encoding.toLowerCase();
      if (lower === 'utf8' || lower === 'utf-8') return BODY_UTF8;
      if (lower === 'latin1' || lower === 'binary' || lower === 'ascii') {
        return BODY_LATIN1;
      }
      if (Buffer.isEncoding(encoding)) return -1;
    }
    return 'encoding';
  }
  // An empty (or detached) buffer is Node's: it writes no body, or throws.
  if (chunk instanceof Uint8Array) return chunk.byteLength === 0 ? 'empty-body' : BODY_BYTES;
  return chunk ? 'body-type' : 'no-body';
}

/**
 * A string in an encoding the addon does not write itself (hex, base64, ...)
 * as bytes, or null when Node's Content-Length for it (Buffer.byteLength)
 * would not match the bytes Node writes: that case is left to Node.
 */
function toBytes(chunk, encoding) {
  const bytes = Buffer.from(chunk, encoding);
  return bytes.length === Buffer.byteLength(chunk, encoding) ? bytes : null;
}

// ---------------------------------------------------------------------------
// After the write.

const kFastBytes = Symbol('fastResponse.bytesWritten');

// socket.bytesWritten counts what libuv wrote. Bytes written here are added
// by shadowing the handle's `bytesWritten`, once per connection.
function countBytes(handle, n) {
  if (handle[kFastBytes] === undefined) {
    let proto = Object.getPrototypeOf(handle);
    let descriptor;
    while (proto !== null && descriptor === undefined) {
      descriptor = Object.getOwnPropertyDescriptor(proto, 'bytesWritten');
      proto = Object.getPrototypeOf(proto);
    }
    handle[kFastBytes] = 0;
    if (descriptor !== undefined && typeof descriptor.get === 'function') {
      const get = descriptor.get;
      Object.defineProperty(handle, 'bytesWritten', {
        __proto__: null,
        configurable: true,
        enumerable: descriptor.enumerable,
        get() {
          return get.call(this) + this[kFastBytes];
        },
      });
    }
  }
  handle[kFastBytes] += n;
}

/**
 * The bytes are out (or handed over): finish the response the way Node's own
 * end() does, by letting Node's end() run with the head marked as sent. It
 * then emits 'prefinish' now and 'finish' after the socket has taken the
 * last byte, and the server's own 'finish' listener moves on to keep-alive,
 * the next pipelined response or closing the connection.
 *
 * `remaining` bytes (a full socket buffer, EAGAIN, or an error that libuv is
 * left to meet and report) go to socket.write(), where Node's backpressure
 * and error handling take them.
 */
function complete(res, socket, written, remaining, chunk, callback) {
  res._headerSent = true;
  if (remaining !== 0) {
    partialWrites++;
    // Corked, as in Node's own end(): the rest and end()'s own final write
    // go out together when end() uncorks, and an error reaches all of them
    // (and 'prefinish', 'finish') the way it does in Node.
    socket.cork();
    if (written < 0) failNextWrite(socket._handle, written);
    handOver(socket, chunk);
  } else {
    fastWrites++;
  }
  if (written !== 0) {
    // A failed write counts its bytes too, as libuv's bytesWritten does.
    countBytes(socket._handle, written > 0 ? written : remaining);
    socket._unrefTimer();
  }
  if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);
  // The last chunk went out with the body: end() must not write it again.
  res.chunkedEncoding = false;
  try {
    return nodeEnd.call(res, null, null, callback);
  } finally {
    res.chunkedEncoding = true;
  }
}

const kHandleWrites = ['writev', 'writeBuffer', 'writeAsciiString',
                       'writeLatin1String', 'writeUtf8String', 'writeUcs2String'];

// writev(2) failed with `errno` (results[3] < 0). The socket may report that
// error only once (ECONNRESET; the next write sees EPIPE): the handle's next
// write fails with it without a syscall, and Node's stream code reports it
// as it reports a failed write (ErrnoException(errno, 'write')).
function failNextWrite(handle, errno) {
  const fail = () => {
    for (const name of kHandleWrites) delete handle[name];
    return errno;
  };
  for (const name of kHandleWrites) handle[name] = fail;
}

// What the addon could not write, in order, to socket.write(): copies of its
// own bytes, and the unwritten end of a Buffer body as a view, not a copy.
function handOver(socket, chunk) {
  const parts = binding.pending();
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (typeof part !== 'number') {
      socket.write(part);
    } else {
      const length = chunk.byteLength;
      socket.write(part === length ? chunk : chunk.subarray(length - part));
    }
  }
}

/** Response state as src/addon.cc's `stateBits`, or a fallback reason. */
function stateBits(res) {
  let bits = 0;
  if (res.sendDate) bits |= SEND_DATE;
  if (res.shouldKeepAlive) bits |= SHOULD_KEEP_ALIVE;
  if (res.useChunkedEncodingByDefault) bits |= USE_CHUNKED_BY_DEFAULT;
  if (res._hasBody) bits |= HAS_BODY;
  if (res._removedConnection) bits |= REMOVED_CONNECTION;
  if (res._removedContLen) bits |= REMOVED_CONTENT_LENGTH;
  if (res._removedTE) bits |= REMOVED_TRANSFER_ENCODING;
  if (res.maxRequestsOnConnectionReached) bits |= MAX_REQUESTS_REACHED;
  if (res._last) bits |= LAST;
  if (res._keepAliveTimeout && res._defaultKeepAlive) bits |= KEEP_ALIVE_TIMEOUT_SET;
  return bits;
}

/**
 * `Math.floor(_keepAliveTimeout / 1000)` as _storeHeader() writes it, or
 * NaN when it is not an integer the addon can print the way JavaScript does.
 */
function keepAliveSeconds(res) {
  const t = res._keepAliveTimeout;
  if (!t) return 0;
  const s = Math.floor(t / 1000);
  return Number.isSafeInteger(s) ? s : NaN;
}

/** `max=` of the Keep-Alive field, 0 for none, NaN for a non-integer. */
function maxRequests(res) {
  const m = res._maxRequestsPerSocket;
  if (!(~~m > 0)) return 0;
  return Number.isSafeInteger(m) ? m : NaN;
}

/**
 * Applies what the addon's head rendering decided to the response, as
 * writeHead() and _storeHeader() would have (results[1]). `joined`: the
 * caller's fields as the addon got them (lib/fields.js); `contentLength`,
 * when given, is `_contentLength` for a head with a Content-Length field
 * (template(): known when it was made).
 */
function applyHead(res, header, joined, contentLength) {
  const r = results[1];
  res._header = header;
  res._last = (r & RESULT_LAST) !== 0;
  res.chunkedEncoding = (r & RESULT_CHUNKED) !== 0;
  res.shouldKeepAlive = (r & RESULT_SHOULD_KEEP_ALIVE) !== 0;
  if ((r & FIELD_CONNECTION) !== 0) res._removedConnection = false;
  if ((r & FIELD_KEEP_ALIVE) !== 0) res._defaultKeepAlive = false;
  if ((r & FIELD_CONTENT_LENGTH) !== 0) {
    res._removedContLen = false;
    res._contentLength = contentLength !== undefined && contentLength !== null ?
      contentLength : contentLengthOf(joined);
  }
}

// matchHeader(): `_contentLength = +value` of the last Content-Length field
// (Node 20 and later); Node 18 keeps the value as given, a string here
// (test/edges.test.js compares `_contentLength` with Node's own end()).
const CONTENT_LENGTH_AS_NUMBER = (() => {
  const probe = new ServerResponse({
    method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {},
  });
  ownWriteHead(probe, 200, { 'Content-Length': '0' });
  return probe._contentLength === 0;
})();

// Node 18's _storeHeader() differs from Node 20+ in its keep-alive and
// Content-Length rules, which src/head.cc renders. There Node renders every
// head itself (writeHead()/_implicitHeader()) and the addon writes it with
// the body: the write path gains, the head stays Node 18's own.
const NODE_RENDERS_HEAD = !REMOVED_CONNECTION_KEEPS_ALIVE || !CONTENT_LENGTH_AS_NUMBER;

/**
 * `_contentLength` after a head with a Content-Length field: results[4]
 * holds the last such field's value when it is plain decimal digits (or the
 * body length, when send() added the field); anything else (' 12', '0x10',
 * '') is `+value` of the last field in `joined`.
 */
function contentLengthOf(joined) {
  const simple = results[4];
  if (simple >= 0 && CONTENT_LENGTH_AS_NUMBER) return simple;
  const fields = splitJoined(joined);
  let value = null;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      value = CONTENT_LENGTH_AS_NUMBER ? +fields[i + 1] : fields[i + 1];
    }
  }
  return value === null ? simple : value;
}

module.exports = {
  binding,
  results,
  writeResponse,
  writeTemplate,
  writeRendered,
  BODY_NONE,
  BODY_UTF8,
  BODY_LATIN1,
  BODY_BYTES,
  HEAD_UTF8,
  CHUNKED,
  VALIDATE,
  CONTENT_LENGTH_AS_FIELD,
  INVALID,
  FALLBACK_FIELDS,
  FIELD_FLAG_CONTENT_LENGTH,
  NODE_RENDERS_HEAD,
  directFd,
  rejectsBody,
  statusHasBody,
  prepareStatus,
  bodyKind,
  toBytes,
  stateBits,
  keepAliveSeconds,
  maxRequests,
  applyHead,
  contentLengthOf,
  complete,
  countFallback,
  stats,
  resetStats,
};
