// Type declarations for fast-response.
//
// Every function mirrors a Node.js http.ServerResponse behaviour: same bytes
// on the wire, same events, same errors (thrown with Node's `code`s).

/// <reference types="node" />

import type { ServerResponse, OutgoingHttpHeaders } from 'node:http';

declare module 'node:http' {
  interface ClientRequest {
    /**
     * Added by `install()`. Ends the request exactly as
     * `req.end(data, encoding, callback)` does (the same bytes, events and
     * errors), on Node 20 to 22 with the request head rendered natively
     * (Node 18 renders it itself); when the agent gives the request a
     * connected socket, head and body go out with one writev(2). On Node 24
     * and later, where the measured gain was none, it is Node's own end()
     * (`stats().requests.reasons['node-sends-request']`). A request on a new connection (still connecting), over
     * TLS, with `Expect: 100-continue`, or after `write()`/`flushHeaders()`
     * is written by Node (`stats().requests.reasons` says why).
     */
    fastEnd(callback?: () => void): this;
    fastEnd(data: string | Uint8Array | null | undefined, callback?: () => void): this;
    fastEnd(data: string | Uint8Array, encoding: BufferEncoding, callback?: () => void): this;
  }

  interface ServerResponse {
    /**
     * Added by `install()`. Ends the response exactly as
     * `res.end(data, encoding, callback)` does, with the head rendered
     * natively and head and body sent with one writev(2). After writes in
     * the same tick on Node 24 and later (which collect them), the chunks
     * Node's end() would flush, with `data`, and the last chunk leave with
     * one writev(2) of the addon (the head too, when not sent yet), or
     * framed as one socket write where the addon cannot take them.
     *
     * @returns `this`, as Node's end().
     * @throws ERR_INVALID_ARG_TYPE for a body that is not a string, Buffer
     *   or Uint8Array, ERR_UNKNOWN_ENCODING, ERR_HTTP_INVALID_STATUS_CODE,
     *   ERR_INVALID_CHAR, ERR_HTTP_CONTENT_LENGTH_MISMATCH, as Node's end()
     *   throws them, before any byte reaches the socket; ending twice emits
     *   ERR_STREAM_WRITE_AFTER_END, as Node.
     */
    fastEnd(callback?: () => void): this;
    fastEnd(data: string | Uint8Array | null | undefined, callback?: () => void): this;
    fastEnd(data: string | Uint8Array, encoding: BufferEncoding, callback?: () => void): this;
    /**
     * Added by `install()`. Writes a chunk of the body as
     * `res.write(chunk, encoding, callback)` does (same bytes, return value,
     * callbacks, errors; the known differences in callback order and
     * 'drain' are listed in the README, "Pipelined bursts and streamed writes:
     * the FastResponse writer", its known differences), a chunk of a chunked body framed and
     * handed to the socket in one write (a string) or three (a Buffer) where
     * Node makes four. On Node 24 and later Node's own write() collects the
     * chunk and the tick's chunks leave with one writev(2) of the addon (or
     * framed as one socket write) at the tick's uncork(), which the first
     * write of the tick schedules, or with `fastEnd()` in the same tick.
     *
     * @returns false when the socket's buffer is full: wait for 'drain'.
     * @throws ERR_INVALID_ARG_TYPE, ERR_STREAM_NULL_VALUES,
     *   ERR_UNKNOWN_ENCODING, as Node's write(); a write after end() emits
     *   ERR_STREAM_WRITE_AFTER_END, as Node.
     */
    fastWrite(chunk: string | Uint8Array, callback?: (err?: Error | null) => void): boolean;
    fastWrite(
      chunk: string | Uint8Array,
      encoding: BufferEncoding,
      callback?: (err?: Error | null) => void,
    ): boolean;
  }
}

declare namespace fastResponse {
  /** A header field value as writeHead() accepts it. */
  type FieldValue = string | number | ReadonlyArray<string | number>;

