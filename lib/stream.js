'use strict';

// fastResponse.write(res, chunk[, encoding][, callback]): Node's
// `res.write(chunk, encoding, callback)`, a chunked body's chunk framed in
// one socket write.
//
// Node's write() (lib/_http_outgoing.js write_()) hands a chunk of a
// chunked body to the socket as four writes (size line, CRLF, data, CRLF),
// each through _send(), _writeRaw() and stream.Writable, corks the socket
// for the tick and uncorks it on the next, so that the tick's writes leave
// with one writev(2). Here a string chunk goes to the socket framed, as one
// string (the head joins its first one, as Node joins it to the size
// line), and a Buffer chunk or a string of 16 Ki units or more as three
// writes (size line, data, CRLF): fewer
// calls through the same machinery, and the socket's cork, buffer,
// writableLength (it counts the same units), write()'s return value,
// 'drain', callbacks and errors stay Node's own, byte for byte.
//
// Why not the addon: a string chunk that crosses into C++ must be copied
// into a new Buffer there (napi_create_buffer per chunk) before the socket
// can take it, while a framed string goes to libuv through the socket's
// own writev(2) storage, copied once. And where the socket's queue has
// the shape of Node 18 and 20, a tick's framed strings join the socket's
// last queue entry (writeQueued()): one entry where Node queues four per
// chunk. Measured under callgrind
// (benchmark/instructions.js, stream case, 64 B, Node 20), instructions per
// 8-chunk response: one write per tick, Node's 207,672, framed natively
// 159,389, framed here 127,057 (the bound 98,917); 8 writes in one tick,
// Node's 140,825, framed here 88,433 (the bound 41,772), where native
// framing measured slower than Node's (0.84x).
//
// Node 24 and later collect the chunked writes of every tick themselves
// (kChunkedBuffer: write_() corks the response) and send them as one
// chunk: there write() is Node's (NODE_COLLECTS_TICK_CHUNKS). Node 22 corks
// the socket and frames each chunk with four _send() calls, as Node 18 and
// 20 do: the package's write() applies there, except while a user's
// res.cork() holds the response, when Node 22 collects the chunks into
// kChunkedBuffer for its uncork(). A write of a body Node does not frame
// (a Content-Length, an HTTP/1.0 client) is Node's too: one socket write
// either way.

const { R } = require('./reasons');
const { bodyKind, isAscii, chunkSize } = require('./body');
const {
  nodeWrite, nodeEnd, nodeUncork, nodeCork, socketWrite, kNeedDrain, kCorked, kChunkedBuffer, NODE_COMBINES_CHUNKS,
  NODE_COLLECTS_TICK_CHUNKS,
  SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT, sendsThroughNode, defaultEncodingIsUtf8,
} = require('./node-internals');
const { countFallback, countWrite } = require('./stats');
const { countBytes, complete } = require('./complete');
const { uncork: uncorkFramed, FRAMES_CHUNK } = require('./chunked-buffer');
const { socketRefusal, handleFd } = require('./socket-fd');
const { binding, layout, args, results } = require('./binding');
const { Writable } = require('node:stream');
const { Buffer } = require('node:buffer');

const {
  BODY_KIND_MASK, BODY_LATIN1, BODY_UTF8, BODY_BYTES, ARG_FD, ARG_WRITER, ARG_BODY_FLAGS, ARG_BODY_UNITS, ARG_BODY_TAG,
  ARG_HEAD_UNITS, RESULT_WRITTEN, RESULT_REMAINING,
} = layout;

// Whether the socket's Writable queues writes in the shape writeQueued()
// joins them in (Node 18 to 22; 24 and later collect a tick's chunks
// themselves): an array from bufferedIndex on of entries { chunk,
// encoding, callback }, `length` in units, settable needDrain and allNoop.
const JOINS_QUEUED_WRITES = !NODE_COLLECTS_TICK_CHUNKS && queueShapeKnown();
// Whether Writable's `buffered` is an accessor over the state's bits (Node
// 20.x and 22), or a plain array property (Node 18).
const BUFFERED_ACCESSOR = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(new Writable()._writableState), 'buffered') !== undefined;

function queueShapeKnown() {
  const w = new Writable({ decodeStrings: false, write() {}, writev() {} });
  w.cork();
  w.write('ab', 'latin1', nop);
  const state = w._writableState;
  const buffered = state.buffered;
  return Array.isArray(buffered) && buffered.length === 1 && state.bufferedIndex === 0 &&
    buffered[0].chunk === 'ab' && buffered[0].encoding === 'latin1' && buffered[0].callback === nop &&
    state.length === 2 && typeof state.needDrain === 'boolean' && typeof state.allNoop === 'boolean';
}

// Whether Node's end() of a response whose tick left its entries in the
// socket's queue may be done here (endQueued()): the entries taken out of
// the socket's Writable as its write would leave them (takeQueued()), which
// this Node's Writable must then treat as empty (a probe at load: nothing
// written, end() reaching 'prefinish' at once).
const ENDS_QUEUED_WRITES = JOINS_QUEUED_WRITES && endsQueuedWrites();

function endsQueuedWrites() {
  let wrote = false;
  const write = (chunk, encoding, cb) => {
    wrote = true;
    cb();
  };
  const w = new Writable({ decodeStrings: false, write, writev: write });
  let prefinished = false;
  w.on('prefinish', () => {
    prefinished = true;
  });
  w.cork();
  w.write('ab', 'latin1', nop);
  const state = w._writableState;
  if (state.pendingcb !== 1) return false;
  takeQueued(state, 2);
  if (w.writableLength !== 0 || state.getBuffer().length !== 0) return false;
  w.uncork();
  w.end();
  return !wrote && prefinished;
}

