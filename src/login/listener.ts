/**
 * Talking to the server's loopback listener. A bare TCP connect-and-close
 * is the only probe: any HTTP request without the real code would end the
 * login. The only HTTP agyctl ever sends is a user's pasted redirect.
 */

import http from 'node:http';
import net from 'node:net';

export function listenerAlive(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const finish = (alive: boolean): void => {
      socket.destroy();
      resolve(alive);
    };
    socket.setTimeout(timeoutMs, () => finish(true)); // slow, not gone
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** Deliver a validated redirect once: GET, no redirects followed, bounded, body discarded. */
export function deliverRedirect(url: URL, timeoutMs = 15_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer from the login listener within ${timeoutMs / 1000}s`)));
    req.once('error', (err) => reject(err));
  });
}
