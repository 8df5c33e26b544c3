'use strict';

// Header fields as src/addon.cc reads them: one string in which every
// field-name and every field-value is followed by NUL,
// "name\0value\0name\0value\0". One string crosses into C++ instead of two
// per field. NUL is valid in neither a token nor a field-value (RFC 9110
// §5.1, §5.5; Node's checkIsHttpToken() and checkInvalidHeaderChar()), so
// the addon finds a caller's NUL by the count of separators and leaves such
// fields to Node, which throws or writes them as it always does.
//
// The walk is _storeHeader()'s processHeader() (lib/_http_outgoing.js):
// an array value is one field per element, except a Cookie array of two or
// more, joined with '; '; every value is converted with `'' + value`, as
// `key + ': ' + value` does.

const SEP = '\0';

// Node's checkIsHttpToken() (RFC 9110 §5.6.2 token).
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const FRAMING_NAME = /^(?:content-length|transfer-encoding)$/i;

function isCookieField(name) {
  return name.length === 6 && name.toLowerCase() === 'cookie';
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
    if (value === undefined && strict) return false;
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
    if (value.length >= 2 && isCookieField(name)) {
      this.joined += name + SEP + value.join('; ') + SEP;
      this.count++;
      return true;
    }
    for (let i = 0; i < value.length; i++) {
      const element = value[i];
      if (element === undefined && strict) return false;
      this.joined += name + SEP + element + SEP;
      this.count++;
    }
    return true;
  }
}

const NONE = Object.freeze(new JoinedFields());

/**
 * The `headers` argument of writeHead() (a plain object, a flat
 * [name, value, ...] array or an array of [name, value] pairs), joined.
 * Returns null for anything Node would reject before rendering (a name that
 * is not a string, an undefined value, an odd flat array, not an object):
 * Node itself is then left to throw.
 *
 * @param {unknown} headers
 * @returns {JoinedFields|null}
 */
function joinHeaders(headers) {
  if (headers === undefined || headers === null) return NONE;
  if (typeof headers !== 'object') return null;
  const out = new JoinedFields();
  if (Array.isArray(headers)) {
    if (headers.length !== 0 && Array.isArray(headers[0])) {
      for (let i = 0; i < headers.length; i++) {
        const entry = headers[i];
        if (!Array.isArray(entry) || typeof entry[0] !== 'string' ||
            !out.add(entry[0], entry[1], true)) {
          return null;
        }
      }
    } else {
      if (headers.length % 2 !== 0) return null;
      for (let i = 0; i < headers.length; i += 2) {
        const name = headers[i];
        if (typeof name !== 'string' || !out.add(name, headers[i + 1], true)) return null;
      }
    }
    return out;
  }
  for (const name in headers) {
    if (Object.prototype.hasOwnProperty.call(headers, name) && !out.add(name, headers[name], true)) {
      return null;
    }
  }
  return out;
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

module.exports = { SEP, joinHeaders, joinHeaderMap, splitJoined };