  /**
   * Header fields as `res.writeHead()` accepts them: a plain object
   * (`{ 'Content-Type': 'text/plain' }`), a flat array
   * `['Content-Type', 'text/plain', 'X-Id', 7]`, or `[name, value]` pairs
   * `[['Content-Type', 'text/plain'], ['Set-Cookie', ['a=1', 'b=2']]]`.
   */
  type Headers =
    | Readonly<Record<string, FieldValue>>
    | OutgoingHttpHeaders
    | ReadonlyArray<string | number | ReadonlyArray<string | number>>
    | null
    | undefined;

  /** A body: a string (UTF-8 unless an encoding is given) or bytes. */
  type Body = string | Uint8Array;

  interface Template {
    /** The status code the template was made with (an integer 100-999). */
    readonly statusCode: number;
    /**
     * `send(res, statusCode, headers, data)` with the template's status and
     * headers; only `Date`, `Connection`/`Keep-Alive` and `Content-Length`
     * are rendered per response.
     *
     * @throws ERR_HTTP_HEADERS_SENT when the head was already rendered.
     */
    send(res: ServerResponse, data?: Body): ServerResponse;
  }

  /**
   * Why a call went to Node's own code (stats().reasons), as lib/reasons.js
   * names them:
   * - 'no-addon': the native addon did not load (see loadError)
   * - 'end-replaced': the response's end() is not Node's (compression, an APM agent): it is called
   * - 'writehead-replaced': the response's writeHead() or _storeHeader() is not Node's (an APM agent's): send() calls writeHead(), which calls _storeHeader()
   * - 'write-replaced': the response's write() is not Node's: it is called
   * - 'write-raw-replaced': the response's _send() or _writeRaw() is not Node's (instrumentation counting bytes): Node's end() or write() runs, so that it sees them
   * - 'not-http1': not an http.ServerResponse (the HTTP/2 compatibility API; a ClientRequest, whose fast path is req.fastEnd()): its own end() or write() is called
   * - 'no-body': end() without data: nothing to write fast
   * - 'empty-body': an empty string or Buffer: Node writes no body
   * - 'body-type': a body that is not a string, Buffer or Uint8Array: Node throws
   * - 'encoding': a string whose bytes Node counts otherwise: end() in an encoding whose bytes differ from Buffer.byteLength's count; write() in hex, base64, ... (the socket counts characters); or a socket whose default encoding (setDefaultEncoding()) is not UTF-8
   * - 'finished': the response was already ended or destroyed
   * - 'head-sent': the head went out already (res.write() before end())
   * - 'strict-content-length': strictContentLength: Node checks the body against Content-Length
   * - 'chunked': the head says chunked and Node frames the body (trailers, or an empty chunk)
   * - 'no-head': Node rendered no head (trailers on Node 18)
   * - 'head-rendered': send() after writeHead(): Node throws or merges
   * - 'header-map': send() after setHeader(): writeHead() merges with the header map
   * - 'status-message': template().send() on a response whose statusMessage is not the template's
   * - 'unique-headers': the server's uniqueHeaders option joins an array value of this field
   * - 'keep-alive-value': a keepAliveTimeout or maxRequestsPerSocket the addon cannot print as Node does
   * - 'body-not-allowed': the server's rejectNonStandardBodyWrites refuses a body here: Node throws
   * - 'no-body-allowed': write() on a response without a body (HEAD, 204, 304): Node ignores it or throws
   * - 'node-combines-chunks': Node collects the chunked writes into one chunk itself (kChunkedBuffer): every tick's on Node 24 and later, a response's the user corked (res.cork()) on Node 22: write() is Node's
   * - 'not-chunked': write() of a body Node does not frame (a Content-Length, an HTTP/1.0 client): one socket write either way, Node's
   * - 'removed-connection': Node 18 closes the connection after removeHeader('Connection')
   * - 'queued': the response has output queued (outputData)
   * - 'not-current': the response waits behind the socket's current one (pipelining)
   * - 'tls': the socket is TLS: the bytes must be encrypted
   * - 'socket-write-replaced': socket.write() is wrapped (instrumentation must see the bytes)
   * - 'socket-closed': the socket is destroyed or not writable
   * - 'socket-busy': the socket has writes queued, or is corked
   * - 'no-fd': the socket has no file descriptor (not a TCP or pipe handle)
   * - 'node-sends-request': Node 24 and later: Node's own req.end() costs less than the addon's path (measured on Node 26)
   * - 'request-end-replaced': the request's end() is not Node's (an APM agent's wrapper): it is called
   * - 'flush-replaced': the request's _flushOutput() is not Node's: it writes what the request queued
   * - 'connecting': the request's socket is still connecting (a new connection): Node writes the request at 'connect'
   * - 'queue-changed': what the request queued changed after end() (flushHeaders()): Node writes the queue
   * - 'invalid': a status code, reason phrase, field-name or field-value fails Node's checks: Node throws
   * - 'field-transfer-encoding': a Transfer-Encoding field: Node frames the body
   * - 'field-expect': an Expect field: Node waits for 100-continue
   * - 'field-trailer': a Trailer field: Node writes trailers after the last chunk
   * - 'field-content-disposition': a Content-Disposition Node re-encodes through a Buffer (non-ASCII, or not a string)
   * - 'chunked-body': the head needs chunk framing (Content-Length removed): Node frames the body
   */
  type FallbackReason =
    | 'no-addon'
    | 'end-replaced'
    | 'writehead-replaced'
    | 'write-replaced'
    | 'write-raw-replaced'
    | 'not-http1'
    | 'no-body'
    | 'empty-body'
    | 'body-type'
    | 'encoding'
    | 'finished'
    | 'head-sent'
    | 'strict-content-length'
    | 'chunked'
    | 'no-head'
    | 'head-rendered'
    | 'header-map'
    | 'status-message'
    | 'unique-headers'
    | 'keep-alive-value'
    | 'body-not-allowed'
    | 'no-body-allowed'
    | 'node-combines-chunks'
    | 'not-chunked'
    | 'removed-connection'
    | 'queued'
    | 'not-current'
    | 'tls'
    | 'socket-write-replaced'
    | 'socket-closed'
    | 'socket-busy'
    | 'no-fd'
    | 'node-sends-request'
    | 'request-end-replaced'
    | 'flush-replaced'
    | 'connecting'
    | 'queue-changed'
    | 'invalid'
    | 'field-transfer-encoding'
    | 'field-expect'
    | 'field-trailer'
    | 'field-content-disposition'
    | 'chunked-body';

