'use strict';

// What kind of body a call has, as the addon takes it (src/layout.h
// BodyKind, kHeadUtf8), or why the call is Node's.

const { layout } = require('./binding');
const { R } = require('./reasons');

const { BODY_NONE, BODY_UTF8, BODY_LATIN1, BODY_BYTES, HEAD_UTF8 } = layout;

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

module.exports = { bodyKind, sendBodyKind, toBytes, bodyUnits, isAscii, chunkSize };
