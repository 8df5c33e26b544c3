'use strict';

// stats(): this thread's counts of fast writes and of calls that stepped
// aside, by reason (lib/reasons.js).

let fastWrites = 0;
let partialWrites = 0;
let fallbacks = 0;
let reasons = { __proto__: null };

/** A response whose bytes all went out with one writev(2). */
function countFast() {
  fastWrites++;
}

/** A response whose rest was handed to socket.write(). */
function countPartial() {
  partialWrites++;
}

/** A call that went to Node's own code, and why (a name of lib/reasons.js). */
function countFallback(reason) {
  fallbacks++;
  reasons[reason] = (reasons[reason] || 0) + 1;
}

function stats() {
  return {
    fast: fastWrites,
    partial: partialWrites,
    fallback: fallbacks,
    reasons: { ...reasons },
  };
}

function resetStats() {
  fastWrites = 0;
  partialWrites = 0;
  fallbacks = 0;
  reasons = { __proto__: null };
}

module.exports = { countFast, countPartial, countFallback, stats, resetStats };
