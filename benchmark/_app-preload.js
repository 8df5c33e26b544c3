'use strict';

// Preloaded (`node -r`) into the server that benchmark/app.js measures, on
// both sides (plain and under fast-response/register), so that both carry
// the same extra code. Over the IPC channel app.js opened it:
//
// - reports each TCP port a server of this process starts listening on
//   ({ type: 'fast-response-app:listening', port }), so that app.js finds
//   the app's port even when the app does not listen on $PORT;
// - answers { type: 'fast-response-app:usage' } with this process's
//   process.cpuUsage() and, under register, fastResponse.stats(): the CPU
//   time per response and the share of responses the fast path wrote;
// - on { type: 'fast-response-app:reset' } resets fastResponse.stats().
//
// The channel is unreferenced: it keeps no app alive that would otherwise
// exit. In a cluster worker the preload does nothing (its channel is the
// primary's); app.js reads the primary's CPU time then.

const cluster = require('node:cluster');
const net = require('node:net');

const PREFIX = 'fast-response-app:';

function send(message) {
  if (typeof process.send === 'function' && process.connected) process.send(message);
}

if (typeof process.send === 'function' && !cluster.isWorker) {
  // Set by app.js on the side under register: the package to read stats()
  // from (the copy register.js installed).
  const packagePath = process.env.FAST_RESPONSE_APP_PACKAGE;
  const fr = packagePath ? require(packagePath) : null;

  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function listenReported(...args) {
    this.once('listening', () => {
      const address = this.address();
      if (address !== null && typeof address === 'object') send({ type: `${PREFIX}listening`, port: address.port });
    });
    return listen.apply(this, args);
  };

  process.on('message', (message) => {
    if (message === null || typeof message !== 'object') return;
    if (message.type === `${PREFIX}usage`) {
      send({
        type: `${PREFIX}usage`,
        cpu: process.cpuUsage(),
        stats: fr !== null ? fr.stats() : null,
        native: fr !== null ? fr.native : null,
      });
    } else if (message.type === `${PREFIX}reset`) {
      if (fr !== null) fr.resetStats();
      send({ type: `${PREFIX}reset` });
    }
  });
  if (process.channel && typeof process.channel.unref === 'function') process.channel.unref();
}
