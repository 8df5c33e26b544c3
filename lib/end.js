'use strict';

// fastResponse.end(res, data[, encoding][, callback]): Node's
// `res.end(data, encoding, callback)` with the head rendered natively and
// head and body sent with one writev(2). Anything the fast path does not
// cover goes to Node's own end() with the same arguments.

const {
  ServerResponse,
  nodeEnd,
  nodeWriteHead,
  nodeImplicitHeader,
  kOutHeaders,
  uniqueHeadersOf,
} = require('./node-internals');
const w = require('./write');
const { SEP, joinHeaderMap } = require('./fields');

const { results } = w;

// A chunked response is written here only without trailers (addTrailers())
// and with a non-empty body: Node writes an empty chunk without framing.
function chunkedFast(res, chunk, kind) {
  return res._trailer === '' && res._hasBody &&
    ((kind & 3) !== w.BODY_BYTES || chunk.byteLength !== 0);
}

// Set while send() hands a response it could not render to Node: send()
// has counted that call's fallback already, so end() does not count it again.
let inSendFallback = false;

function fallback(res, reason, data, encoding, callback) {
  if (!inSendFallback) w.countFallback(reason);
  return nodeEnd.call(res, data, encoding, callback);
}

/**
 * end() for send()'s Node path: the head is Node's; the body may still go
 * out fast (counted as such); the fallback was counted by send().
 */
function endAfterNodeHead(res, data) {
  inSendFallback = true;
  try {
    return end(res, data);
  } finally {
    inSendFallback = false;
  }
}

/**
 * Node's `res.end(data, encoding, callback)`, fast. See index.js for the
 * public documentation.
 *
 * @param {import('http').ServerResponse} res
 * @param {string|Uint8Array} data
 * @param {string|Function} [encoding]
 * @param {Function} [callback]
 * @returns {import('http').ServerResponse}
 */
function end(res, data, encoding, callback) {
  let chunk = data;
  let enc = encoding;
  let cb = callback;
  if (typeof enc === 'function') {
    cb = enc;
    enc = undefined;
  }
  let kind = w.bodyKind(chunk, enc);
  if (typeof kind === 'string') return fallback(res, kind, data, encoding, callback);
  if (kind === -1) {
    chunk = w.toBytes(chunk, enc);
    if (chunk === null) return fallback(res, 'encoding', data, encoding, callback);
    kind = w.BODY_BYTES;
  }
  const fd = w.directFd(res);
  if (typeof fd === 'string') return fallback(res, fd, data, encoding, callback);

  // A head rendered by writeHead() but not sent yet: write it as it is.
  if (res._header !== null) {
    if (res.chunkedEncoding && !chunkedFast(res, chunk, kind)) {
      return fallback(res, 'chunked', data, encoding, callback);
    }
    return endRendered(res, fd, chunk, kind, cb);
  }
  if (res.chunkedEncoding) return fallback(res, 'chunked', data, encoding, callback);

  // writeHead() replaced on the response (on-headers, compression, ...):
  // Node's end() calls it through _implicitHeader(), so let it render.
  // So does Node 18, whose head rules differ from src/head.cc's (write.js).
  if (w.NODE_RENDERS_HEAD || res.writeHead !== nodeWriteHead ||
      res._implicitHeader !== nodeImplicitHeader) {
    res._contentLength = (kind & 3) === w.BODY_BYTES ?
      chunk.byteLength :
      Buffer.byteLength(chunk, (kind & 3) === w.BODY_UTF8 ? 'utf8' : 'latin1');
    // Corked around it as in Node's end(): a writeHead() that throws leaves
    // the socket corked there too (the next end() uncorks it).
    const socket = res.socket;
    socket.cork();
    res._implicitHeader();
    socket.uncork();
    const again = w.directFd(res);
    if (typeof again === 'string' || res._header === null ||
        (res.chunkedEncoding && !chunkedFast(res, chunk, kind))) {
      return fallback(res, typeof again === 'string' ? again : 'no-head', data, encoding, callback);
    }
    return endRendered(res, again, chunk, kind, cb);
  }

  // What _implicitHeader() -> writeHead(this.statusCode) -> _storeHeader()
  // do, with the head rendered by src/head.cc.
  const statusCode = res.statusCode | 0;
  if (statusCode < 100 || statusCode > 999) {
    return fallback(res, 'invalid', data, encoding, callback);
  }
  const map = kOutHeaders === undefined ? null : res[kOutHeaders];
  const fields = joinHeaderMap(map);
  if (fields === null) return fallback(res, 'head-fields', data, encoding, callback);
  // uniqueHeaders: the server joins array values of those fields with ', '.
  if (fields.arrays && uniqueHeadersOf(res)) {
    return fallback(res, 'unique-headers', data, encoding, callback);
  }
  const seconds = w.keepAliveSeconds(res);
  const max = w.maxRequests(res);
  if (seconds !== seconds || max !== max) {
    return fallback(res, 'keep-alive-value', data, encoding, callback);
  }

  const reason = w.prepareStatus(res, statusCode);
  if (w.rejectsBody(res)) return fallback(res, 'body-not-allowed', data, encoding, callback);

  // Without a body (HEAD, 204, 304) only the head goes out, as latin1; the
  // body's kind is still passed: `_contentLength` is its byte length.
  const hasBody = res._hasBody;
  const header = w.writeResponse(
    fd, statusCode, reason + SEP + fields.joined,
    fields.count, w.stateBits(res), seconds, max,
    chunk, hasBody ? kind : (kind & 3), typeof chunk === 'string' ? chunk.length : 0);
  if (header === undefined) {
    return fallback(res, results[0] === w.INVALID ? 'invalid' : 'head-fields',
                    data, encoding, callback);
  }
  const remaining = results[0];
  // write_(): `_contentLength` is the body's byte length, unless a
  // Content-Length field says otherwise.
  res._contentLength = results[2];
  w.applyHead(res, header, fields.joined);
  return w.complete(res, res.socket, results[3], remaining, chunk, cb);
}

function endRendered(res, fd, chunk, kind, callback) {
  // Without a body only the head goes out, as latin1 (Node's `_send('')`);
  // a chunked head (writeHead() without Content-Length) gets the body as one
  // chunk and the last chunk, as write_() and end() frame them. write_()
  // sends the chunk-size line first, as latin1, and the head goes with it:
  // a chunked head is latin1 whatever the body's encoding.
  const bodyFlags = !res._hasBody ? w.BODY_NONE :
    (res.chunkedEncoding ? (kind & ~w.HEAD_UTF8) | w.CHUNKED : kind);
  const remaining = w.writeRendered(
    fd, res._header, chunk, bodyFlags,
    typeof chunk === 'string' ? chunk.length : 0);
  return w.complete(res, res.socket, results[3], remaining, chunk, callback);
}

module.exports = { end, endAfterNodeHead, ServerResponse };
