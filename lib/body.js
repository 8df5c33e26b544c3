'use strict';

// What kind of body a call has, as the addon takes it (src/layout.h
// BodyKind, kHeadUtf8), or why the call is Node's.

const { layout, args } = require('./binding');
const { R } = require('./reasons');

const {
  BODY_NONE, BODY_UTF8, BODY_LATIN1, BODY_BYTES, BODY_KIND_MASK, BODY_ENCODED, HEAD_UTF8,
  ARG_BODY_FLAGS, ARG_BODY_UNITS,
} = layout;

// Node 24 and later encode a latin1 string beyond ASCII to UTF-8 with
// simdutf (Buffer.from(), and the socket write of Node's own end()); the
// addon's one UTF-8 read, napi_get_value_string_utf8(), is V8's, about 16
// instructions a byte beyond ASCII. A lone end() of 1 KiB of "naïve " text
// counted 95,346 instructions a response through V8's against Node's
// 89,221 (Node 26.12.1; benchmark/instructions-stream.js --writes 0 --text
// utf8). From ENCODED_MIN_UNITS units such a body is given to the addon as
// Node's encoding of it (BODY_ENCODED): Buffer.from() costs about 2,500
// instructions before its first byte, so shorter bodies keep V8's (against
// Node's path, V8's: 0.978 at 128 units, 0.993 at 220, 1.014 at 440;
// Buffer.from()'s: 0.990, 0.990, 0.985). So do ASCII bodies (which V8
// copies) and older Nodes, whose own end() encodes as V8 does.
const NODE_ENCODES_UTF8 = Number(process.versions.node.split('.')[0]) >= 24;
const ENCODED_MIN_UNITS = 192;

/**
 * Classifies end()'s `chunk` and `encoding`. Returns the body kind (with
 * HEAD_UTF8 where Node sends `_header + chunk` as one UTF-8 string), -1
 * when the encoding is one this package converts first (toBytes()), or a
 * fallback reason.
 *
 * @returns {number|string}
 */
function bodyKind(chunk, encoding) {
  if (typeof chunk === 'string') {
    if (chunk.length === 0) return R.EMPTY_BODY;
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
    return R.ENCODING;
  }
  if (chunk instanceof Uint8Array) {
    // An empty (or detached) buffer is Node's: it writes no body, or throws.
    if (chunk.byteLength === 0) return R.EMPTY_BODY;
    // The socket's Writable throws ERR_UNKNOWN_ENCODING for an encoding it
    // does not know, even with a Buffer: Node's.
    if (encoding && encoding !== 'buffer' && !Buffer.isEncoding(encoding)) return R.ENCODING;
    return BODY_BYTES;
  }
  return chunk ? R.BODY_TYPE : R.NO_BODY;
}

/**
 * The body kind of send()'s `data` (no encoding argument: strings are
 * UTF-8; nothing, '' and an empty Buffer are no body), or a fallback reason.
 *
 * @returns {number|string}
 */
function sendBodyKind(data) {
  if (data === undefined || data === null || data === '') return BODY_NONE;
  if (typeof data === 'string') return BODY_UTF8 | HEAD_UTF8;
  if (data instanceof Uint8Array) return data.byteLength === 0 ? BODY_NONE : BODY_BYTES;
  return R.BODY_TYPE;
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

/** A string body's length in UTF-16 code units (the addon's room for it), else 0. */
function bodyUnits(body) {
  return typeof body === 'string' ? body.length : 0;
}

/**
 * Sets args[ARG_BODY_FLAGS] and args[ARG_BODY_UNITS] for a write call of
 * `body` with `flags` (its kind and flag bits), and returns the body as the
 * addon takes it: `body`, or for a UTF-8 string beyond ASCII of
 * ENCODED_MIN_UNITS units or more on Node 24+ its bytes as Node encodes
 * them (`Buffer.from(body, 'utf8')`: a lone surrogate as U+FFFD, as the
 * socket writes it), with BODY_ENCODED. The caller keeps `body` for
 * everything else (what the kernel does not take is handed over from the
 * addon's copy).
 *
 * @param {number} flags
 * @param {string|Uint8Array|undefined|null} body
 * @returns {string|Uint8Array|undefined|null}
 */
function bodyArgs(flags, body) {
  args[ARG_BODY_UNITS] = bodyUnits(body);
  if (NODE_ENCODES_UTF8 && (flags & BODY_KIND_MASK) === BODY_UTF8 &&
      body.length >= ENCODED_MIN_UNITS && !isAscii(body)) {
    args[ARG_BODY_FLAGS] = flags | BODY_ENCODED;
    return Buffer.from(body, 'utf8');
  }
  args[ARG_BODY_FLAGS] = flags;
  return body;
}

/** Whether a string's UTF-8 bytes are its latin1 bytes (every unit below 0x80). */
function isAscii(string) {
  return Buffer.byteLength(string, 'utf8') === string.length;
}

// The last size chunkSize() rendered, and its rendering: a stream's chunks
// are often all of one size (a template, a fixed-size record), and
// Number.prototype.toString(16) renders a new string at each call. Per
// realm (each worker_thread loads its own module).
let lastChunkBytes = -1;
let lastChunkSize = '';

/**
 * A chunk's size as its chunk-size line writes it (RFC 9112 7.1: hex
 * digits, lower case, as Node's `toString(16)` renders it), for `bytes`,
 * the chunk's length in bytes (an integer, 0 or more).
 *
 * @param {number} bytes
 * @returns {string}
 */
function chunkSize(bytes) {
  if (bytes !== lastChunkBytes) {
    lastChunkSize = bytes.toString(16);
    lastChunkBytes = bytes;
  }
  return lastChunkSize;
}

module.exports = { bodyKind, sendBodyKind, toBytes, bodyUnits, bodyArgs, isAscii, chunkSize, ENCODED_MIN_UNITS };
