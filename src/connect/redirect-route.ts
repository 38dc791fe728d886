/**
 * How the browser's redirect reaches the remote login (docs/connect.md,
 * "The three routes"): the SSH forward when 127.0.0.1:<port> is free here
 * and sshd lets a connection through it; the relay on the laptop's own port
 * when sshd forbids that; paste-back when the port is taken here. sshd
 * accepts `-O forward` even when it refuses every connection through it, so
 * the forward is probed first (SshMaster.probeForward).
 */
import { validateAuthUrl } from '../profiles/auth-url.js';
import { CallbackRelay, type Delivery } from './callback-relay.js';
import type { ProbeResult, SshMaster } from './control-master.js';
import { checkLocalPort } from './local-port.js';

export type Route = 'forward' | 'relay' | 'paste';

export interface RouteChoice {
  route: Route;
  port: number;
  /** Why it is not the forward. */
  reason?: string;
  probe?: ProbeResult;
  /** The relay's listener (route `relay`); the caller closes it. */
  relay?: CallbackRelay;
}

export interface RouteOptions {
  master: SshMaster;
  /** The sign-in URL, validated; its redirect gives the relay the path and state to expect. */
  url: string;
  port: number;
  deliver(address: string): Promise<Delivery>;
  onRefused(reason: string): void;
}

export async function chooseRoute(options: RouteOptions): Promise<RouteChoice> {
  const { master, port } = options;
  const check =
    Number.isInteger(port) && port > 0 && port < 65536
      ? await checkLocalPort(port)
      : { free: false as const, reason: `the remote login reported no usable port (${String(port)})` };
  if (!check.free) return { route: 'paste', port, reason: check.reason };
  const probe = await master.probeForward(port);
  let reason: string;
  if (probe.allowed) {
    const fwd = await master.forward(port);
    if (fwd.ok) return { route: 'forward', port, probe };
    reason = `ssh could not forward port ${port} (${fwd.message || 'no reason given'})`;
  } else {
    reason = `the SSH server does not let a connection through a forward of port ${port} (${probe.message})`;
  }
  const auth = validateAuthUrl(options.url);
  if (!auth.ok) return { route: 'paste', port, reason, probe };
  const relay = await CallbackRelay.listen({
    auth: auth.value,
    destination: master.destination,
    deliver: options.deliver,
    onRefused: options.onRefused,
  });
  if ('error' in relay) return { route: 'paste', port, reason: `${reason}; ${relay.error}`, probe };
  return { route: 'relay', port, reason, probe, relay };
}