// The socket queue entry this module's last framed string went into, while
// it may still be the socket's last (writeQueued()); per realm (each
// worker_thread loads its own), forgotten when the tick's cork ends.
let queued = null;
// A joined entry ends at a write with a callback (each callback keeps its
// own entry: the writableLength it sees and its own error if the socket is
// destroyed first) and at 64 Ki units: the joined string is flattened into
// the JS heap once before it is written, so no tick's writes can grow one
// string towards V8's limit (about 512 MiB) or the heap's.
const JOIN_LIMIT = 64 * 1024;
// A string chunk of at least this many UTF-16 units is not framed into a
// new string: it goes to the socket as it is, between its size line and
// CRLF (writeFramed()), as Node's write_() sends it. A framed string is
// a copy of the chunk, flattened into the JS heap before it is written, and
// a tick's writes of one large string would each hold their own copy until
// the tick's writev(2) (300 writes of one 1 MiB string in a tick ran out of
// a 160 MiB heap where Node's write() shares the one string). Under it the
// copy costs less than the two queue entries it saves; Writable's own
// highWaterMark, the size where a write alone asks for 'drain'.
const FRAMED_STRING_LIMIT = 16 * 1024;

/**
 * Why `res.write(chunk)` is Node's, or null: the response is the socket's
 * current one and can take a chunk now.
 */
function writeReason(res) {
  if (binding === null) return R.NO_ADDON;
  if (NODE_COLLECTS_TICK_CHUNKS) return R.NODE_COMBINES_CHUNKS;
  if (res.finished || res.destroyed) return R.FINISHED;
  // Node 22: a response the user corked (res.cork(), or an uncork() too
  // many: write_() tests `msg[kCorked]` as a truth value) has its chunks
  // collected into kChunkedBuffer once its head is sent, and sent by its
  // uncork() (or end()).
  if (NODE_COMBINES_CHUNKS && res[kCorked]) return R.NODE_COMBINES_CHUNKS;
  if (res.strictContentLength) return R.STRICT_CONTENT_LENGTH;
  if (res.outputData.length !== 0) return R.QUEUED;
  if (!sendsThroughNode(res)) return R.WRITE_RAW_REPLACED;
  const socket = res.socket;
  if (socket === null || socket === undefined || socket._httpMessage !== res) return R.NOT_CURRENT;
  if (socket.write !== socketWrite) return R.SOCKET_WRITE_REPLACED;
  // (Not writable covers destroyed: Writable's getter reads its state's
  // destroyed, which a destroyed socket sets, and one getter call less.)
  if (!socket.writable) return R.SOCKET_CLOSED;
  if (!defaultEncodingIsUtf8(socket)) return R.ENCODING;
  return null;
}

/**
 * Node's `res.write(chunk, encoding, callback)`, fast (see index.js for the
 * public documentation).
 */
function write(res, chunk, encoding, callback) {
  if (NODE_COLLECTS_TICK_CHUNKS) return writeCollected(res, chunk, encoding, callback);
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
    else if (!res.chunkedEncoding) reason = R.NOT_CHUNKED;
  }
  if (reason !== null) {
    countFallback(reason, res, chunk);
    return nodeWrite.call(res, chunk, encoding, callback);
  }
  const socket = res.socket;
  if (!socket.writableCorked) {
    socket.cork();
    process.nextTick(uncorkTick, socket);
  }
  countWrite();
  let ret;
  if ((kind & BODY_KIND_MASK) === BODY_BYTES) {
    ret = writeFramed(res, socket, chunk, chunk.byteLength, null, cb);
  } else if (chunk.length >= FRAMED_STRING_LIMIT) {
    const bytes = stringBytes(chunk, kind);
    ret = writeFramed(res, socket, chunk, bytes, bytes === chunk.length ? 'latin1' : 'utf8', cb);
  } else {
    ret = writeFramedString(res, socket, chunk, kind, cb);
  }
  if (!ret) res[kNeedDrain] = true;
  return ret;
}

/**
 * Node 24 and later (NODE_COLLECTS_TICK_CHUNKS): Node's own write(), which
 * collects a tick's chunks into kChunkedBuffer, with the tick's uncork()
 * the package's (lib/chunked-buffer.js: the string chunks framed into one
 * socket write), as under patchEnd, whose uncork() Node's write_() calls
 * itself. On the write() that starts a tick, at the point where Node's
 * write_() corks the response and schedules its uncork() (after its
 * checks and the implicit head: collectReason()), the response is corked
 * here and uncorkCollected() scheduled instead; Node's write() then finds
 * the socket corked and collects the chunk. The tick's later writes (and
 * any while the response is corked) are Node's as they are, collected
 * for the same uncork(), and counted nowhere, as every write() under
 * patchEnd there: stats().uncorks counts what the uncork() framed or
 * joined.
 * Measured under callgrind (benchmark/instructions.js, stream case, Node
 * 26, one write of 64 B per tick): see docs/writer.md, "Streamed writes,
 * version by version".
 */
function writeCollected(res, chunk, encoding, callback) {
  const reason = collectReason(res, chunk, encoding);
  if (reason === null) {
    res.cork();
    process.nextTick(uncorkCollected, res);
    countWrite();
  } else if (reason !== R.SOCKET_BUSY || !res[kCorked]) {
    countFallback(reason, res, chunk);
  }
  return nodeWrite.call(res, chunk, encoding, callback);
}

