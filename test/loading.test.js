'use strict';

// How the package is loaded and what it finds in place: each case runs in a
// fresh process (test/fixtures/), since it depends on what was loaded
// before: ES module named exports, a second evaluation of lib/ beside the
// first, wrappers installed on ServerResponse.prototype before the package,
// and a response no http.Server made.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const fixture = (name) => path.join(__dirname, 'fixtures', name);

function runJson(args) {
  return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 30000 }));
}

// Node 26 adds a 'module.exports' name of its own to a CommonJS namespace.
test('ES module import: every named export, as the CommonJS module has them', () => {
  const names = Object.keys(require('..')).sort();
  const source = `import * as m from 'fast-response';
    import { ${names.join(', ')} } from 'fast-response';
    console.log(JSON.stringify({ names: Object.keys(m).filter((k) => k !== 'default' && k !== 'module.exports').sort(),
                                 native: typeof native, end: typeof end }));`;
  const out = runJson(['--input-type=module', '-e', source]);
  assert.deepEqual(out.names, names);
  assert.equal(out.native, 'boolean');
  assert.equal(out.end, 'function');
});

test('a second evaluation of lib/ beside the first (one addon): each response goes to its own socket', () => {
  const out = runJson([fixture('two-copies.js')]);
  assert.deepEqual(out.native, [true, true]);
  assert.deepEqual(out.responses, [1, 1, 1]);
  assert.deepEqual(out.bodies, ['response from the second copy', 'response from the first copy',
                                'send() of the first copy']);
});

for (const storeHeaderOn of [[], ['OutgoingMessage'], ['ServerResponse'], ['masked']]) {
  const also = { OutgoingMessage: ' and OutgoingMessage.prototype._storeHeader()',
                 ServerResponse: ' and ServerResponse.prototype._storeHeader()',
                 masked: ', their source masked as the wrapped functions\'', undefined: '' }[storeHeaderOn[0]];
  test(`wrappers of writeHead() and end()${also} installed before the package see what they see with Node`, () => {
    const node = runJson([fixture('preload-wrappers.js'), 'node', ...storeHeaderOn]);
    const fast = runJson([fixture('preload-wrappers.js'), 'package', ...storeHeaderOn]);
    assert.deepEqual(Object.keys(fast.requests), ['fastEnd', 'send', 'template', 'patched', 'json', 'badTemplate']);
    // (A template() that threw is not sent: its handler's calls differ.)
    const judgedAtSend = storeHeaderOn[0] === 'OutgoingMessage';
    for (const name of Object.keys(node.requests).filter((n) => n !== 'badTemplate' || judgedAtSend)) {
      assert.deepEqual(fast.requests[name].seen, node.requests[name].seen, `${name}: the wrappers' calls`);
      assert.equal(fast.requests[name].bytes, node.requests[name].bytes, `${name}: bytes on the wire`);
    }
    // The wrapper of end() saw the body, before anything was written.
    assert.equal(fast.requests.fastEnd.seen[0], 'end("hello")');
    assert.equal(fast.requests.fastEnd.seen[1], 'writeHead(200)');
    assert.equal(fast.requests.json.seen[0], 'writeHead(200, object)');
    if (storeHeaderOn.length !== 0 && storeHeaderOn[0] !== 'masked') assert.equal(fast.requests.fastEnd.seen[2], '_storeHeader("HTTP/1.1 200 OK\\r\\n")');
    // Neither loading the package nor template() called a wrapper on a
    // response no server made (an agent reading res.req.socket would throw).
    assert.deepEqual(fast.detached, []);
    assert.deepEqual(node.detached, []);
    // template() throws what Node's own writeHead() throws, without it;
    // with Node's own _storeHeader() out of reach (wrapped first), it judges
    // the status code and leaves the header fields to Node's writeHead() at
    // each send() (badTemplate: the same error, from send()).
    assert.equal(fast.badTemplateAt, judgedAtSend ? 'send' : 'template');
    assert.match(node.requests.badTemplate.bytes, /threw ERR_INVALID_CHAR$/);
    node.errors.forEach((error, i) => {
      const fieldError = error !== 'ok' && error[2] !== 'ERR_HTTP_INVALID_STATUS_CODE' &&
        error[3] !== 'Invalid character in statusMessage';
      assert.deepEqual(fast.errors[i], judgedAtSend && fieldError ? 'ok' : error, `template() arguments ${i}`);
    });
    assert.equal(node.errors.filter((e) => e === 'ok').length, 4);
  });
}

test('send() on a response no server made leaves the server\'s uniqueHeaders rendering as Node\'s', () => {
  const out = runJson([fixture('unique-headers.js')]);
  assert.equal(out.send, out.node);
  assert.match(out.node, /\r\nX-U: a; b\r\n/);
});
