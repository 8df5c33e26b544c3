'use strict';

// Whether a socket may be written directly (the addon's writev(2) on its
// file descriptor), for responses (lib/gate.js, lib/chunked-buffer.js, the
// batch of lib/pipeline.js) and requests (lib/client.js) alike. Two parts:
// what rules a socket out for as long as it is in this state (TLS, a
// wrapped write(), closed, another default encoding: socketRefusal()), and
// what rules it out only now (bytes waiting before ours, no descriptor:
// socketFd()).

const { R } = require('./reasons');
const { socketWrite, defaultEncodingIsUtf8 } = require('./node-internals');

/**
 * The reason (a name of lib/reasons.js) a socket's bytes must go through
 * Node's socket.write(), or null: a TLS socket (the addon would write the
 * TCP connection's descriptor in plaintext), one whose write() something
 * wraps (instrumentation must see the bytes), one that is no longer
 * writable, or one whose default encoding is not UTF-8.
 *
 * @param {import('node:net').Socket} socket
 * @returns {string|null}
 */
function socketRefusal(socket) {
  if (socket.encrypted) return R.TLS;
  if (socket.write !== socketWrite) return R.SOCKET_WRITE_REPLACED;
  if (!socket.writable) return R.SOCKET_CLOSED;
  if (!defaultEncodingIsUtf8(socket)) return R.ENCODING;
  return null;
}

/**
 * The file descriptor of a plain TCP or pipe socket that nothing is
 * waiting to be written on (Node's buffer, libuv's queue, a cork, or
 * `corked`: the message's own cork count), or the reason it cannot be
 * written directly now (socketRefusal()'s, SOCKET_BUSY, NO_FD).
 *
 * @param {import('node:net').Socket} socket
 * @param {number} corked the message's own cork count (writableCorked of
 *   a request; 0 for a response).
 * @param {number} [ownCorks=0] corks of the socket that are the caller's
 *   to undo (a response's for the tick, lib/chunked-buffer.js).
 * @returns {number|string} the descriptor (>= 0), or the reason.
 */
function socketFd(socket, corked, ownCorks = 0) {
  const refused = socketRefusal(socket);
  if (refused !== null) return refused;
  if (socket.writableLength !== 0 || socket.writableCorked !== ownCorks || corked !== 0) {
    return R.SOCKET_BUSY;
  }
  // Under the caller's corks, an empty string written before (Node's
  // write_() sends `write('', cb)` to the socket, not to the tick's chunk)
  // waits in the socket's buffer with no length: its callback is due
  // before those of what the caller writes. (With the socket uncorked and
  // nothing in writableLength, its buffer is empty: Writable clears it
  // when a write completes and when it is uncorked.)
  if (ownCorks !== 0 && bufferedWrites(socket._writableState)) return R.SOCKET_BUSY;
  return handleFd(socket);
}

/**
 * The file descriptor of the socket's handle when libuv queues nothing on
 * it, or the reason it cannot be written directly now (SOCKET_BUSY, NO_FD).
 *
 * @param {import('node:net').Socket} socket
 * @returns {number|string}
 */
function handleFd(socket) {
  const handle = socket._handle;
  if (handle === null || handle === undefined) return R.NO_FD;
  if (handle.writeQueueSize !== 0) return R.SOCKET_BUSY;
  const fd = handle.fd;
  if (typeof fd !== 'number' || fd < 0) return R.NO_FD;
  return fd;
}

/** Whether a socket's Writable state holds buffered writes (any length). */
function bufferedWrites(state) {
  return state.buffered.length !== state.bufferedIndex;
}

module.exports = { socketRefusal, socketFd, handleFd };