/**
 * Why Node's write_() would not cork the response for a tick here and
 * reach its collecting with a string chunk (writeCollected()), or null.
 * Its checks in its order, those that throw or return left to it: the
 * chunk's type, an ended or destroyed response, strictContentLength, an
 * unknown encoding; then the implicit head, as it renders it, a response
 * without a body, a body it does not frame, and its own test: a socket
 * not yet corked.
 */
function collectReason(res, chunk, encoding) {
  if (binding === null) return R.NO_ADDON;
  if (!FRAMES_CHUNK || typeof chunk !== 'string') return R.NODE_COMBINES_CHUNKS;
  if (res.finished || res.destroyed) return R.FINISHED;
  if (res.strictContentLength) return R.STRICT_CONTENT_LENGTH;
  // write() passes a function as the callback; any other encoding that is
  // set and unknown, a number too, makes write_() throw.
  if (encoding && typeof encoding !== 'function' && !Buffer.isEncoding(encoding)) return R.ENCODING;
  const socket = res.socket;
  if (socket === null || socket === undefined) return R.NOT_CURRENT;
  if (socket.writableCorked) return R.SOCKET_BUSY;
  // A cork() of the user's is called by write_() itself, once (it might
  // not cork the socket, and write_() would call it again).
  if (res.cork !== nodeCork || nodeCork === null) return R.NODE_COMBINES_CHUNKS;
  if (!res._header) res._implicitHeader();
  if (!res._hasBody) return R.NO_BODY_ALLOWED;
  if (!res.chunkedEncoding) return R.NOT_CHUNKED;
  return null;
}

/**
 * Node's connectionCorkNT() for a tick writeCollected() corked: the
 * response's uncork() when it is still corked, the package's framing one
 * in place of Node's own.
 */
function uncorkCollected(res) {
  if (!res[kCorked]) return;
  if (res.uncork === nodeUncork) uncorkFramed.call(res);
  else res.uncork();
}

/**
 * A string chunk of a chunked body: size line, CRLF, the chunk and CRLF as
 * one socket write where Node's write_() makes four. The socket counts the
 * same units in writableLength (Node's four strings and Buffers add up to
 * the same count) and writes the same bytes: the size line and CRLFs are
 * ASCII in any of the two encodings; the head, Node's latin1 string, joins
 * them unless its bytes would change in UTF-8.
 * A chunk whose UTF-8 length equals its length is ASCII, the same bytes in
 * latin1: it goes as latin1 (writeLatin1()), which the socket's write
 * storage takes as a copy (String::WriteOneByte) instead of a UTF-8
 * encoding, and which a tick's later writes join as bytes.
 */
function writeFramedString(res, socket, chunk, kind, cb) {
  const done = callbackOf(cb);
  let bytes = -1;
  if (JOINS_QUEUED_WRITES && queued !== null && res._headerSent && chunk.length >= BYTES_JOIN_UNITS &&
      (kind & BODY_KIND_MASK) !== BODY_LATIN1) {
    // A UTF-8 chunk that may join the tick's bytes: written into the slab
    // as UTF-8, which measures it (joinUtf8()).
    bytes = joinUtf8(socket, chunk, done);
    if (bytes < -1) return bytes === JOINED_TRUE;
  }
  if (bytes < 0) bytes = stringBytes(chunk, kind);
  const size = chunkSize(bytes);
  const header = res._headerSent ? null : res._header;
  res._headerSent = true;
  if (bytes === chunk.length) return writeLatin1(socket, header, size, chunk, done);
  let data;
  if (header === null) {
    data = `${size}\r\n${chunk}\r\n`;
  } else if (isAscii(header)) {
    data = `${header}${size}\r\n${chunk}\r\n`;
  } else {
    writeLatin1(socket, header, size, null, nop);
    data = `${chunk}\r\n`;
  }
  return writeQueued(socket, data, 'utf8', done);
}

/**
 * The function a framed string chunk gives the socket: the user's
 * callback, or Node's no-op where none was given, as Node's write_() gives
 * its last socket write one (its own no-op): Writable then schedules its
 * after-write tick, where it emits 'drain' and reports a destroyed
 * socket's error to the writes queued behind (with Writable's own no-op
 * or none, both came a tick late: a review found it on Node 20 and 22).
 */
function callbackOf(cb) {
  if (typeof cb !== 'function') return nop;
  if (!SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT) return cb;
  // `this` as the socket gives it (Node's writev calls each callback on
  // its queue entry).
  return function callback(err) {
    return cb.call(this, err);
  };
}

// The realm's byte slab (per realm: each worker_thread loads its own),
// where a tick's latin1 writes after its first are joined (writeLatin1()):
// copied in once and queued as one view on it (QueuedBytes). Its bytes are
// never written twice: a full slab is left to the views that still hold it
// (the socket's queue, a write in flight) and a new one taken, as
// Buffer.allocUnsafe() takes from its pool. `slabUsed` is where the next
// bytes go.
const SLAB_SIZE = 32 * 1024;
let slab = null;
let slabUsed = SLAB_SIZE;
// A string shorter than this goes into the slab a unit at a time (the size
// line, CRLF), a longer one with Buffer's latin1Write() (one call into
// C++, a copy).
const SHORT_STRING = 16;
// A tick's latin1 string entry becomes bytes (QueuedBytes) when a chunk of
// at least this many units joins it; smaller ones join it as a string
// (writeQueued()). Measured under callgrind (8 writes in one tick, Node
// 20): joined as bytes, 64 B chunks cost 8.7 % more instructions per
// response than joined as a string (the call into latin1Write() and the
// entry's bookkeeping cost more than the flattening they save), 1 KiB
// chunks 6.5 % less.
const BYTES_JOIN_UNITS = 512;
// Buffer's own subclass of Uint8Array (Buffer[Symbol.species]), whose
// constructor makes a view on the slab without subarray()'s lookups.
const FastBuffer = typeof Buffer[Symbol.species] === 'function' &&
  new Buffer[Symbol.species](new ArrayBuffer(1), 0, 1) instanceof Buffer ? Buffer[Symbol.species] : null;
