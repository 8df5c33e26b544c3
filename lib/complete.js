'use strict';

// After the native write: the response is finished the way Node's own end()
// finishes it, and whatever the kernel did not take goes to socket.write().

const { binding, layout, results } = require('./binding');
const { splitJoined } = require('./headers');
const {
  nodeEnd, CONTENT_LENGTH_AS_NUMBER, SENDS_FINAL_CHUNK_ALONE, STACK_WRITE_LIMIT,
} = require('./node-internals');
const { countFast, countPartial } = require('./stats');

const {
  RESULT_BITS, RESULT_CONTENT_LENGTH,
  RESULT_LAST, RESULT_CHUNKED, RESULT_SHOULD_KEEP_ALIVE,
  RESULT_CONNECTION_FIELD, RESULT_KEEP_ALIVE_FIELD, RESULT_CONTENT_LENGTH_FIELD,
} = layout;

/**
 * Applies what the addon's head rendering decided to the response, as
 * writeHead() and _storeHeader() would have (results[RESULT_BITS]).
 * `joined`: the caller's fields as the addon got them (lib/headers.js);
 * `contentLength`, when given, is `_contentLength` for a head with a
 * Content-Length field (template(): known when it was made).
 */
function applyHead(res, header, joined, contentLength) {
  const r = results[RESULT_BITS];
  res._header = header;
  res._last = (r & RESULT_LAST) !== 0;
  res.chunkedEncoding = (r & RESULT_CHUNKED) !== 0;
  res.shouldKeepAlive = (r & RESULT_SHOULD_KEEP_ALIVE) !== 0;
  if ((r & RESULT_CONNECTION_FIELD) !== 0) res._removedConnection = false;
  if ((r & RESULT_KEEP_ALIVE_FIELD) !== 0) res._defaultKeepAlive = false;
  if ((r & RESULT_CONTENT_LENGTH_FIELD) !== 0) {
    res._removedContLen = false;
    res._contentLength = contentLength !== undefined && contentLength !== null ?
      contentLength : contentLengthOf(joined);
  }
}

/**
 * `_contentLength` after a head with a Content-Length field:
 * results[RESULT_CONTENT_LENGTH] holds the last such field's value when it
 * is plain decimal digits (or the body length, when send() added the
 * field); anything else (' 12', '0x10', '') is `+value` of the last field in
 * `joined` (Node 18: the value as given).
 */
