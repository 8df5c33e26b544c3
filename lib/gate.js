'use strict';

// The gate before a native write, and the way back. writeDirect() is the
// one place that decides whether a response may be written directly now
// (the design's "fast path and its fallback"), calls the addon, and maps
// what the addon reports back onto the response, for end(), send() and
// template().send() alike. The head rendering itself is src/head.cc.

const { binding, layout, results, args } = require('./binding');
const { R } = require('./reasons');
const { SEP, joinHeaderMap } = require('./headers');
const { bodyArgs } = require('./body');
const {
  STATUS_CODES, isNodesHead, nodeImplicitHeader, kOutHeaders, uniqueHeadersOf,
  kRejectNonStandardBodyWrites, REMOVED_CONNECTION_KEEPS_ALIVE, NODE_RENDERS_HEAD, sendsThroughNode,
} = require('./node-internals');
const { applyHead, complete } = require('./complete');
const { socketFd } = require('./socket-fd');
const { RENDER_ONLY, wroteCurrent, queuedWriter, setWriterArgs, completeQueued } = require('./pipeline');

const {
  ARG_FD, ARG_STATUS_CODE, ARG_FIELD_COUNT, ARG_STATE_BITS, ARG_KEEP_ALIVE_SECONDS,
  ARG_MAX_REQUESTS, ARG_HEAD_UNITS,
  RESULT_REMAINING, RESULT_BODY_LENGTH, RESULT_WRITTEN, RESULT_REASON, STEP_ASIDE_NAMES,
  BODY_NONE, BODY_UTF8, BODY_BYTES, BODY_KIND_MASK, HEAD_UTF8, CHUNKED,
  SEND_DATE, SHOULD_KEEP_ALIVE, USE_CHUNKED_BY_DEFAULT, HAS_BODY, REMOVED_CONNECTION,
  REMOVED_CONTENT_LENGTH, REMOVED_TRANSFER_ENCODING, MAX_REQUESTS_REACHED, LAST,
  KEEP_ALIVE_TIMEOUT_SET, VALIDATE, CONTENT_LENGTH_AS_FIELD,
} = layout;

// Where the head comes from (writeDirect()'s `from`).
/** end(): the response's own state — Node's `_header` when writeHead() rendered it, else statusCode, statusMessage and the setHeader() map. */
const FROM_RESPONSE = 0;
/** send(): a status code and joined header fields, validated by the addon. */
const FROM_FIELDS = 1;
/** template().send(): the status line and fields compiled by compileTemplate(). */
const FROM_TEMPLATE = 2;

/**
 * Writes `res` natively, head and body with one writev(2), and finishes it
 * as Node's end() finishes it (lib/complete.js); or writes nothing and says
 * why. `from` says where the head comes from: FROM_RESPONSE (end(): the
 * other head arguments are unused), FROM_FIELDS (`head`: the joined fields
 * of lib/headers.js, `count` of them) or FROM_TEMPLATE (`head`: the
 * compiled template). `kind`: the body's kind (lib/body.js).
 * `contentLength`: a template's `_contentLength`, when it names one.
 * `headJoined`: the encoding of the one string Node's _send() makes of the
 * head and a string body ('utf8', 'latin1'), or false; by default 'utf8'
 * for a kind with HEAD_UTF8 (what a failed write counts: lib/complete.js).
 *
 * @returns {object|string} `res` when written; otherwise the reason (a
 *   name of lib/reasons.js), and the caller takes Node's path.
 */