// The framed latin1 string queued last as a new entry (writeLatin1()) and
// its parts: while it is `queued`'s chunk, a join copies the parts into
// the slab as they are, where the string would be flattened first.
let queuedData = null;
let queuedHeader = null;
let queuedSize = '';
let queuedChunk = null;

/**
 * `header` (null once the head is sent), the chunk-size line `size`
 * (hex; '' for CRLF alone), CRLF, then `chunk` (an ASCII string, or null)
 * and CRLF, to the socket as latin1, with `done`. Every unit is below
 * 0x100 (the head as Node's _storeHeader() checks it).
 *
 * The first such write of a tick queues one latin1 string, as one write
 * per tick is best sent (from the stack, node::StreamBase::WriteString). A
 * write that finds that entry (or one it grew) still the socket's last,
 * with no callback, joins it: as a string while the chunks are small
 * (writeQueued()); from a chunk of BYTES_JOIN_UNITS on, the entry becomes
 * bytes of the slab
 * (QueuedBytes), the earlier parts and these copied in once, and the
 * tick's writev(2) takes one Buffer where Node's write() queues four
 * entries per chunk and a joined string would be flattened and copied
 * twice. Measured under callgrind (benchmark/instructions-stream.js, 8
 * writes of 1 KiB in one tick, Node 20): see docs/writer.md, "Joined
 * writes as bytes". What the socket exposes stays as separate writes leave
 * it (joined()): the bytes and their order, writableLength (a unit per
 * byte, as the socket counts a latin1 string), write()'s return value and
 * needDrain, and the callbacks, an entry taking writes only until one
 * carries a callback.
 */
function writeLatin1(socket, header, size, chunk, done) {
  const units = (header === null ? 0 : header.length) + size.length + 2 + (chunk === null ? 0 : chunk.length + 2);
  if (JOINS_QUEUED_WRITES && queued !== null &&
      (queued instanceof QueuedBytes || (chunk !== null && chunk.length >= BYTES_JOIN_UNITS))) {
    const state = socket._writableState;
    if (queuedLast(state)) {
      const entry = bytesEntry(units, true);
      if (entry !== null) {
        state.buffered[state.buffered.length - 1] = entry;
        queued = entry;
        slabUsed = entry.end = putFramed(header, size, chunk, entry.end);
        return joined(state, units, done);
      }
    }
  }
  const data = chunk === null ?
    (header === null ? `${size}\r\n` : `${header}${size}\r\n`) :
    (header === null ? `${size}\r\n${chunk}\r\n` : `${header}${size}\r\n${chunk}\r\n`);
  const ret = writeQueued(socket, data, 'latin1', done);
  if (queued !== null && queued.chunk === data) {
    queuedData = data;
    queuedHeader = header;
    queuedSize = size;
    queuedChunk = chunk;
  }
  return ret;
}

/**
 * The tick's queued entry and its last framed string's parts forgotten:
 * nothing joins them any more, and they are not kept alive until the next
 * write.
 */
function forgetQueued() {
  queued = null;
  queuedData = null;
  queuedHeader = null;
  queuedChunk = null;
}

/**
 * Whether `queued` is the last entry of the socket's queue, not yet taken
 * and with no callback: a write may join it (writeLatin1(), joinUtf8(),
 * writeQueued()).
 */
function queuedLast(state) {
  const buffered = state.buffered;
  const last = buffered.length - 1;
  return last >= state.bufferedIndex && buffered[last] === queued && queued.callback === nop;
}

/**
 * `queued` as a socket queue entry of bytes with room for `units` more at
 * its end (the slab's next bytes): itself when it is one, or a QueuedBytes
 * holding a copy of its latin1 string, or of its bytes, in a new slab
 * where the current one's free space is short and `mayTakeSlab`; null when
 * it can take none (its chunk read, in another slab, more than a slab, or
 * a new slab it may not take). A copy is not yet the socket's entry, nor
 * its bytes the slab's used ones: the caller puts it in the queue, or
 * drops it.
 */
function bytesEntry(units, mayTakeSlab) {
  if (queued instanceof QueuedBytes) {
    if (queued.view !== null || queued.slab !== slab || queued.end !== slabUsed) return null;
    if (SLAB_SIZE - slabUsed >= units) return queued;
    // The slab is full: the tick's bytes so far move to a new one, where
    // the tick would otherwise go on in a second entry (a string first,
    // its chunk measured by Buffer.byteLength(); endQueued() would join
    // the entries into a copy). A tick's bytes are moved once at most:
    // once they fill a slab of their own, they end there.
    const length = queued.end - queued.start;
    if (!mayTakeSlab || length + units > SLAB_SIZE) return null;
    const from = slab;
    takeSlab();
    from.copy(slab, 0, queued.start, queued.end);
    const moved = new QueuedBytes(slab, 0, length);
    moved.callback = queued.callback;
    return moved;
  }
  if (queued.encoding !== 'latin1') return null;
  const data = queued.chunk;
  if (data.length + units > SLAB_SIZE) return null;
  if (SLAB_SIZE - slabUsed < data.length + units) {
    if (!mayTakeSlab) return null;
    takeSlab();
  }
  const start = slabUsed;
  const end = data === queuedData ? putFramed(queuedHeader, queuedSize, queuedChunk, start) : putLatin1(data, start);
  const entry = new QueuedBytes(slab, start, end);
  entry.callback = queued.callback;
  return entry;
}

