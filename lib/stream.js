'use strict';

// fastResponse.write(res, chunk[, encoding][, callback]): Node's
// `res.write(chunk, encoding, callback)`, each chunk framed natively.
//
// Node's write() (lib/_http_outgoing.js write_()) hands a chunk of a
// chunked body to the socket as four writes (size line, CRLF, data, CRLF),
// each through stream.Writable, corks the socket for the tick and uncorks
// it on the next, so that the tick's writes leave with one writev(2). Here
// the addon frames the chunk (and the head, with the first one) into one
// Buffer and it goes to the socket as one write: the socket's cork, its
// buffer, write()'s return value, 'drain', callbacks and errors are then
// Node's own, byte for byte.
//
// Node 24 and later collect the chunked writes of a corked tick themselves
// (kChunkedBuffer) and send them as one chunk: there write() is Node's.

const { binding, layout, args } = require('./binding');
const { R } = require('./reasons');
const { bodyKind, bodyUnits } = require('./body');
const {
  nodeWrite, socketWrite, kNeedDrain, NODE_COMBINES_CHUNKS, SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT,
} = require('./node-internals');
const { countFallback, countWrite } = require('./stats');

const {
  ARG_BODY_FLAGS, ARG_BODY_UNITS, ARG_HEAD_UNITS, HEAD_UTF8, CHUNKED,
} = layout;

function uncorkNT(socket) {
  socket.uncork();
}

/**
 * Why `res.write(chunk)` is Node's, or null: the response is the socket's
 * current one and can take a chunk now.
 */
function writeReason(res) {
  if (binding === null) return R.NO_ADDON;
  if (NODE_COMBINES_CHUNKS) return R.NODE_COMBINES_CHUNKS;
  if (res.finished || res.destroyed) return R.FINISHED;
  if (res.strictContentLength) return R.STRICT_CONTENT_LENGTH;
  if (res.outputData.length !== 0) return R.QUEUED;
  const socket = res.socket;
  if (socket === null || socket === undefined || socket._httpMessage !== res) return R.NOT_CURRENT;
  if (socket.write !== socketWrite) return R.SOCKET_WRITE_REPLACED;
  if (socket.destroyed || !socket.writable) return R.SOCKET_CLOSED;
  // A corked socket (a later write of the tick, or the user's cork()):
  // Node's write only buffers there, which costs less than a framed
  // Buffer of the addon's (benchmark/http/stream.js tick=one: 8 writes
  // in one tick read 0.84x on Node 20 when each was framed natively); the
  // tick's first write, which uncorks alone on the next tick, is the one
  // that gains.
  if (socket.writableCorked) return R.SOCKET_BUSY;
  return null;
}

/**
 * Node's `res.write(chunk, encoding, callback)`, fast (see index.js for the
 * public documentation).
 */
function write(res, chunk, encoding, callback) {
  let enc = encoding;
  let cb = callback;
  if (typeof enc === 'function') {
    cb = enc;
    enc = null;
  }
  let reason = writeReason(res);
  let kind = 0;
  if (reason === null) {
    // Node's socket counts a string's characters in writableLength (and
    // write()'s return value): a string in another encoding than latin1,
    // ascii or UTF-8 (hex, base64) has other counts than its bytes.
    kind = bodyKind(chunk, enc);
    if (typeof kind === 'string') reason = kind;
    else if (kind === -1) reason = R.ENCODING;
  }
  if (reason === null) {
    // write_(): Node renders the head; a response without a body ignores
    // the write (Node's).
    if (!res._header) res._implicitHeader();
    if (!res._hasBody) reason = R.NO_BODY_ALLOWED;
  }
  if (reason !== null) {
    countFallback(reason, res, chunk);
    return nodeWrite.call(res, chunk, encoding, callback);
  }
  const socket = res.socket;
  if (!socket.writableCorked) {
    socket.cork();
    process.nextTick(uncorkNT, socket);
  }
  const chunked = res.chunkedEncoding;
  const withHead = !res._headerSent;
  // _send(): the head goes with the first data; with a chunked body that is
  // the size line, latin1; otherwise a string in its own encoding.
  args[ARG_BODY_FLAGS] = chunked ? (kind & ~HEAD_UTF8) | CHUNKED : kind;
  args[ARG_BODY_UNITS] = bodyUnits(chunk);
  args[ARG_HEAD_UNITS] = withHead ? res._header.length : 0;
  const bytes = binding.frameChunk(withHead ? res._header : undefined, chunk);
  if (bytes === undefined) {
    // A string whose UTF-8 bytes outnumber its characters (see above).
    countFallback(R.ENCODING, res, chunk);
    return nodeWrite.call(res, chunk, encoding, callback);
  }
  if (withHead) res._headerSent = true;
  countWrite();
  let done = typeof cb === 'function' ? cb : nop;
  if (chunked && SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT && done !== nop) {
    const given = done;
    done = (err) => given(err);
  }
  const ret = socket.write(bytes, done);
  if (!ret) res[kNeedDrain] = true;
  return ret;
}

function nop() {}

module.exports = { write };
