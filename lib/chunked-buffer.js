'use strict';

// res.uncork() under install({ patchEnd: true }) (and register) on Node 22
// and later, which collect the chunked writes of a corked response into
// one chunk (kChunkedBuffer: entries chunk, encoding, callback) and send it
// from their uncork(): the size line, CRLF, each entry with its own socket
// write, CRLF. Node 24 and later cork the response for the tick on its
// first write(), so eight writes in one tick are eleven socket writes
// there, each through the socket's Writable, and one write in a tick is
// four; Node 22 corks the socket, and collects only after a user's
// res.cork() with the head sent. (On Node 22 patchEnd's write() is the
// package's, lib/stream.js, and steps aside to Node's for a response the
// user corked: those are the chunks joined here.)
//
// Written by the addon (Node 24 and later, writeTick(); and end() in the
// tick of the writes, endCollected()): where the socket is free but for
// the response's cork for the tick, the head (when not sent), the size
// line, the entries (strings of one encoding class, Buffers) and the CRLF
// (and from end() the last chunk) go to the kernel with one writev(2) of
// the addon, copied into its buffer (writeEntries(), up to
// MAX_WRITTEN_BYTES; a tick of strings goes joined, as one string written
// as latin1 or UTF-8: one Node-API read, not four calls an entry, unless
// joining would pair surrogates written apart), and Node's uncork()
// (or end()) runs with nothing left to send. Measured: see docs/writer.md,
// "the tick's chunks written by the addon".
//
// Framed (Node 24 and later, sendFramed(), where the addon does not take
// them): when every collected entry is
// a string of one encoding class (UTF-8, or latin1) and they join within
// MAX_FRAMED_UNITS, the size line, the entries and the CRLF go as one
// string through one _send(), as the package's own write() frames a chunk
// on Node 18 and 20 (lib/stream.js): the same bytes, one socket write
// where Node makes four or more, so the socket writes it with one
// _write() (libuv's try_write from the stack) instead of a writev() of
// four. The rest of Node's uncork() stays Node's: it is called after, with
// nothing left to send (it uncorks the socket), and its 'drain' rule is
// applied as it applies it after sending.
//
// Joined (otherwise): before Node's own uncork() sends them, runs of
// entries that are strings of one encoding class are joined into one
// entry: the same chunk, one socket write for the run's data instead of
// one per write() call.
//
// Either way the chunk's size counts the same bytes, and the socket counts
// a string's characters in writableLength, so it counts the same. The
// callbacks are called in order with the error of the one write, as Node's
// uncork() calls them with the error of its last write.
//
// Left to Node as they are: a Buffer or Uint8Array entry, a string in
// another encoding (Node's socket encodes each on its own), a UTF-8 join
// that would pair surrogates written apart (each half is written as U+FFFD
// alone), a destroyed response or socket (Node's uncork() reports the error
// to each callback on its own tick), a replaced _send(), _writeRaw() or
// socket.write(), and any uncork() that does not send (a nested cork()).

const {
  kChunkedBuffer, kChunkedLength, kCorked, kNeedDrain, nodeUncork, defaultEncodingIsUtf8, sendsThroughNode,
  socketWrite, isNodesUncork, NODE_WRITE_NOP,
} = require('./node-internals');
const { binding, layout, results, args } = require('./binding');
const { isAscii, chunkSize } = require('./body');
const { socketFd } = require('./socket-fd');
const { complete, settle } = require('./complete');
const { countUncork } = require('./stats');

const {
  ARG_FD, ARG_WRITER, ARG_BODY_FLAGS, ARG_BODY_BYTES, ARG_BODY_UNITS, ARG_HEAD_UNITS, RESULT_WRITTEN, RESULT_REMAINING,
  BODY_UTF8, BODY_LATIN1, BODY_ENCODED, CHUNKED,
} = layout;