  interface Stats {
    /**
     * Responses written with one writev(2), all bytes taken by the kernel
     * (on Node 24 and later also an end() that wrote the chunks collected
     * in its tick).
     */
    fast: number;
    /**
     * Responses whose writev(2) was partial (full socket send buffer): the
     * rest went to socket.write(), with Node's backpressure.
     */
    partial: number;
    /**
     * res.write() chunks the package framed (`write()`, `fastWrite()`,
     * patchEnd; Node 18 to 22). On Node 24 and later, which collect a
     * tick's chunks themselves, the `write()`/`fastWrite()` calls that
     * started a tick and scheduled the package's uncork() in place of
     * Node's; whether that uncork() framed or joined the tick's chunk is
     * `uncorks` (it leaves a Buffer, a chunk past its limits, or a tick
     * that end() flushes without patchEnd to Node's). The writes Node
     * collects into a response already corked are counted nowhere.
     */
    writes: number;
    /**
     * Heads that `res.writeHead()` under `patchEnd` rendered natively
     * (Node 20 and later; a writeHead() Node renders, after setHeader() for
     * one, is not counted anywhere).
     */
    heads: number;
    /**
     * uncork() calls whose collected chunks the package sent as one
     * write, the addon's writev(2) or one framed socket write (`framed`:
     * Node 24 and later), or joined
     * before Node's own uncork() sent them (`joined`: Node 22 and later;
     * on 22 only a response the user corked collects). Under `patchEnd`,
     * and for the ticks `fastWrite()`/`write()` started on Node 24 and
     * later, and the flush of a `fastEnd()` after writes in its tick
     * there. Always 0 on Node 18 and 20.
     */
    uncorks: { framed: number; joined: number };
    /** Calls that went to Node's own code. */
    fallback: number;
    /**
     * Fallbacks by reason (only the reasons seen are present); each name
     * and its meaning: FallbackReason and lib/reasons.js.
     */
    reasons: Partial<Record<FallbackReason, number>>;
    /**
     * The addon's own writev(2) calls on sockets (`calls`) and the bytes
     * they took (`bytes`), in this thread since the last resetStats(). A
     * response's or a pipelined batch's rest handed to socket.write(), and
     * chunks of res.write() (written with socket.write()), are Node's
     * writes and not counted here. Both 0 without the addon.
     */
    writev: { calls: number; bytes: number };
    /**
     * Outgoing requests (http.ClientRequest: `req.fastEnd()`, and
     * `req.end()` under `patchEnd`), counted apart from responses. `fast`
     * and `partial` count requests the package wrote when their socket was
     * assigned (or at once, when it was already there); `fallback` those it
     * left to Node, by reason (a request on a new connection: 'connecting').
     * A request destroyed before it got its socket is written by no one and
     * counted nowhere.
     */
    requests: RequestStats;
  }

