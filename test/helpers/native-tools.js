'use strict';

// The native steps (test/native, test:asan, fuzz, lint's clang-format) need
// tools npm does not install. Without FAST_RESPONSE_NATIVE=require a missing
// tool is a notice and the step passes (a user's `npm test` without them);
// with it (CI sets it) a missing tool fails the step.

/** Whether a missing native tool fails (FAST_RESPONSE_NATIVE=require). */
const REQUIRED = process.env.FAST_RESPONSE_NATIVE === 'require';

/**
 * Ends the step for a missing tool: exit 1 under FAST_RESPONSE_NATIVE=require,
 * otherwise a SKIPPED notice and exit 0.
 *
 * @param {string} step The step's name in the message ('test/native').
 * @param {string} what What is missing, as a phrase ('CMake is missing').
 * @param {string} how The command that installs it.
 * @returns {never}
 */
function missingTool(step, what, how) {
  if (REQUIRED) {
    console.error(`${step}: ${what} (FAST_RESPONSE_NATIVE=require). Install it: ${how}`);
    process.exit(1);
  }
  console.log(`${step}: SKIPPED, ${what} (install it: ${how}; FAST_RESPONSE_NATIVE=require fails instead)`);
  process.exit(0);
}

module.exports = { REQUIRED, missingTool };