const UTF8 = 1;
const LATIN1 = 2;
// A joined entry is at most this long (UTF-16 code units); longer chunks
// are written as they are. Measured on Node 26 (node benchmark/compare.js
// --runs 5 --filter stream --set tick=one, 8 writes): with joins of up to
// 16 Ki units, 8 chunks of 1 KiB read 0.78x of Node's rate (p 0.0001, the
// cause not found); with 1 Ki units: 64 B 1.04x, 128 B 1.16x, 512 B 0.90x
// (p 0.74; callgrind: -2.4 % instructions), 1 KiB 1.02x (not joined).
const MAX_JOINED_UNITS = 1024;
// A framed chunk's entries are at most this long together (UTF-16 code
// units). The joined string is flattened (copied) into V8's young
// generation before the socket writes it, where Node's sends write each
// entry from where it is: past a few KiB a response allocates more than
// Node's path and the scavenges outweigh what the one write saves.
// Measured on Node 26 (node benchmark/compare.js --runs 5 --filter stream
// --set writes=8): framed up to 16 Ki units, 8 writes of 1 KiB in one tick
// read 0.72x of Node's rate (p 0.004) and 20,000 such responses ran 511
// scavenges against Node's 181 (node --trace-gc), while one write of
// 1 KiB per tick read 1.24x (p 0.002) and 8 of 64 B in one tick 1.31x.
const MAX_FRAMED_UNITS = 2 * 1024;

// Whether Node's own uncork() sends with the socket corked and uncorks it
// last (Node 24 and later: its sends in a try, socket?.uncork() in the
// finally, then its 'drain' rule), so that one framed _send() before it
// takes the place of its sends. Node 22's uncorks the socket first.
const FRAMES_CHUNK = nodeUncork !== null && kChunkedLength !== undefined && kNeedDrain !== undefined &&
  /\bfinally\s*\{\s*socket\?\.uncork\(\);?\s*\}/.test(nodeUncork.toString());

/**
 * Node's own uncork(), the tick's string chunks framed into one _send() or
 * joined first (above).
 */
function uncork() {
  const socket = sendingSocket(this);
  if (socket === null) return nodeUncork.call(this);
  if (FRAMES_CHUNK && (writeTick(this, socket) || sendFramed(this, socket))) {
    // Node's uncork() with its chunk sent: the count, the socket's uncork().
    nodeUncork.call(this);
    // Its rule after sending: a pending 'drain' when all went out.
    if (this[kNeedDrain] && this.writableLength === 0) {
      this[kNeedDrain] = false;
      this.emit('drain');
    }
    return;
  }
  joinChunks(this, socket);
  return nodeUncork.call(this);
}

/**
 * The socket this uncork() of `res` sends its collected entries to, when
 * the package may frame or join them; null when it does not send (a nested
 * cork(), nothing collected), the response or socket is destroyed (Node's
 * uncork() reports the error to each callback), or instrumentation wraps
 * _send(), _writeRaw() or socket.write() (it sees Node's calls, one per
 * write(), as lib/gate.js and lib/stream.js step aside for it; a new-user
 * check found it saw the joined ones).
 */
function sendingSocket(res) {
  if (res[kChunkedBuffer].length === 0 || res[kCorked] !== 1 || res.destroyed) return null;
  const socket = res.socket;
  if (!socket || socket.destroyed || socket.write !== socketWrite || !sendsThroughNode(res)) return null;
  return socket;
}

/**
 * The chunk Node's uncork() would send now for `res`, sent as one string
 * through res._send() (the head joins it there, as it joins Node's size
 * line), and its entries cleared; false, nothing done, when this uncork()
 * does not send or an entry is not a string of the first one's encoding
 * class, the joined strings would pair surrogates written apart, or exceed
 * MAX_FRAMED_UNITS. An ASCII chunk goes as latin1 (the same bytes; the
 * socket copies it instead of encoding it); a UTF-8 one goes with a head
 * not yet sent only when the head is ASCII (Node writes the head latin1).
 */
