'use strict';

// Loads the native addon. A package that fails to build must not break the
// application: without the addon every call takes Node's own path, and
// stats().reasons['no-addon'] counts them.

const path = require('node:path');

let binding = null;
let loadError = null;

try {
  // FAST_RESPONSE_ADDON=/path/to/fast_response.node loads that build instead
  // (test/native/asan.js: the sanitizer build, kept out of build/Release).
  binding = process.env.FAST_RESPONSE_ADDON
    ? require(path.resolve(process.env.FAST_RESPONSE_ADDON))
    : require('node-gyp-build')(path.join(__dirname, '..'));
  // Shared with the addon (src/addon.cc kResult*, kArg*): what a call
  // reports, and the numeric arguments of the write calls. Made once per
  // loaded addon: a second evaluation of lib/ (a module registry cleared
  // for the JavaScript only, as hot reloaders and test runners do) gets the
  // same addon object and must use the same arrays as the first.
  if (binding.results === undefined) {
    binding.results = new Float64Array(5);
    binding.args = new Float64Array(9);
    binding.setShared(binding.results, binding.args);
  }
} catch (err) {
  binding = null;
  loadError = err;
}

module.exports = { binding, loadError };