/** A new slab, empty, in place of the current one (left to its views). */
function takeSlab() {
  slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
  slabUsed = 0;
}

// joinUtf8()'s results for a chunk it joined: write()'s value true or
// false.
const JOINED_TRUE = -2;
const JOINED_FALSE = -3;
// How many more chunks joinUtf8() leaves to Buffer.byteLength() after one
// it found beyond ASCII (UTF8_MISS_SKIPS), whose UTF-8 it wrote in vain.
let utf8Skips = 0;
const UTF8_MISS_SKIPS = 31;
// The most room joinUtf8() may take a new slab for (a quarter of one):
// when its chunk is found beyond ASCII, the new slab is kept for the next
// bytes and the old slab's free space, less than this, is left.
const UTF8_SLAB_ROOM = SLAB_SIZE / 4;

/**
 * A string chunk of a chunked body after the head was sent, of
 * BYTES_JOIN_UNITS units or more, joined as bytes to the tick's entry
 * (writeLatin1(), QueuedBytes) without measuring its UTF-8 length first:
 * the chunk is written into the slab as UTF-8 behind room for its size
 * line, and its bytes are its units only where every unit is ASCII: then
 * the size line and CRLFs go around it and it joins as writeLatin1()
 * joins a chunk (the same bytes and units). Returns JOINED_TRUE or
 * JOINED_FALSE when it joined (write()'s value true or false), the chunk's
 * UTF-8 length when it is not ASCII (nothing joined: the slab's bytes are
 * dropped), or -1 where it cannot join (no entry to join, the slab's free
 * space too small for the chunk at 3 bytes a unit and the room more than
 * UTF8_SLAB_ROOM: a chunk found beyond ASCII must not have left much of a
 * slab unused) or leaves the chunk to
 * Buffer.byteLength(): for the UTF8_MISS_SKIPS chunks after one beyond
 * ASCII, so that text beyond ASCII pays the vain write (slower than
 * measuring a sequential string) for one chunk in 32 at most.
 *
 * Why: on Node 18 to 22, Buffer.byteLength() of a string that is not a
 * sequential one (a concatenation, a template's output, a string the
 * garbage collector kept as a flattened concatenation) is V8's
 * String::Utf8Length, a flatten and a loop over the units, about 180 ns a
 * KiB here against 20 to 50 ns for a sequential string; Node's own write()
 * pays it too. Sampled with perf (benchmark/profile.js, 8 writes of 1 KiB
 * in one tick, Node 20): see docs/writer.md, "UTF-8 length by writing".
 */
function joinUtf8(socket, chunk, done) {
  const state = socket._writableState;
  if (!queuedLast(state)) return -1;
  if (utf8Skips !== 0) {
    utf8Skips--;
    return -1;
  }
  const units = chunk.length;
  const size = chunkSize(units);
  const room = size.length + 2 + 3 * units + 2;
  const entry = bytesEntry(room, room <= UTF8_SLAB_ROOM);
  if (entry === null) return -1;
  const at = entry.end;
  const dataAt = at + size.length + 2;
  const bytes = slab.utf8Write(chunk, dataAt, 3 * units);
  if (bytes !== units) {
    utf8Skips = UTF8_MISS_SKIPS;
    return bytes;
  }
  putFramed(null, size, null, at);
  let end = dataAt + bytes;
  slab[end++] = 13;
  slab[end++] = 10;
  if (entry !== queued) {
    state.buffered[state.buffered.length - 1] = entry;
    queued = entry;
  }
  slabUsed = entry.end = end;
  return joined(state, size.length + 2 + units + 2, done) ? JOINED_TRUE : JOINED_FALSE;
}

/** writeLatin1()'s parts into the slab at `at`; returns their end. */
function putFramed(header, size, chunk, at) {
  if (header !== null) at = putLatin1(header, at);
  at = putLatin1(size, at);
  slab[at++] = 13;
  slab[at++] = 10;
  if (chunk !== null) {
    at = putLatin1(chunk, at);
    slab[at++] = 13;
    slab[at++] = 10;
  }
  return at;
}

/** Copies the latin1 string `text` into the slab at `at`; returns its end. */
function putLatin1(text, at) {
  const n = text.length;
  if (n >= SHORT_STRING) return at + slab.latin1Write(text, at, n);
  for (let i = 0; i < n; i++) slab[at + i] = text.charCodeAt(i);
  return at + n;
}

/**
 * A socket queue entry of joined bytes: the slab from `start` to `end`.
 * Its chunk (a Buffer over them) is made when the socket reads it, and
 * from then on nothing joins it (`view` set).
 */
class QueuedBytes {
  constructor(buffer, start, end) {
    this.slab = buffer;
    this.start = start;
    this.end = end;
    this.encoding = 'buffer';
    this.callback = nop;
    this.view = null;
  }

  get chunk() {
    if (this.view === null) {
      this.view = FastBuffer === null ? this.slab.subarray(this.start, this.end) :
        new FastBuffer(this.slab.buffer, this.slab.byteOffset + this.start, this.end - this.start);
    }
    return this.view;
  }
}