function sendFramed(res, socket) {
  const buf = res[kChunkedBuffer];
  const length = buf.length;
  if (!res.chunkedEncoding) return false;
  // A UTF-8 string has at most three bytes per unit: more bytes than that
  // are more units than a framed chunk takes (no strings joined to find it).
  if (res[kChunkedLength] > 3 * MAX_FRAMED_UNITS) return false;
  const first = buf[0];
  const kind = typeof first === 'string' ? encodingClass(buf[1], socket) : 0;
  if (kind === 0) return false;
  let data = first;
  // The last non-empty chunk joined: its last unit is the joined string's
  // (asked of `data`, a rope, V8 would flatten it, a copy per chunk).
  let last = first;
  for (let i = 3; i < length; i += 3) {
    const chunk = buf[i];
    if (typeof chunk !== 'string' || encodingClass(buf[i + 1], socket) !== kind ||
        data.length + chunk.length > MAX_FRAMED_UNITS || (kind === UTF8 && pairsSurrogates(last, chunk))) {
      return false;
    }
    data += chunk;
    if (chunk.length !== 0) last = chunk;
  }
  if (data.length > MAX_FRAMED_UNITS) return false;
  const bytes = res[kChunkedLength];
  const latin1 = kind === LATIN1 || bytes === data.length;
  if (!latin1 && !res._headerSent && res._header !== null && !isAscii(res._header)) return false;
  const callback = callingEach(buf.slice());
  buf.length = 0;
  res[kChunkedLength] = 0;
  res._send(`${chunkSize(bytes)}\r\n${data}\r\n`, latin1 ? 'latin1' : 'utf8', callback);
  countUncork(true);
  return true;
}

/**
 * The kChunkedBuffer entries of `res`, runs of string entries of one
 * encoding class joined into one entry each (above), within
 * MAX_JOINED_UNITS.
 */