  /** stats().requests: the counts of outgoing requests. */
  interface RequestStats {
    /** Requests whose head and body went out with one writev(2). */
    fast: number;
    /** Requests whose writev(2) was partial: the rest went to socket.write(). */
    partial: number;
    /** Requests written by Node's own code. */
    fallback: number;
    /** Fallbacks by reason (only the reasons seen are present). */
    reasons: Partial<Record<FallbackReason, number>>;
  }

  interface InstallOptions {
    /**
     * Also route every `res.end(data)` of every http.ServerResponse through
     * the fast path, and: every `res.writeHead()` (its head rendered
     * natively where Node's takes the headers argument as it is; Node 20
     * and later); every `res.write()` of a chunked body (Node 18 to 22;
     * Node 24 and later collect a tick's chunks themselves, and their
     * `write()` stays Node's); `res.uncork()` (Node 22 and later: the
     * chunks Node collected in a tick sent with one writev(2) of the addon,
     * up to 64 KiB, or as one framed write, up to 2 Ki UTF-16 units, on
     * Node 24 and later, or joined before Node
     * sends them, a corked response's on 22: the same bytes); and every
     * `req.end()` of every http.ClientRequest (Node 18 to 22; on 24 and
     * later `req.end()` stays Node's, where the fast path measured slower).
     * Express, Fastify and Koa, and HTTP clients built on http.request(),
     * gain without code changes. Default false.
     */
    patchEnd?: boolean;
  }
}

