'use strict';

// Header fields in the shapes Node's writeHead() takes them, and as the
// addon reads them.
//
// writeHead(statusCode, headers) takes a plain object, a flat array
// [name, value, name, value, ...] or an array of [name, value] pairs.
// eachHeader() is the one walk over those shapes; withHeader() and
// copyHeaders() keep the caller's shape (writeHead() merges each shape its
// own way with setHeader()'s fields, so the shape is part of the meaning).
//
// The addon reads header fields as one string in which every field-name and
// every field-value is followed by NUL, "name\0value\0name\0value\0": one
// string crosses into C++ instead of two per field. NUL is valid in neither
// a token nor a field-value (RFC 9110 §5.1, §5.5; Node's checkIsHttpToken()
// and checkInvalidHeaderChar()), so the addon finds a caller's NUL by the
// count of separators and leaves such fields to Node, which throws or
// writes them as it always does. The join is _storeHeader()'s
// processHeader() (lib/_http_outgoing.js): an array value is one field per
// element, except a Cookie array of two or more, joined with '; '; every
// value is converted with `'' + value`, as `key + ': ' + value` does.

const SEP = '\0';

// Node's checkIsHttpToken() (RFC 9110 §5.6.2 token).
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const FRAMING_NAME = /^(?:content-length|transfer-encoding)$/i;

/** Whether `headers` is an array of [name, value] pairs (not a flat array). */
function isPairs(headers) {
  return headers.length !== 0 && Array.isArray(headers[0]);
}

/**
 * Calls `visit(name, value)` for each header of writeHead()'s `headers`
 * argument, in the order writeHead() reads them. Entries writeHead() would
 * reject (a name that is not a string, a pair that is not an array, the odd
 * name of a flat array) are not visited. Returns false when there was such
 * an entry, `headers` is not an object, or `visit` returned false (which
 * ends the walk); true otherwise (also for undefined and null: no fields).
 *
 * @param {unknown} headers
 * @param {(name: string, value: unknown) => boolean|void} visit
 * @returns {boolean}
 */
function eachHeader(headers, visit) {
  if (headers === undefined || headers === null) return true;
  if (typeof headers !== 'object') return false;
  let ok = true;
  if (Array.isArray(headers)) {
    if (isPairs(headers)) {
      for (let i = 0; i < headers.length; i++) {
        const entry = headers[i];
        if (!Array.isArray(entry) || typeof entry[0] !== 'string') ok = false;
        else if (visit(entry[0], entry[1]) === false) return false;
      }
    } else {
      for (let i = 0; i < headers.length; i += 2) {
        const name = headers[i];
        if (typeof name !== 'string' || i + 1 === headers.length) ok = false;
        else if (visit(name, headers[i + 1]) === false) return false;
      }
    }
    return ok;
  }
  for (const name in headers) {
    if (Object.prototype.hasOwnProperty.call(headers, name) && visit(name, headers[name]) === false) {
      return false;
    }
  }
  return true;
}

/** Whether `headers` name a field in `lowerNames` (lower-case field-names). */
function hasHeaderNamed(headers, lowerNames) {
  let found = false;
  eachHeader(headers, (name) => {
    found = lowerNames.includes(name.toLowerCase());
    return !found;
  });
  return found;
}

/**
 * `headers` with one more field, in the caller's shape: first or last.
 * Anything writeHead() would reject is returned as it is, so that
 * writeHead() throws its own error.
 */
function withHeader(headers, name, value, first) {
  if (headers === undefined || headers === null) return { [name]: value };
  if (typeof headers !== 'object') return headers;
  if (Array.isArray(headers)) {
    if (isPairs(headers)) return first ? [[name, value], ...headers] : [...headers, [name, value]];
    if (headers.length % 2 !== 0) return headers;
    return first ? [name, value, ...headers] : [...headers, name, value];
  }
  return first ? { [name]: value, ...headers } : { ...headers, [name]: value };
}

/**
 * A copy of `headers` in their shape; array values and [name, value] pairs
 * are copied too, so that changing them later changes nothing in the copy.
 * Anything that is not an object (writeHead() reads a string as the reason
 * phrase) is returned as it is.
 */