function contentLengthOf(joined) {
  const simple = results[RESULT_CONTENT_LENGTH];
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

const RESPONSE_COUNTS = Object.freeze({ fast: countFast, partial: countPartial });

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
 * and error handling take them. `written`: the bytes writev(2) took, or
 * -errno of its failure. `counts`: the stats() counters the write goes to
 * (responses; lib/client.js passes the requests' ones). `sent`, when
 * given, is called with the error of the write, or null, once its bytes
 * are written (the callbacks of write() calls whose chunks it carried,
 * lib/chunked-buffer.js): with the last byte handed over, or on the next
 * tick, before 'finish'. Returns what Node's end() returns (`res`).
 */
function complete(res, written, remaining, chunk, callback, counts = RESPONSE_COUNTS, headJoined = false,
                  sent = undefined) {
  const socket = res.socket;
  res._headerSent = true;
  if (remaining !== 0) {
    counts.partial();
    // Corked, as in Node's own end(): the rest and end()'s own final write
    // go out together when end() uncorks, and an error reaches all of them
    // (and 'prefinish', 'finish') the way it does in Node.
    socket.cork();
  } else {
    counts.fast();
  }
  settle(res, socket, written, remaining, chunk, headJoined, sent);
  if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);
  // The last chunk went out with the body: end() must not write it again.
  res.chunkedEncoding = false;
  try {
    return nodeEnd.call(res, null, null, callback);
  } finally {
    res.chunkedEncoding = true;
  }
}

/**
 * After the addon's writev(2) of bytes of `res` on `socket` (`written` and
 * `remaining` as complete() takes them): the rest to socket.write() (a
 * failed write's error made the socket's next), `sent` called as the
 * socket calls a write's callback (with the last byte handed over, or on
 * the next tick with null), the bytes counted in socket.bytesWritten and
 * the socket's idle timer restarted, as a socket write does.
 */
function settle(res, socket, written, remaining, chunk, headJoined, sent) {
  if (remaining !== 0) {
    if (written < 0) failNextWrite(socket._handle, written);
    handOver(socket, chunk, sent);
  } else if (sent !== undefined) {
    process.nextTick(sent, null);
  }
  if (written !== 0) {
    // A failed write counts its bytes where Node's own would.
    countBytes(socket._handle, written > 0 ? written : (failedWriteCounted(res, chunk, headJoined) ? remaining : 0));
    socket._unrefTimer();
  }
}

/**
 * Whether Node's own end() of `res` adds the bytes of its socket write to
 * socket.bytesWritten when that write fails (node-internals.js,
 * STACK_WRITE_LIMIT): not for one string that fits the stack storage.
 * `chunk` is end()'s body; `headJoined`: Node's _send() joins the head to
 * it (a string in UTF-8 or exactly 'latin1', FROM_RESPONSE's kind
 * HEAD_UTF8 for UTF-8). Node writes the head alone, as latin1, where the
 * response has no body (HEAD, 204, 304); one writev() where it frames
 * chunks, where the head goes apart from the body (a Buffer, another
 * encoding) and, before Node 24, where the body is followed by end()'s
 * empty write.
 *
 * @param {import('http').OutgoingMessage} res the response, its head rendered (`_header`).
 * @param {string|Uint8Array} chunk
 * @param {boolean|'utf8'|'latin1'} headJoined false, or the encoding of the joined string.
 * @returns {boolean}
 */
function failedWriteCounted(res, chunk, headJoined) {
  const head = res._header;
  if (!res._hasBody) return typeof head === 'string' && head.length > STACK_WRITE_LIMIT;
  if (!SENDS_FINAL_CHUNK_ALONE) return true;
  if (res.chunkedEncoding || !headJoined || typeof chunk !== 'string' || typeof head !== 'string') return true;
  return (headJoined === 'latin1' ? 1 : 3) * (head.length + chunk.length) > STACK_WRITE_LIMIT;
}

const kHandleWrites = ['writev', 'writeBuffer', 'writeAsciiString',
                       'writeLatin1String', 'writeUtf8String', 'writeUcs2String'];

// writev(2) failed with `errno` (results[RESULT_WRITTEN] < 0). The socket
// may report that error only once (ECONNRESET; the next write sees EPIPE):
// the handle's next write fails with it without a syscall, and Node's
// stream code reports it as it reports a failed write
// (ErrnoException(errno, 'write')).
function failNextWrite(handle, errno) {
  const fail = () => {
    for (const name of kHandleWrites) delete handle[name];
    return errno;
  };
  for (const name of kHandleWrites) handle[name] = fail;
}

// What the addon could not write, in order, to socket.write(): copies of its
// own bytes, and the unwritten end of a Buffer body as a view, not a copy;
// `sent` (or nothing) the last write's callback. A body given as an array
// of Buffers (`chunk`: the parts the addon's body was joined from,
// lib/stream.js endQueued()) hands over views of those parts, so that the
// rest is read from the caller's Buffers when the socket writes it, as
// Node's writev() of the same queued writes reads them.
function handOver(socket, chunk, sent) {
  const parts = binding.pending();
  const rest = [];
  for (let i = 0; i < parts.length; i++) {
    if (Array.isArray(chunk) && Array.isArray(parts[i])) viewsOf(chunk, parts[i], rest);
    else rest.push(bytesOf(parts[i], () => chunk));
  }
  const last = rest.length - 1;
  for (let i = 0; i < last; i++) socket.write(rest[i]);
  if (last >= 0) socket.write(rest[last], sent);
}

/**
 * A part of binding.pending() ([tag, bytes not written, bytes taken], as
 * bytesOf() reads it) of a body joined from the Buffers `joined`: views of
 * those Buffers over the same bytes, in order, pushed onto `out`.
 */
function viewsOf(joined, part, out) {
  let size = 0;
  for (let i = 0; i < joined.length; i++) size += joined[i].byteLength;
  const start = size - part[1];
  const end = part.length > 2 ? start + part[2] : size;
  let at = 0;
  for (let i = 0; i < joined.length && at < end; i++) {
    const buffer = joined[i];
    const next = at + buffer.byteLength;
    if (next > start && buffer.byteLength !== 0) {
      const from = Math.max(start - at, 0);
      const to = Math.min(end - at, buffer.byteLength);
      out.push(from === 0 && to === buffer.byteLength ? buffer : buffer.subarray(from, to));
    }
    at = next;
  }
}

/**
 * A part of binding.pending(): a Buffer, or [tag, bytes not written, bytes
 * taken] of a Buffer body `bodyOf(tag)` returns: the view of those bytes.
 */
function bytesOf(part, bodyOf) {
  if (!Array.isArray(part)) return part;
  const body = bodyOf(part[0]);
  const start = body.byteLength - part[1];
  const end = part.length > 2 ? start + part[2] : body.byteLength;
  return start === 0 && end === body.byteLength ? body : body.subarray(start, end);
}

module.exports = { applyHead, contentLengthOf, complete, settle, countBytes, failNextWrite, failedWriteCounted, bytesOf };