function writeDirect(res, from, statusCode, head, count, body, kind, callback, contentLength, headJoined) {
  if (binding === null) return R.NO_ADDON;
  const fd = directFd(res);
  if (typeof fd === 'string') return fd;
  const joinedAs = headJoined ?? ((kind & HEAD_UTF8) !== 0 && 'utf8');
  let code = statusCode;
  let fields = head;
  let fieldCount = count;
  let extraBits = CONTENT_LENGTH_AS_FIELD;
  if (from === FROM_RESPONSE) {
    // A head rendered by writeHead() but not sent yet: write it as it is.
    if (res._header !== null) return writeNodeHead(res, fd, body, kind, callback, joinedAs);
    if (res.chunkedEncoding) return R.CHUNKED;
    // writeHead() replaced on the response (on-headers, compression, ...):
    // Node's end() calls it through _implicitHeader(), so let it render.
    // So does Node 18, whose head rules differ from src/head.cc's, and so
    // does a replaced _storeHeader() (an agent's), which writeHead() calls.
    if (NODE_RENDERS_HEAD || !isNodesHead(res) || res._implicitHeader !== nodeImplicitHeader) {
      return renderByNode(res, body, kind, callback, joinedAs);
    }
    // What _implicitHeader() -> writeHead(this.statusCode) ->
    // _storeHeader() do, with the head rendered by src/head.cc.
    code = res.statusCode | 0;
    if (code < 100 || code > 999) return R.INVALID;
    const joined = joinHeaderMap(kOutHeaders === undefined ? null : res[kOutHeaders]);
    if (joined === null) return R.FIELD_CONTENT_DISPOSITION;
    // uniqueHeaders: the server joins array values of those fields with ', '.
    if (joined.arrays && uniqueHeadersOf(res)) return R.UNIQUE_HEADERS;
    fields = joined.joined;
    fieldCount = joined.count;
    extraBits = 0;
  } else if (from === FROM_FIELDS) {
    extraBits = VALIDATE | CONTENT_LENGTH_AS_FIELD;
  }
  if (!setKeepAliveArgs(res)) return R.KEEP_ALIVE_VALUE;
  const reason = prepareStatus(res, code);
  if (rejectsBody(res) && kind !== BODY_NONE) return R.BODY_NOT_ALLOWED;

  args[ARG_FD] = fd;
  setWriterArgs(fd, res, body, kind);
  args[ARG_STATE_BITS] = stateBits(res) | extraBits;
  // Without a body (HEAD, 204, 304) only the head goes out. end() still
  // passes the body's kind: `_contentLength` is its byte length.
  const data = bodyArgs(res._hasBody ? kind : (from === FROM_RESPONSE ? kind & BODY_KIND_MASK : BODY_NONE), body);
  let header;
  if (from === FROM_TEMPLATE) {
    header = binding.writeTemplate(fields, data);
  } else {
    args[ARG_STATUS_CODE] = code;
    args[ARG_FIELD_COUNT] = fieldCount;
    header = binding.writeResponse(reason + SEP + fields, data);
  }
  if (header === undefined) return STEP_ASIDE_NAMES[results[RESULT_REASON]];
  // write_(): `_contentLength` is the body's byte length, unless a
  // Content-Length field says otherwise (applyHead()).
  if (from === FROM_RESPONSE) res._contentLength = results[RESULT_BODY_LENGTH];
  applyHead(res, header, from === FROM_TEMPLATE ? '' : fields, contentLength);
  return finish(res, fd, body, kind, callback, joinedAs);
}

/**
 * The bytes are out, or (a response waiting behind the socket's current
 * one) in the socket's batch: Node's end() finishes the response.
 */
function finish(res, fd, body, kind, callback, headJoined) {
  if (fd === RENDER_ONLY) return completeQueued(res, body, kind, callback, headJoined);
  const socket = res.socket;
  const done = complete(res, results[RESULT_WRITTEN], results[RESULT_REMAINING], body, callback, undefined,
                        headJoined);
  wroteCurrent(res, socket);
  return done;
}

/**
 * Returns the socket's file descriptor when `res` may be written directly,
 * RENDER_ONLY when it waits behind the socket's current response and may
 * join the socket's batch (lib/pipeline.js), or a fallback reason.
 */
function directFd(res) {
  if (res.finished || res.destroyed) return R.FINISHED;
  if (res._headerSent) return R.HEAD_SENT;
  if (res.strictContentLength) return R.STRICT_CONTENT_LENGTH;
  if (res.outputData.length !== 0) return R.QUEUED;
  if (!sendsThroughNode(res)) return R.WRITE_RAW_REPLACED;
  const socket = res.socket;
  if (socket === null || socket === undefined) {
    if (queuedWriter(res) === null) return R.NOT_CURRENT;
    return bodyRules(res) || RENDER_ONLY;
  }
  if (socket._httpMessage !== res) return R.NOT_CURRENT;
  const fd = socketFd(socket, 0);
  if (typeof fd === 'string') return fd;
  return bodyRules(res) || fd;
}