function copyHeaders(headers) {
  const copyValue = (value) => (Array.isArray(value) ? value.slice() : value);
  if (Array.isArray(headers)) {
    return headers.map((entry) => (Array.isArray(entry) ? entry.map(copyValue) : entry));
  }
  if (headers === null || typeof headers !== 'object') return headers;
  const copy = {};
  for (const name of Object.keys(headers)) copy[name] = copyValue(headers[name]);
  return copy;
}

/**
 * Joined header fields: `joined` for the addon, `count` fields, and whether
 * a value was an array (the server's `uniqueHeaders` option joins those
 * differently).
 */
class JoinedFields {
  constructor() {
    this.joined = '';
    this.count = 0;
    this.arrays = false;
  }

  /**
   * Adds one name/value pair as processHeader() does. `strict` (headers
   * given to writeHead(), which validates them): an undefined value returns
   * false, Node's to judge. Otherwise (the setHeader() map, validated when
   * set) it renders as Node renders it, 'undefined'.
   */
  add(name, value, strict) {
    if (typeof value === 'string') {
      this.joined += name + SEP + value + SEP;
      this.count++;
      return true;
    }
    if ((value === undefined || coercedTwice(value)) && strict) return false;
    if (!Array.isArray(value)) {
      this.joined += name + SEP + value + SEP;
      this.count++;
      return true;
    }
    this.arrays = true;
    // An empty array renders no field, but writeHead() still checks the name,
    // and send() frames the body by the names it was given
    // (withContentLength()): a bad name or a framing field is Node's.
    if (value.length === 0 && strict) {
      return TOKEN.test(name) && !FRAMING_NAME.test(name);
    }
    if (value.length >= 2 && name.length === 6 && name.toLowerCase() === 'cookie') {
      this.joined += name + SEP + value.join('; ') + SEP;
      this.count++;
      return true;
    }
    for (let i = 0; i < value.length; i++) {
      const element = value[i];
      if ((element === undefined || coercedTwice(element)) && strict) return false;
      this.joined += name + SEP + element + SEP;
      this.count++;
    }
    return true;
  }
}

/**
 * Whether Node converts `value` to a string in two ways: an object (other
 * than an array) or a function is validated as String(value) (toString())
 * and rendered as `'' + value` (valueOf() first), and a Symbol throws in
 * the check. Node's own writeHead() judges and renders those (a new-user
 * check sent `valueOf()` here where Node threw ERR_INVALID_CHAR on
 * `toString()`).
 */
function coercedTwice(value) {
  return typeof value === 'symbol' || typeof value === 'function' ||
    (typeof value === 'object' && value !== null && !Array.isArray(value));
}

const NONE = Object.freeze(new JoinedFields());

/**
 * writeHead()'s `headers` argument, joined. Returns null for anything Node
 * would reject before rendering (a name that is not a string, an undefined
 * value, an odd flat array, not an object): Node itself is then left to
 * throw.
 *
 * @param {unknown} headers
 * @returns {JoinedFields|null}
 */
function joinHeaders(headers) {
  if (headers === undefined || headers === null) return NONE;
  const out = new JoinedFields();
  return eachHeader(headers, (name, value) => out.add(name, value, true)) ? out : null;
}

/**
 * The header map of setHeader() (Node's kOutHeaders: lower-case name ->
 * [name, value]), joined in insertion order, as _storeHeader() walks it for
 * end(data). Returns null where Node does more than join: a
 * Content-Disposition value that is not a string goes through
 * `Buffer.from(value, 'latin1')` there (nodejs/node#46528), which throws for
 * a number and turns array elements into Buffers.
 *
 * @param {Record<string, [string, unknown]>|null} map
 * @returns {JoinedFields|null}
 */
function joinHeaderMap(map) {
  if (map === null || map === undefined) return NONE;
  const out = new JoinedFields();
  for (const key in map) {
    const entry = map[key];
    const value = entry[1];
    if (typeof value !== 'string' && key === 'content-disposition') return null;
    out.add(entry[0], value, false);
  }
  return out;
}

/**
 * The fields of a joined string as [name, value, ...] (the slow paths and
 * tests; the addon splits it natively).
 *
 * @param {string} joined
 * @returns {string[]}
 */
function splitJoined(joined) {
  if (joined === '') return [];
  const parts = joined.split(SEP);
  parts.pop();
  return parts;
}

module.exports = {
  SEP, eachHeader, hasHeaderNamed, withHeader, copyHeaders, joinHeaders, joinHeaderMap, splitJoined,
};
