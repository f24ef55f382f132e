// A real tipsync-server for the JavaScript tests: `TIPSYNC_SERVER_BIN` names the executable (the
// Swift test that runs these tests sets it to the one it built). Binds port 0 and reads the port
// from the server's "listening" log line; an account `demo` with tokens for the devices asked for.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const serverBinary = process.env.TIPSYNC_SERVER_BIN;

/**
 * @param {string[]} devices
 * @param {string[]} flags more `serve` flags
 */
export async function startServer(devices = ['phone', 'laptop'], flags = []) {
  const directory = mkdtempSync(join(tmpdir(), 'tipsync-web-'));
  const database = `sqlite:${join(directory, 'server.sqlite')}`;
  const run = (args) => execFileSync(serverBinary, [...args, '--database', database], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  run(['accounts', 'create', 'demo']);
  const tokens = Object.fromEntries(devices.map((device) => [device, run(['tokens', 'create', '--account', 'demo', '--device', device])]));
  const adminKey = run(['admin-keys', 'create', '--name', 'web-tests']);
  const child = spawn(serverBinary, ['serve', '--http-port', '0', '--database', database, ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /listening on [^:]+:(\d+)/.exec(log);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`tipsync-server exited (${code}): ${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    account: 'demo',
    tokens,
    adminKey,
    database,
    /** Stops the server and removes its database directory. */
    stop: () => new Promise((resolve) => {
      child.once('exit', () => {
        rmSync(directory, { recursive: true, force: true });
        resolve(undefined);
      });
      child.kill('SIGTERM');
    }),
  };
}
