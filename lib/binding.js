'use strict';

// Loads the native addon. A package that fails to build must not break the
// application: without the addon every call takes Node's own path, and
// stats().reasons['no-addon'] counts them.
//
// The addon owns the layout of everything that crosses between JavaScript
// and C++ (src/layout.h): `layout` holds every index, bit and size by name,
// `results` and `args` are the Float64Arrays the write calls report in and
// take their numbers from. lib/ reads them here and keeps no copy. Each load
// of the addon has its own arrays: a second evaluation of lib/ (a module
// registry cleared for the JavaScript only, as hot reloaders and test
// runners do) gets the same addon object, and so the same arrays.

const path = require('node:path');

let binding = null;
let loadError = null;

try {
  // FAST_RESPONSE_ADDON=/path/to/fast_response.node loads that build instead
  // (test/native/asan.js: the sanitizer build, kept out of build/Release).
  binding = process.env.FAST_RESPONSE_ADDON
    ? require(path.resolve(process.env.FAST_RESPONSE_ADDON))
    : require('node-gyp-build')(path.join(__dirname, '..'));
  if (binding.layout === undefined || !(binding.results instanceof Float64Array)) {
    throw new Error('fast-response: the addon is of another version (no layout): rebuild it');
  }
} catch (err) {
  binding = null;
  loadError = err;
}

/**
 * The addon's layout (src/layout.h), read by name. A name the addon does
 * not define throws when a module destructures it at load, instead of
 * reading as undefined (a bit that is silently 0). Without the addon it is
 * empty: nothing reads it then, since every call steps aside first.
 */
const layout = binding === null ? Object.freeze({ __proto__: null }) : new Proxy(binding.layout, {
  get(target, name) {
    if (typeof name === 'string' && !(name in target)) {
      throw new Error(`fast-response: the addon's layout has no ${name}: rebuild it`);
    }
    return target[name];
  },
});

module.exports = {
  binding,
  loadError,
  layout,
  results: binding === null ? null : binding.results,
  args: binding === null ? null : binding.args,
};