declare const fastResponse: {
  /**
   * `res.end(data[, encoding][, callback])`, fast. Honors `statusCode`,
   * `statusMessage`, `setHeader()`, `writeHead()`, `sendDate`, HEAD/204/304,
   * keep-alive and `Connection: close`, the server's `keepAliveTimeout`
   * and `maxRequestsPerSocket`.
   *
   * @returns `res`, as Node's end().
   * @throws ERR_INVALID_ARG_TYPE for a body that is not a string, Buffer or
   *   Uint8Array; ERR_HTTP_INVALID_STATUS_CODE, ERR_INVALID_CHAR as Node.
   *   Ending twice emits ERR_STREAM_WRITE_AFTER_END, as Node.
   */
  end(res: ServerResponse, callback?: () => void): ServerResponse;
  end(res: ServerResponse, data: fastResponse.Body, callback?: () => void): ServerResponse;
  end(
    res: ServerResponse,
    data: fastResponse.Body,
    encoding: BufferEncoding,
    callback?: () => void,
  ): ServerResponse;

  /**
   * `res.write(chunk[, encoding][, callback])`, fast: a chunk of a chunked
   * body (and the head, with the first) framed as Node frames it and handed
   * to the socket in one write (a string) or three (a Buffer, not copied)
   * where Node makes four. Node's own write() for a body Node does not frame
   * (a Content-Length, an HTTP/1.0 client), and on Node 22 for a response
   * the user corked (res.cork()), whose chunks Node 22 collects. On Node 24
   * and later Node's own write() collects the chunk and the tick's chunks
   * leave with one writev(2) of the addon (or framed as one socket write)
   * at the tick's uncork(), which the first write of the tick schedules
   * (as `res.fastWrite()`).
   *
   * @returns false when the socket's buffer is full: wait for 'drain', as
   *   Node's.
   * @throws ERR_INVALID_ARG_TYPE, ERR_STREAM_NULL_VALUES as Node's write();
   *   write() after end() emits ERR_STREAM_WRITE_AFTER_END, as Node.
   */
  write(res: ServerResponse, chunk: fastResponse.Body, callback?: (err?: Error | null) => void): boolean;
  write(
    res: ServerResponse,
    chunk: fastResponse.Body,
    encoding: BufferEncoding,
    callback?: (err?: Error | null) => void,
  ): boolean;

  /**
   * `res.writeHead(statusCode, headers)` + `res.end(data)`, with
   * `Content-Length` added after the given fields when the response may
   * have a body (not HEAD, 204 or 304) and `headers` frame it neither with
   * Content-Length nor with Transfer-Encoding (`Content-Length: 0` without
   * `data`, as `res.end()` sends it). Rendered without Node's header map.
   *
   * @param statusCode An integer 100-999.
   * @throws RangeError ERR_HTTP_INVALID_STATUS_CODE; TypeError
   *   ERR_INVALID_HTTP_TOKEN, ERR_HTTP_INVALID_HEADER_VALUE,
   *   ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE (an odd flat array),
   *   ERR_INVALID_ARG_TYPE (`data` neither string nor bytes); Error
   *   ERR_HTTP_HEADERS_SENT when the head was already rendered. All before
   *   any byte is written, as writeHead() and end() throw them.
   */
  send(
    res: ServerResponse,
    statusCode: number,
    headers?: fastResponse.Headers,
    data?: fastResponse.Body,
  ): ServerResponse;

  /**
   * Validates and renders status line and header fields once.
   *
   * @throws RangeError ERR_HTTP_INVALID_STATUS_CODE; TypeError
   *   ERR_INVALID_HTTP_TOKEN, ERR_HTTP_INVALID_HEADER_VALUE,
   *   ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE: what
   *   `res.writeHead(statusCode, headers)` throws for them on a response
   *   of no server (Node 26: strict header values unless Node runs with
   *   --insecure-http-parser). Where an agent wrapped `_storeHeader()`
   *   before the package was loaded, only the status code is judged here;
   *   each `send()` is then Node's, whose writeHead() judges the fields.
   */
  template(statusCode: number, headers?: fastResponse.Headers): fastResponse.Template;

  /**
   * `send()` of `JSON.stringify(value)` with
   * `Content-Type: application/json; charset=utf-8` unless `headers` name
   * one.
   *
   * @throws ERR_INVALID_ARG_VALUE (TypeError) when `value` has no JSON text;
   *   JSON.stringify()'s TypeError for cycles and BigInt; send()'s errors.
   */
  json(
    res: ServerResponse,
    statusCode: number,
    value: unknown,
    headers?: fastResponse.Headers,
  ): ServerResponse;

  /**
   * Defines `ServerResponse.prototype.fastEnd` and `fastWrite`, and
   * `ClientRequest.prototype.fastEnd`; with `{ patchEnd: true }` also makes
   * every `res.end(data)` and `res.writeHead()` fast, and on Node 18 to 22
   * every `res.write()` and `req.end()` (see InstallOptions.patchEnd).
   *
   * @returns `uninstall`, which restores the prototype as it was.
   * @throws ERR_INVALID_ARG_TYPE when `options` is not an object, or
   *   `options.patchEnd` is given and is not a boolean.
   */
  install(options?: fastResponse.InstallOptions): () => void;

  /**
   * Undoes install(): removes `fastEnd` and `fastWrite` (and the requests'
   * `fastEnd`) and puts back `end`, `write`, `writeHead` and `uncork` (and
   * the requests' `end`) exactly as they were, property attributes
   * included. A method someone wrapped after install() (an APM agent
   * loaded later) keeps its wrapper, and the package's method under it is
   * what it stood over (Node's, or an earlier wrapper) from then on. Does
   * nothing when not installed; install() may be called again after.
   */
  uninstall(): void;

  /** This thread's counts of fast writes and fallbacks. */
  stats(): fastResponse.Stats;

  /** Sets this thread's counts to zero. */
  resetStats(): void;

  /** Whether the native addon loaded; without it every call is Node's own. */
  readonly native: boolean;

  /** Why the native addon did not load, or null. */
  readonly loadError: Error | null;
};

export = fastResponse;