/**
 * socket.write(data, encoding, done) of a framed string into the socket's
 * queue (the socket is corked for the tick, or busy writing). When the
 * queue's last entry is this module's previous framed string in the same
 * encoding, `data` joins it instead of queueing another: the tick's
 * writev(2) then walks one entry (node::StreamBase::Writev reads each
 * entry's chunk and parses its encoding name) where Node's write() queues
 * four per chunk. Measured under callgrind (benchmark/instructions.js,
 * 8 writes in one tick, Node 20), instructions per response: 89,314 ->
 * 61,783 at 64 B, 95,180 -> 72,273 at 1 KiB (a later pair of runs of the
 * joined code read 64,391 and 79,024). What the socket exposes stays as
 * separate writes leave it: the bytes and their order, writableLength and
 * bytesWritten (the entry grows by the same units; Writable's
 * writeOrBuffer() adds them so), write()'s return value and needDrain (its
 * rule), and the callbacks: an entry takes joined writes only until one
 * carries a callback, which becomes the entry's own (JOIN_LIMIT), so each
 * callback is called as the socket calls its entry's.
 */
function writeQueued(socket, data, encoding, done) {
  if (!JOINS_QUEUED_WRITES) return socket.write(data, encoding, done);
  const state = socket._writableState;
  // (The encoding first: a QueuedBytes entry's chunk is not read.)
  if (queued !== null && queuedLast(state) && queued.encoding === encoding &&
      queued.chunk.length + data.length <= JOIN_LIMIT) {
    queued.chunk += data;
    return joined(state, data.length, done);
  }
  const ret = socket.write(data, encoding, done);
  const buffered = state.buffered;
  const entry = buffered.length > state.bufferedIndex ? buffered[buffered.length - 1] : null;
  queued = entry !== null && entry.chunk === data ? entry : null;
  return ret;
}

/**
 * What Writable's writeOrBuffer() does for a write it queues, for a write
 * of `units` that joined `queued`: the socket's length (writableLength)
 * grows by them, `done` becomes the entry's callback, and write()'s return
 * value and needDrain follow Writable's rule.
 */
function joined(state, units, done) {
  state.length += units;
  if (done !== nop) {
    queued.callback = done;
    state.allNoop = false;
  }
  const ret = state.length < state.highWaterMark;
  if (!ret) state.needDrain = true;
  return ret;
}

/**
 * Node's connectionCorkNT(): the tick's uncork; the joined entry is the
 * socket's now. Where this module's framed string is the tick's only
 * queued write, the socket writes it alone, from the stack when it fits
 * (node::StreamBase::WriteString), and a write that fails at once then
 * adds nothing to socket.bytesWritten; Node's own write() would have
 * queued four writes, one writev(), which adds all their bytes before
 * trying. So when that write failed at once (the socket errored in the
 * uncork, the handle's count unchanged), its bytes are added as Node's
 * writev() adds them (found by a new-user check: 137 where Node reads 143
 * after write('b') to a reset peer).
 */
function uncorkTick(socket) {
  const state = socket._writableState;
  const lone = queued !== null && state.buffered.length - state.bufferedIndex === 1 &&
    state.buffered[state.bufferedIndex] === queued ? queued : null;
  forgetQueued();
  const handle = socket._handle;
  if (lone === null || state.errored || handle === null || handle === undefined) {
    socket.uncork();
    return;
  }
  const before = handle.bytesWritten;
  socket.uncork();
  if (state.errored && handle.bytesWritten === before && state.buffered[state.bufferedIndex] !== lone) {
    countBytes(handle, Buffer.byteLength(lone.chunk, lone.encoding));
  }
}

/**
 * A Buffer or Uint8Array chunk of a chunked body, or a string chunk of
 * FRAMED_STRING_LIMIT units or more (`encoding` 'latin1' or 'utf8', null
 * for bytes; `bytes` its length in bytes): the size line and CRLF (after
 * the head, with the first chunk) as one latin1 string, the chunk as it
 * is, CRLF with the callback: three socket writes where Node makes four,
 * the chunk not copied. The size line joins the previous chunk's CRLF
 * (writeQueued()).
 */
function writeFramed(res, socket, chunk, bytes, encoding, cb) {
  const header = res._headerSent ? null : res._header;
  res._headerSent = true;
  writeLatin1(socket, header, chunkSize(bytes), null, nop);
  // (This module's no-op, where Node's write_() gives none: endQueued()
  // takes the entries that carry it as its own.)
  if (encoding === null) socket.write(chunk, nop);
  else socket.write(chunk, encoding, nop);
  return writeLatin1(socket, null, '', null, typeof cb === 'function' ? cb : nop);
}

/**
 * A string chunk's length in bytes: its length in latin1, its UTF-8 length
 * otherwise (equal to its length when it is ASCII: then it goes as latin1).
 */
function stringBytes(chunk, kind) {
  return (kind & BODY_KIND_MASK) === BODY_LATIN1 ? chunk.length : Buffer.byteLength(chunk, 'utf8');
}

