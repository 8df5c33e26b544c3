// Compiled with `tsc --noEmit` by test/types.test.js: the public API used the
// way the README shows it must type-check, and misuse must not.
import * as http from 'node:http';
import fastResponse = require('fast-response');

const uninstall: () => void = fastResponse.install({ patchEnd: false });

const tpl: fastResponse.Template = fastResponse.template(200, {
  'Content-Type': 'text/plain',
  'Cache-Control': ['no-store', 'private'],
});

http.createServer((req, res) => {
  res.setHeader('Content-Type', 'text/plain');
  const same: http.ServerResponse = res.fastEnd('hello');
  res.fastEnd(Buffer.from('x'), () => {});
  res.fastEnd('aGk=', 'base64');
  res.fastEnd();
  res.fastEnd(null); // as res.end(null): no body
  fastResponse.end(res, () => {});
  fastResponse.end(res, new Uint8Array(4), 'utf8', () => {});
  fastResponse.send(res, 201, ['Content-Type', 'text/plain', 'X-Id', 7], 'ok');
  fastResponse.send(res, 204);
  fastResponse.json(res, 200, { ok: true }, { 'X-Request-Id': '1' });
  tpl.send(res, 'body');
  const s: fastResponse.Stats = fastResponse.stats();
  const n: number = s.fast + s.partial + s.fallback + (s.reasons.tls ?? 0);
  void same;
  void n;
});

const agent = new http.Agent({ keepAlive: true });
const req: http.ClientRequest = http.request({ agent, method: 'POST', port: 3000 });
req.setHeader('Content-Type', 'application/json');
const sameReq: http.ClientRequest = req.fastEnd('{"ok":true}', () => {});
http.get('http://127.0.0.1:3000/').fastEnd();
http.request({ port: 3000 }).fastEnd(Buffer.from('x'), 'utf8');
const r: fastResponse.RequestStats = fastResponse.stats().requests;
const m: number = r.fast + r.partial + r.fallback + (r.reasons.connecting ?? 0);
void sameReq;
void m;

const native: boolean = fastResponse.native;
void native;
uninstall();
