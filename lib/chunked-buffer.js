'use strict';

// res.uncork() under install({ patchEnd: true }) (and register) on Node 22
// and later, which collect the chunked writes of a corked response into
// one chunk (kChunkedBuffer: entries chunk, encoding, callback) and send it
// from their uncork(): the size line, CRLF, each entry with its own socket
// write, CRLF. Node 24 and later cork the response for the tick on its
// first write(), so eight writes in one tick are eleven socket writes
// there, each through the socket's Writable; Node 22 corks the socket, and
// collects only after a user's res.cork() with the head sent.
//
// Before Node's own uncork() sends them, the entries that are strings of
// one encoding class (UTF-8, or latin1) are joined into one entry: the same
// bytes (the chunk's size counts the same bytes), the same chunk, one socket
// write for the data instead of one per write() call. The socket counts a
// string's characters in writableLength, so it counts the same either way.
// The callbacks are called in order with the error of the one write, as
// Node's uncork() calls them with the error of its last write.
//
// Left to Node as they are: a Buffer or Uint8Array entry, a string in
// another encoding (Node's socket encodes each on its own), a UTF-8 join
// that would pair surrogates written apart (each half is written as U+FFFD
// alone), a destroyed response or socket (Node's uncork() reports the error
// to each callback on its own tick), a replaced _send(), _writeRaw() or
// socket.write(), and any uncork() that does not send (a nested cork()).

const {
  kChunkedBuffer, kCorked, nodeUncork, defaultEncodingIsUtf8, sendsThroughNode, socketWrite,
} = require('./node-internals');

const UTF8 = 1;
const LATIN1 = 2;
// A joined entry is at most this long (UTF-16 code units); longer chunks
// are written as they are. Measured on Node 26 (node benchmark/compare.js
// --runs 5 --filter stream --set tick=one, 8 writes): with joins of up to
// 16 Ki units, 8 chunks of 1 KiB read 0.78x of Node's rate (p 0.0001, the
// cause not found); with 1 Ki units: 64 B 1.04x, 128 B 1.16x, 512 B 0.90x
// (p 0.74; callgrind: -2.4 % instructions), 1 KiB 1.02x (not joined).
const MAX_JOINED_UNITS = 1024;

/** Node's own uncork(), the tick's string chunks joined first (above). */
function uncork() {
  joinChunks(this);
  return nodeUncork.call(this);
}

/**
 * The kChunkedBuffer entries of `res`, runs of string entries of one
 * encoding class joined into one entry each (above), within
 * MAX_JOINED_UNITS.
 */
function joinChunks(res) {
  const buf = res[kChunkedBuffer];
  const length = buf.length;
  if (length < 6 || res[kCorked] !== 1 || res.destroyed) return;
  const socket = res.socket;
  // Instrumentation that wraps _send(), _writeRaw() or socket.write() sees
  // Node's calls, one per write(), as lib/gate.js and lib/stream.js step
  // aside for it (a new-user check found it saw the joined ones).
  if (!socket || socket.destroyed || socket.write !== socketWrite || !sendsThroughNode(res)) return;
  let out = null;
  for (let i = 0; i < length;) {
    const kind = joinClass(buf[i], buf[i + 1], socket);
    let joined = buf[i];
    let end = i + 3;
    while (kind !== 0 && end < length && joinClass(buf[end], buf[end + 1], socket) === kind &&
           joined.length + buf[end].length <= MAX_JOINED_UNITS &&
           // A high surrogate at the end of what came before and a low one
           // at the start of this chunk: apart, each is written as U+FFFD;
           // joined, they are one character.
           !(kind === UTF8 && isHighSurrogate(joined.charCodeAt(joined.length - 1)) &&
             isLowSurrogate(buf[end].charCodeAt(0)))) {
      joined += buf[end];
      end += 3;
    }
    if (end - i > 3) {
      out ??= buf.slice(0, i);
      out.push(joined, kind === UTF8 ? 'utf8' : 'latin1', callingEach(buf.slice(i, end)));
    } else if (out !== null) {
      out.push(buf[i], buf[i + 1], buf[i + 2]);
    }
    i = end;
  }
  if (out === null) return;
  buf.length = 0;
  for (let i = 0; i < out.length; i++) buf.push(out[i]);
}

/** One callback for joined entries: each entry's, in order, with the write's error. */
function callingEach(entries) {
  return (err) => {
    for (let i = 2; i < entries.length; i += 3) entries[i](err);
  };
}

/** The encoding class of an entry that may be joined, or 0. */
function joinClass(chunk, encoding, socket) {
  return typeof chunk === 'string' && chunk.length < MAX_JOINED_UNITS ? encodingClass(encoding, socket) : 0;
}

/** UTF8, LATIN1, or 0 (an encoding the socket encodes otherwise). */
function encodingClass(encoding, socket) {
  if (encoding === 'utf8' || encoding === 'utf-8') return UTF8;
  if (encoding === 'latin1' || encoding === 'binary') return LATIN1;
  if ((encoding === undefined || encoding === null) && defaultEncodingIsUtf8(socket)) return UTF8;
  return 0;
}

function isHighSurrogate(code) {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code) {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether uncork() can be installed over this Node's own. */
const JOINS_CHUNKS = nodeUncork !== null;

module.exports = { uncork, JOINS_CHUNKS };