/**
 * Node 18 to 22, in place of Node's end() of `res` (`res.fastEnd()`, or
 * end() under patchEnd) without data, after write() calls of this tick
 * left their framed chunks in the socket's queue (`queued`, writeLatin1()
 * and joinUtf8(): one entry, or more where a slab filled): the entries and
 * the last chunk written by the addon with one writev(2), then Node's
 * end() finishes the response (lib/complete.js) with nothing left to send.
 * Node's end() sends the same bytes at the same point: its last chunk
 * queued behind the entries, then the socket fully uncorked, one writev()
 * of them all.
 *
 * Taken only where nothing would be reordered or counted otherwise: the
 * socket's queued writes are this module's, the tick's entry last (bytes
 * of the slab, a latin1 or UTF-8 string, or a Buffer chunk writeFramed()
 * queued; their units, a string's length, sum to the socket's length),
 * with no callback, and they are the socket's only pending callbacks (no write
 * in flight, no callback of an earlier write still due; a tick's entry
 * split where the slab filled is two or more); no write asked for
 * 'drain'; `res` is the socket's current response, its head sent, chunked,
 * without trailers, with nothing in its outputData or (Node 22) its own
 * collected chunks; its _send() and _writeRaw() are Node's; the socket
 * passes socketRefusal() and libuv queues nothing on it. Measured under
 * callgrind: docs/writer.md, "A tick's chunks written with end(), Node 18
 * to 22".
 *
 * @param {import('http').ServerResponse} res
 * @param {Function} [callback] end()'s callback, added as Node's end()
 *   adds it (a 'finish' listener).
 * @returns {import('http').ServerResponse|null} `res` when written (what
 *   Node's end() returns), or null: nothing done, Node's end() is to be
 *   called.
 */
function endQueued(res, callback) {
  if (!ENDS_QUEUED_WRITES || binding === null || queued === null) return null;
  if (res.finished || res.destroyed || !res._headerSent || !res.chunkedEncoding || !res._hasBody ||
      res._trailer !== '' || res.strictContentLength || res.outputData.length !== 0 || !sendsThroughNode(res) ||
      (NODE_COMBINES_CHUNKS && (res[kCorked] || res[kChunkedBuffer].length !== 0))) {
    return null;
  }
  const socket = res.socket;
  if (socket === null || socket === undefined || socket._httpMessage !== res) return null;
  const state = socket._writableState;
  // A write() asked for 'drain', or Node's end() would (its last chunk
  // queued brings the socket's length to its highWaterMark): Node's write
  // of the tick emits it, and a server pauses a connection that needs it
  // before it hands over the next pipelined request.
  if (res[kNeedDrain] || state.needDrain || state.length + LAST_CHUNK.length >= state.highWaterMark) return null;
  const buffered = state.buffered;
  const count = buffered.length - state.bufferedIndex;
  if (state.writing || state.errored || count < 1 || state.pendingcb !== count ||
      buffered[buffered.length - 1] !== queued) {
    return null;
  }
  // Each entry's units (a string's length, as the socket counted them;
  // bytes otherwise) sum to the socket's length: a Buffer chunk whose
  // ArrayBuffer was detached (transferred) after its write() has no bytes
  // left (Node's end() sends it empty; Buffer.concat() would throw on Node
  // 18 and 20: found by a break-it check).
  let units = 0;
  let utf8 = false;
  for (let i = state.bufferedIndex; i < buffered.length; i++) {
    const entry = buffered[i];
    if (entry.callback !== nop) return null;
    if (entry instanceof QueuedBytes) {
      units += entry.end - entry.start;
    } else if (entry.encoding === 'latin1') {
      units += entry.chunk.length;
    } else if (entry.encoding === 'buffer') {
      units += entry.chunk.byteLength;
    } else if (entry.encoding === 'utf8' && typeof entry.chunk === 'string') {
      units += entry.chunk.length;
      utf8 = true;
    } else {
      return null;
    }
  }
  if (units !== state.length) return null;
  const fd = socketRefusal(socket) ?? handleFd(socket);
  if (typeof fd === 'string') return null;
  // (Joined from parts: where the kernel takes part of it, the rest goes
  // to the socket as views of the parts, the caller's Buffers among them.)
  const parts = queuedBody(buffered, state.bufferedIndex);
  const body = Array.isArray(parts) ? Buffer.concat(parts) : parts;
  args[ARG_BODY_FLAGS] = typeof body === 'string' ? (utf8 ? BODY_UTF8 : BODY_LATIN1) : BODY_BYTES;
  args[ARG_BODY_UNITS] = typeof body === 'string' ? body.length : 0;
  args[ARG_FD] = fd;
  args[ARG_WRITER] = -1;
  args[ARG_BODY_TAG] = 0;
  args[ARG_HEAD_UNITS] = 0;
  binding.writeRendered('', body);
  const written = results[RESULT_WRITTEN];
  const remaining = results[RESULT_REMAINING];
  // UTF-8 strings the kernel took none of (EAGAIN): the queue is left to
  // Node's end(), which counts them in UTF-16 units as it sends them,
  // where the addon's rest would go to the socket as bytes (a break-it
  // check found writableLength, needDrain and a 'drain' Node never emits).
  if (utf8 && written === 0 && remaining !== 0) {
    binding.pending();
    return null;
  }
  takeQueued(state, state.length);
  forgetQueued();
  const ended = complete(res, written, remaining, parts, typeof callback === 'function' ? callback : undefined);
  // Part of them taken: their rest, as bytes, may reach the socket's
  // highWaterMark where their units did not; Node's writev() of the tick
  // asks for no 'drain' (this function refuses where its last chunk would).
  if (utf8 && remaining !== 0) state.needDrain = false;
  return ended;
}