/** What of the response's own state leaves it to Node, or null. */
function bodyRules(res) {
  if (rejectsBody(res)) return R.BODY_NOT_ALLOWED;
  if (res._removedConnection && !REMOVED_CONNECTION_KEEPS_ALIVE) {
    return R.REMOVED_CONNECTION;
  }
  return null;
}

// A chunked response is written here only without trailers (addTrailers())
// and with a non-empty body: Node writes an empty chunk without framing.
function chunkedFast(res, chunk, kind) {
  return res._trailer === '' && res._hasBody &&
    ((kind & BODY_KIND_MASK) !== BODY_BYTES || chunk.byteLength !== 0);
}

/**
 * end() after writeHead(): Node's own `_header` and the body. Without a body
 * only the head goes out, as latin1 (Node's `_send('')`); a chunked head
 * (writeHead() without Content-Length) gets the body as one chunk and the
 * last chunk, as write_() and end() frame them. write_() sends the
 * chunk-size line first, as latin1, and the head goes with it: a chunked
 * head is latin1 whatever the body's encoding.
 */
function writeNodeHead(res, fd, body, kind, callback, headJoined) {
  if (res.chunkedEncoding && !chunkedFast(res, body, kind)) return R.CHUNKED;
  args[ARG_FD] = fd;
  setWriterArgs(fd, res, body, kind);
  const data = bodyArgs(!res._hasBody ? BODY_NONE :
    (res.chunkedEncoding ? (kind & ~HEAD_UTF8) | CHUNKED : kind), body);
  args[ARG_HEAD_UNITS] = res._header.length;
  binding.writeRendered(res._header, data);
  return finish(res, fd, body, kind, callback, headJoined);
}

/** Node's connectionCorkNT(): the uncork a tick's cork() scheduled. */
function uncorkNT(socket) {
  socket.uncork();
}

/**
 * end() where Node renders the head (a replaced writeHead(), Node 18): let
 * it, then write its `_header` with the body.
 */
function renderByNode(res, body, kind, callback, headJoined) {
  res._contentLength = (kind & BODY_KIND_MASK) === BODY_BYTES ?
    body.byteLength :
    Buffer.byteLength(body, (kind & BODY_KIND_MASK) === BODY_UTF8 ? 'utf8' : 'latin1');
  // Corked around it as in Node's end(): a writeHead() that throws leaves
  // the socket corked there too (the next end() uncorks it). A head sent at
  // once (an Expect field) stays corked for Node's end(), which then writes
  // it with the body in one write as its own end() does (and uncorks fully);
  // the next tick uncorks it whatever happens. A queued response has no
  // socket yet.
  const socket = res.socket;
  if (socket !== null && socket !== undefined) socket.cork();
  res._implicitHeader();
  if (socket !== null && socket !== undefined) {
    if (res._headerSent) process.nextTick(uncorkNT, socket);
    else socket.uncork();
  }
  const fd = directFd(res);
  if (typeof fd === 'string') return fd;
  if (res._header === null) return R.NO_HEAD;
  return writeNodeHead(res, fd, body, kind, callback, headJoined);
}

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

/** The response's state as src/layout.h StateBit bits. */
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
 * args[ARG_KEEP_ALIVE_SECONDS] and args[ARG_MAX_REQUESTS] for `res` (what
 * _storeHeader() prints in Keep-Alive); false, nothing set, when the addon
 * cannot print them as Node does (a non-integer).
 */
function setKeepAliveArgs(res) {
  const seconds = keepAliveSeconds(res);
  const max = maxRequests(res);
  if (seconds !== seconds || max !== max) return false;
  args[ARG_KEEP_ALIVE_SECONDS] = seconds;
  args[ARG_MAX_REQUESTS] = max;
  return true;
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

module.exports = {
  FROM_RESPONSE, FROM_FIELDS, FROM_TEMPLATE, writeDirect, uncorkNT, statusHasBody, stateBits,
  setKeepAliveArgs,
};
