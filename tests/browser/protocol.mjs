// The driver side of the browser tests' protocol (see tests/common/browser.rs): JSON events on
// stdout, one a line; one JSON request on stdin; progress on stderr.

import readline from 'node:readline';

/** Debian's chromium (never a downloaded build). */
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';

/** Progress, on stderr. */
export const log = (...args) => console.error('[browser]', ...args);

/** One JSON event on stdout. */
export const emit = (event) => process.stdout.write(JSON.stringify(event) + '\n');

/** The one request line on stdin, parsed; `what` names it when stdin closes first. */
export function readRequest(what) {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: process.stdin });
    const closed = () => reject(new Error(`stdin closed before the ${what} request`));
    rl.once('close', closed);
    rl.once('line', (line) => {
      rl.off('close', closed);
      rl.close();
      try {
        resolve(JSON.parse(line));
      } catch (e) {
        reject(e);
      }
    });
  });
}