/**
 * Node 18 to 22, in place of Node's end(data) of `res` (`res.fastEnd()`,
 * or end() under patchEnd) with a string or bytes `data`, after write() calls of
 * this tick left their framed chunks in the socket's queue (`queued`):
 * `data` framed as this module frames a write()'s chunk, then
 * endQueued(). Node's end(data) corks the socket, frames the chunk with
 * write_() (the four socket writes of a write(), with Node's no-op
 * callback, without write()'s cork for the tick or its needDrain), then
 * sends the last chunk and fully uncorks the socket: the same bytes at the
 * same point, and where endQueued() refuses, Node's end() without data
 * sends the rest as it would (the chunk already queued as its write_()
 * queues it: the same units in writableLength).
 *
 * Taken only where this module's write() would frame `data` (writeReason()
 * null: the socket's current response, not finished or destroyed, no
 * strictContentLength, nothing in outputData, Node's _send(); a string
 * under FRAMED_STRING_LIMIT in an encoding whose units are its bytes or
 * UTF-8, or a non-empty Uint8Array: its size line, the bytes as they are
 * and CRLF, writeFramed()), the head sent with a chunked body, and the socket corked (by a
 * write() of this tick, which set `queued`, or by the user: Node's end()
 * fully uncorks it, so the socket's earlier queued writes leave with the
 * data either way).
 *
 * @param {import('http').ServerResponse} res
 * @param {*} data end()'s first argument (a non-empty string or
 *   Uint8Array here).
 * @param {*} [encoding] end()'s second argument.
 * @param {Function} [callback] end()'s callback.
 * @returns {import('http').ServerResponse|null} `res` (what Node's end()
 *   returns), or null: nothing done, Node's end() is to be called with
 *   the same arguments.
 */
function endQueuedData(res, data, encoding, callback) {
  if (!ENDS_QUEUED_WRITES || queued === null) return null;
  // (Bytes whose length is not their byteLength, a length property of
  // their own, are Node's: its write_() frames a chunk whose length is
  // not 0, its byteLength in the size line.)
  const bytes = data instanceof Uint8Array;
  if (bytes ? data.byteLength === 0 || data.length !== data.byteLength :
    typeof data !== 'string' || data.length === 0 || data.length >= FRAMED_STRING_LIMIT) {
    return null;
  }
  let enc = encoding;
  let cb = callback;
  if (typeof enc === 'function') {
    cb = enc;
    enc = null;
  }
  if (writeReason(res) !== null || !res._headerSent || !res.chunkedEncoding || !res._hasBody) return null;
  const socket = res.socket;
  if (!socket.writableCorked) return null;
  const kind = bodyKind(data, enc);
  if (typeof kind === 'string' || kind === -1) return null;
  // (No callback: Node's write_() from end() gives the chunk's last
  // socket write its own no-op, as writeFramedString() and writeFramed()
  // give none.)
  if (bytes) writeFramed(res, socket, data, data.byteLength, null, undefined);
  else writeFramedString(res, socket, data, kind, undefined);
  const ended = endQueued(res, cb);
  if (ended !== null) return ended;
  countFallback(R.HEAD_SENT, res, data);
  return typeof cb === 'function' ? nodeEnd.call(res, cb) : nodeEnd.call(res);
}

/**
 * The bytes of the socket's queued entries from `from` on (latin1 strings,
 * QueuedBytes and Buffer chunks, endQueued() checked) and the last chunk,
 * as one body for the addon: one string (latin1 or UTF-8), or bytes; where the tick
 * left one entry of bytes still last in the slab, the last chunk goes
 * into the slab behind it (no copy). Other entries (split where a slab
 * filled, Buffer chunks) are given as an array of Buffers to join: the
 * caller's Buffer chunks as they are (views of their memory), the strings
 * copied, the slab's bytes as views.
 */
function queuedBody(buffered, from) {
  if (from === buffered.length - 1) {
    const entry = buffered[from];
    if (!(entry instanceof QueuedBytes)) {
      if (typeof entry.chunk === 'string') return entry.chunk + LAST_CHUNK;
    } else if (entry.view === null && entry.slab === slab && entry.end === slabUsed &&
        SLAB_SIZE - slabUsed >= LAST_CHUNK.length) {
      slabUsed = entry.end = putLatin1(LAST_CHUNK, entry.end);
      return entry.chunk;
    }
  }
  const parts = [];
  for (let i = from; i < buffered.length; i++) {
    const entry = buffered[i];
    const chunk = entry.chunk;
    // (A string in its own encoding: each encoded apart, as the socket's
    // writev() encodes each entry.)
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, entry.encoding) : chunk);
  }
  parts.push(Buffer.from(LAST_CHUNK, 'latin1'));
  return parts;
}

// end()'s last chunk without trailers, as Node's end() sends it.
const LAST_CHUNK = '0\r\n\r\n';

/**
 * A Writable's state after the write of all its buffered entries, `units`
 * in all, had completed, as Writable's clearBuffer() and onwrite() leave
 * it: the buffer reset (resetBuffer(): on Node 20.x and 22 `buffered` is
 * an accessor whose null clears the state's kBuffered bit), its length
 * and the entries' pending callbacks gone. endQueued() has checked that no
 * write is in flight and no other callback due; ENDS_QUEUED_WRITES that
 * this Node's Writable reads the result as empty.
 */
function takeQueued(state, units) {
  state.pendingcb -= state.buffered.length - state.bufferedIndex;
  state.buffered = BUFFERED_ACCESSOR ? null : [];
  state.bufferedIndex = 0;
  state.allBuffers = true;
  state.allNoop = true;
  state.length -= units;
}

function nop() {}

module.exports = { write, endQueued, endQueuedData, ENDS_QUEUED_WRITES };
