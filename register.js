'use strict';

// `node -r fast-response/register app.js`: every res.end(data) of every
// http.ServerResponse takes the fast path, without code changes.
require('./lib/index.js').install({ patchEnd: true });