function joinChunks(res, socket) {
  const buf = res[kChunkedBuffer];
  const length = buf.length;
  if (length < 6) return;
  let out = null;
  for (let i = 0; i < length;) {
    const kind = joinClass(buf[i], buf[i + 1], socket);
    let joined = buf[i];
    let last = joined;  // as in sendFramed()
    let end = i + 3;
    while (kind !== 0 && end < length && joinClass(buf[end], buf[end + 1], socket) === kind &&
           joined.length + buf[end].length <= MAX_JOINED_UNITS && !(kind === UTF8 && pairsSurrogates(last, buf[end]))) {
      joined += buf[end];
      if (buf[end].length !== 0) last = buf[end];
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
  countUncork(false);
  buf.length = 0;
  for (let i = 0; i < out.length; i++) buf.push(out[i]);
}

/**
 * Whether each entry of `buf` (kChunkedBuffer's) has write_()'s own no-op
 * as its callback: no write() gave one. Where the addon wrote such a tick
 * whole (writeTick()), nothing observable depends on a callback: the socket
 * saw no write, and no process.nextTick() is needed to call the no-ops
 * (Node 26.12.1 under callgrind, 8 writes of 64 B on separate ticks under
 * patchEnd: 219,940 -> 214,923 instructions per response, in one pair of
 * runs). A socket write keeps its callback (sendFramed(), a rest handed to
 * the socket): Writable's after-write tick, which emits 'drain' and reports
 * a destroyed socket's errors, comes only for a write given a callback
 * other than its own no-op, and Node's uncork() gives one.
 */
function callsNothing(buf) {
  if (NODE_WRITE_NOP === null) return false;
  for (let i = 2; i < buf.length; i += 3) {
    if (buf[i] !== NODE_WRITE_NOP) return false;
  }
  return true;
}

/**
 * One callback for joined entries: each entry's, in order, with the
 * write's error, called as a plain function (`this` undefined, as Node's
 * uncork() calls them; a new-user check found `this` was the entries).
 */
function callingEach(entries) {
  return (err) => {
    for (let i = 2; i < entries.length; i += 3) {
      const callback = entries[i];
      callback(err);
    }
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

/**
 * A high surrogate at the end of `before` and a low one at the start of
 * `chunk`: written apart, each is written as U+FFFD; joined, they are one
 * character. `before`: the last non-empty string of those joined so far.
 */
function pairsSurrogates(before, chunk) {
  return isHighSurrogate(before.charCodeAt(before.length - 1)) && isLowSurrogate(chunk.charCodeAt(0));
}

function isHighSurrogate(code) {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code) {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Node 24 and later, before Node's own end() (`res.fastEnd()` after
 * `res.fastWrite()` in one tick): what Node's end() does with the chunks
 * collected in the tick, taken here with the package's uncork() (framed,
 * above) where Node's end() would call Node's own, the response's
 * uncork() being Node's (not under patchEnd, whose uncork() Node's end()
 * calls itself). A string `data` is collected first as Node's write_()
 * collects end()'s chunk (after the same checks: a string in a known
 * encoding, the response not finished or destroyed, its head rendered, a
 * chunked body, the response corked), then the step that flushes ("Flush
 * buffered chunks": socket.cork(), kCorked = 1, this.uncork()). Node's
 * end() is then called without the data (lib/end.js) and goes on as it
 * would: nothing collected, the last chunk, 'finish', the socket's
 * uncork(). Taken only where Node's end() reaches that step with nothing
 * else done first that this would reorder: no strictContentLength (its
 * check throws before the flush); the end callback, which Node's end()
 * queues before the flush, is only queued (queueEndCallback()), and the
 * flush neither finishes the response nor calls it. Returns whether
 * `data` was collected here.
 *
 * @param {import('http').ServerResponse} res
 * @param {unknown} data end()'s first argument.
 * @param {unknown} encoding end()'s second argument.
 * @returns {boolean}
 */
function flushCollected(res, data, encoding) {
  if (!FRAMES_CHUNK || res.uncork !== nodeUncork || !endFlushes(res)) return false;
  const bytes = collectEndData(res, data, encoding, false);
  if (bytes < 0) return false;
  const socket = res.socket;
  if (bytes > 0) {
    // Node's end(): its socket.cork() before write_().
    socket?.cork();
    res[kChunkedLength] += bytes;
  }
  socket?.cork();
  res[kCorked] = 1;
  uncork.call(res);
  return bytes > 0;
}

/**
 * Whether Node's end() of `res` reaches its flush of the chunks collected
 * in the tick ("Flush buffered chunks") with nothing done first that the
 * package's flush would reorder: chunks collected, the response corked,
 * not finished or destroyed, its head rendered, a chunked body, and no
 * strictContentLength (its check throws before the flush).
 */
function endFlushes(res) {
  return res[kChunkedBuffer].length !== 0 && !!res[kCorked] && !res.finished && !res.destroyed && !!res._header &&
    res._hasBody && res.chunkedEncoding && !res.strictContentLength;
}

/**
 * end()'s `data` pushed onto res[kChunkedBuffer] as Node's end() has
 * write_() collect it: with end()'s encoding (null for end(data,
 * callback)) and a nop callback. Returns the bytes it adds to the chunk
 * (as Node counts them in kChunkedLength), 0 when there is no data
 * (nothing, '', or only a callback), or -1, nothing pushed, for a string
 * in an encoding Node's write_() throws for, or data other than a string
 * or (with `bytesToo`) a Uint8Array.
 */
function collectEndData(res, data, encoding, bytesToo) {
  if (!data || typeof data === 'function') return 0;
  const enc = typeof encoding === 'function' ? null : encoding;
  let bytes;
  if (typeof data === 'string') {
    if (enc && !Buffer.isEncoding(enc)) return -1;
    bytes = Buffer.byteLength(data, enc);
  } else if (bytesToo && data instanceof Uint8Array) {
    bytes = data.byteLength;
  } else {
    return -1;
  }
  res[kChunkedBuffer].push(data, enc, nop);
  return bytes;
}

function nop() {}

// The most bytes writeEntries() copies into the addon's buffer for one
// writev(2): past it Node's own sends (they copy strings too, but not
// Buffers, and a write that large is spent in the kernel).
const MAX_WRITTEN_BYTES = 64 * 1024;
// UTF-8 beyond ASCII: the most UTF-16 code units a tick's strings may have
// per string entry for the addon to encode them (src/utf8.h, about 10
// instructions a unit of "naïve " text, where Node encodes with simdutf,
// about 2.5, after a fixed cost of about 2,500 for Buffer.from()). Past
// it a tick's strings joined go to the addon as Node encodes them
// (Buffer.from(), BODY_ENCODED), and strings written entry by entry (a
// Buffer among them, a surrogate pair written apart) are Node's to send.
// Measured (Node 26.12.1, `node benchmark/instructions-stream.js --tick
// one --text utf8 --repeat 2 write patched`, 8 writes a tick, medians
// against Node's path): 64 B chunks (440 units joined) 0.702 by the
// encoder, 0.696 by Buffer.from(); 1 KiB chunks 0.793 by Buffer.from(),
// where the encoder counted 188,470 against Node's 166,897 (1.13).
const MAX_ENCODED_UNITS_PER_ENTRY = 512;

/**
 * Node 24 and later: the entries collected in res[kChunkedBuffer] (`bytes`
 * of them, as Node counts them in kChunkedLength), written as one chunk by
 * the addon's one writev(2) (binding.writeChunks()): the head first when
 * it has not been sent, the size line, each entry in its own encoding,
 * CRLF, and with `last` the last chunk: the bytes Node's uncork() (and
 * end()) send with a socket write each. False, nothing done, where the
 * socket is not free but for the response's own cork for the tick
 * (socketFd()), an entry is a string of another encoding class than the
 * others' (UTF-8, or latin1) or in another encoding, a Uint8Array with an
 * encoding the socket's write() throws for, past MAX_WRITTEN_BYTES, or
 * entries written apart with UTF-8 beyond ASCII of more than
 * MAX_ENCODED_UNITS_PER_ENTRY units a string entry (Node's socket encodes
 * it faster: docs/writer.md, "UTF-8 encoded by the addon"), or (after
 * writing) where the kernel took none of it (refused()). Joined UTF-8
 * beyond ASCII past that limit goes as Node encodes it (Buffer.from(),
 * BODY_ENCODED: docs/writer.md, "UTF-8 encoded by Node for the addon").
 * Where every entry is a string they go joined (binding.writeChunk(), as
 * latin1 where each is written as latin1: a latin1 chunk, or UTF-8 that
 * is ASCII; as UTF-8 otherwise): the same bytes, one string read by the
 * addon where binding.writeChunks() makes four Node-API calls an entry
 * (docs/writer.md, "A tick's strings joined for the addon's write", and
 * "UTF-8 beyond ASCII joined too"); entry by entry where a Buffer is among
 * them, or where joining would pair a high surrogate at the end of one
 * UTF-8 entry with a low one at the start of the next (written apart,
 * each is a U+FFFD; joined, they would be one character).
 * results[] say what the write did (lib/complete.js settle()).
 */
function writeEntries(res, socket, bytes, last) {
  if (bytes > MAX_WRITTEN_BYTES) return false;
  const fd = socketFd(socket, 0, 1);
  if (typeof fd === 'string') return false;
  const buf = res[kChunkedBuffer];
  let kind = 0;  // the string entries' encoding class
  let units = 0;  // their UTF-16 code units
  let bufferBytes = 0;  // the Uint8Array entries' bytes
  let data = '';  // the string entries joined
  let lastString = '';  // the last non-empty UTF-8 string entry (as in sendFramed())
  let pairs = false;  // whether joining pairs surrogates written apart
  let strings = 0;  // the string entries
  for (let i = 0; i < buf.length; i += 3) {
    const chunk = buf[i];
    const encoding = buf[i + 1];
    if (typeof chunk === 'string') {
      const cls = encodingClass(encoding, socket);
      if (cls === 0 || (kind !== 0 && cls !== kind)) return false;
      kind = cls;
      units += chunk.length;
      strings++;
      data += chunk;
      if (chunk.length !== 0 && cls === UTF8) {
        if (lastString.length !== 0 && pairsSurrogates(lastString, chunk)) pairs = true;
        lastString = chunk;
      }
    } else if (chunk instanceof Uint8Array) {
      // The socket's write() throws for an unknown encoding, even with bytes.
      if (encoding && encoding !== 'buffer' && !Buffer.isEncoding(encoding)) return false;
      bufferBytes += chunk.byteLength;
    } else {
      return false;  // end()'s data of another type: Node's write_() throws
    }
  }
  // UTF-8 strings of one byte per unit are ASCII: the same bytes in latin1
  // (copied, not encoded).
  const latin1 = kind !== UTF8 || bytes - bufferBytes === units;
  const joined = bufferBytes === 0 && !pairs;
  // Past the addon encoder's limit, joined UTF-8 goes as Node encodes it.
  const encoded = joined && !latin1 && units > MAX_ENCODED_UNITS_PER_ENTRY;
  if (!latin1 && !joined && units > MAX_ENCODED_UNITS_PER_ENTRY * strings) return false;
  args[ARG_FD] = fd;
  args[ARG_WRITER] = -1;
  args[ARG_BODY_FLAGS] = (latin1 ? BODY_LATIN1 : BODY_UTF8) | (last ? CHUNKED : 0) | (encoded ? BODY_ENCODED : 0);
  args[ARG_BODY_BYTES] = bytes;
  const header = res._headerSent ? '' : res._header;
  args[ARG_HEAD_UNITS] = header.length;
  if (joined) {
    args[ARG_BODY_UNITS] = units;
    binding.writeChunk(header, encoded ? Buffer.from(data, 'utf8') : data);
  } else {
    binding.writeChunks(header, buf);
  }
  return !refused();
}

/**
 * Whether the kernel took none of writeEntries()'s bytes (its send buffer
 * full: nothing written, no error); then the addon's copy is dropped and
 * the entries stay, for Node's own sends (writeEntries() returns false, as
 * where it did not write). Node's sends queue the chunk as
 * Node counts it: writableLength, write()'s return value and 'drain'
 * stay Node's, where the addon's rest handed to socket.write() would count
 * its bytes (more than a string's UTF-16 code units beyond ASCII: a
 * review found write() returning false two writes early). A write the
 * kernel took in part still hands the rest over (README, "Known
 * differences").
 */
function refused() {
  if (results[RESULT_WRITTEN] !== 0 || results[RESULT_REMAINING] === 0) return false;
  binding.pending();
  return true;
}

/**
 * The callback of the entries writeEntries() wrote (callingEach(); with
 * `whole`, all of them written, none where no write() gave one), the
 * entries cleared as Node's uncork() clears them.
 */
function takeEntries(res, whole) {
  const buf = res[kChunkedBuffer];
  const sent = whole && callsNothing(buf) ? undefined : callingEach(buf.slice());
  buf.length = 0;
  res[kChunkedLength] = 0;
  return sent;
}

/**
 * Node 24 and later, in the package's uncork() (patchEnd's, and the one
 * res.fastWrite() schedules): the tick's collected entries written by the
 * addon (writeEntries()) in place of Node's sends, where `res` is the
 * socket's current response and no write() asked for 'drain' (the socket
 * would then emit one for Node's write of the whole chunk, and only the
 * rest of a partial write is queued here). Node's uncork() then runs with
 * nothing left to send. Returns whether it wrote.
 */
function writeTick(res, socket) {
  if (res[kNeedDrain] || !writesCollected(res, socket) || !writeEntries(res, socket, res[kChunkedLength], false)) {
    return false;
  }
  // All of it written: where no write() gave a callback, nothing is left
  // to call, and no tick is scheduled to call the no-ops (the socket saw no
  // write). A rest goes to socket.write() with the callback, as Node gives
  // its last socket write one: Writable's after-write tick (its 'drain',
  // a destroyed socket's errors) then comes when Node's comes.
  const sent = takeEntries(res, results[RESULT_REMAINING] === 0);
  res._headerSent = true;
  // The rest, if any, goes into the socket's queue under the response's
  // cork; Node's uncork() uncorks it.
  settle(res, socket, results[RESULT_WRITTEN], results[RESULT_REMAINING], null, false, sent);
  countUncork(true);
  return true;
}

/**
 * Node 24 and later, in place of Node's end() of `res` (`res.fastEnd()`,
 * or end() under patchEnd) when write() calls of this tick collected
 * chunks: the head (unless it was sent), the collected chunks
 * and end()'s `data` as one chunk, and the last chunk, written by the
 * addon (writeEntries()), then Node's end() finishes the response
 * (lib/complete.js) with nothing left to send. Node's end() sends the
 * same bytes: its uncork() the head with the size line, CRLF, each chunk,
 * CRLF, then the last chunk, as one writev() of that many socket writes.
 * The write() callbacks are called with the write's error after it, before
 * 'finish', as the socket calls the callback of Node's CRLF.
 *
 * Taken only where Node's end() reaches its flush with nothing done first
 * that this would reorder (flushCollected()): the response's only cork is
 * the tick's, its uncork(), _send() and _writeRaw() are Node's (a wrapper
 * sees Node's calls), no trailers, `data` a string or bytes in a known
 * encoding, and writeEntries() takes the entries. Returns what Node's
 * end() returns (`res`), or null: nothing done, Node's end() is to be
 * called.
 *
 * @param {import('http').ServerResponse} res
 * @param {unknown} data end()'s first argument.
 * @param {unknown} encoding end()'s second argument.
 * @param {unknown} callback end()'s third argument.
 * @returns {import('http').ServerResponse|null}
 */
function endCollected(res, data, encoding, callback) {
  if (!FRAMES_CHUNK || !endFlushes(res) || res._trailer !== '' || !isNodesUncork(res.uncork)) return null;
  const socket = sendingSocket(res);
  if (socket === null || !writesCollected(res, socket)) return null;
  const bytes = collectEndData(res, data, encoding, true);
  if (bytes < 0) return null;
  if (!writeEntries(res, socket, res[kChunkedLength] + bytes, true)) {
    if (bytes > 0) res[kChunkedBuffer].length -= 3;
    return null;
  }
  const sent = takeEntries(res, false);
  const cb = typeof data === 'function' ? data : (typeof encoding === 'function' ? encoding : callback);
  return complete(res, results[RESULT_WRITTEN], results[RESULT_REMAINING], null,
                  typeof cb === 'function' ? cb : undefined, undefined, false, sent);
}

/**
 * Whether the addon may write the entries `res` collected to `socket`
 * (writeEntries() then asks the socket): the addon loaded, `res` the
 * socket's current response with nothing queued in its outputData before
 * them, its head rendered (sent or not), a chunked body.
 */
function writesCollected(res, socket) {
  return binding !== null && res.chunkedEncoding && socket._httpMessage === res && res.outputData.length === 0 &&
    typeof res._header === 'string';
}

/** Whether uncork() can be installed over this Node's own. */
const JOINS_CHUNKS = nodeUncork !== null;

module.exports = { uncork, flushCollected, endCollected, JOINS_CHUNKS, FRAMES_CHUNK };
