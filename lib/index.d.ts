// Type declarations for fast-response.
//
// Every function mirrors a Node.js http.ServerResponse behaviour: same bytes
// on the wire, same events, same errors (thrown with Node's `code`s).

/// <reference types="node" />

import type { ServerResponse, OutgoingHttpHeaders } from 'node:http';

declare module 'node:http' {
  interface ServerResponse {
    /**
     * Added by `install()`. Ends the response exactly as
     * `res.end(data, encoding, callback)` does, with the head rendered
     * natively and head and body sent with one writev(2).
     */
    fastEnd(callback?: () => void): this;
    fastEnd(data: string | Uint8Array, callback?: () => void): this;
    fastEnd(data: string | Uint8Array, encoding: BufferEncoding, callback?: () => void): this;
  }
}

declare namespace fastResponse {
  /** A header field value as writeHead() accepts it. */
  type FieldValue = string | number | ReadonlyArray<string | number>;

  /**
   * Header fields as `res.writeHead()` accepts them: a plain object
   * (`{ 'Content-Type': 'text/plain' }`), or a flat array
   * `['Content-Type', 'text/plain', 'X-Id', 7]`.
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

  interface Stats {
    /** Responses written with one writev(2), all bytes taken by the kernel. */
    fast: number;
    /**
     * Responses whose writev(2) was partial (full socket send buffer): the
     * rest went to socket.write(), with Node's backpressure.
     */
    partial: number;
    /** Calls that went to Node's own code. */
    fallback: number;
    /**
     * Fallbacks by reason: 'no-body', 'empty-body', 'body-type', 'encoding',
     * 'finished', 'head-sent', 'strict-content-length', 'chunked', 'queued',
     * 'not-current', 'tls', 'socket-closed', 'socket-busy', 'no-fd',
     * 'body-not-allowed', 'invalid', 'head-fields', 'unique-headers',
     * 'keep-alive-value', 'end-replaced', 'writehead-replaced', 'not-http1',
     * 'header-map', 'head-rendered', 'template-node-path', 'no-addon',
     * 'no-head' (Node rendered no head: trailers), 'removed-connection'
     * (Node 18 after removeHeader('Connection')), 'socket-write-replaced'
     * (socket.write wrapped by instrumentation).
     */
    reasons: Record<string, number>;
  }

  interface InstallOptions {
    /**
     * Also route every `res.end(data)` of every http.ServerResponse through
     * the fast path (Express, Fastify and Koa gain without code changes).
     * Default false.
     */
    patchEnd?: boolean;
  }
}

declare const fastResponse: {
  /**
   * `res.end(data[, encoding][, callback])`, fast. Honors `statusCode`,
   * `statusMessage`, `setHeader()`, `writeHead()`, `sendDate`, HEAD/204/304,
   * keep-alive and `Connection: close`, the server's `keepAliveTimeout`.
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
   * `res.writeHead(statusCode, headers)` + `res.end(data)`, with
   * `Content-Length` added after the given fields when the response has a
   * body and `headers` frame it neither with Content-Length nor with
   * Transfer-Encoding. Rendered without Node's header map.
   *
   * @param statusCode An integer 100-999.
   * @throws ERR_HTTP_INVALID_STATUS_CODE, ERR_INVALID_HTTP_TOKEN,
   *   ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE,
   *   ERR_HTTP_HEADERS_SENT, before any byte is written.
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
   * @throws What `res.writeHead(statusCode, headers)` throws for them.
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
   * Defines `ServerResponse.prototype.fastEnd`; with `{ patchEnd: true }`
   * also makes every `res.end(data)` fast.
   *
   * @returns `uninstall`, which restores the prototype as it was.
   * @throws ERR_INVALID_ARG_TYPE when `options` is not an object.
   */
  install(options?: fastResponse.InstallOptions): () => void;

  /** Undoes install(). */
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
