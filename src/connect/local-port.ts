/** Is 127.0.0.1:<port> free on this machine? Listen and close at once: nothing is ever sent. */
import net from 'node:net';

export type PortCheck = { free: true } | { free: false; reason: string };

export function checkLocalPort(port: number): Promise<PortCheck> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => {
      const reason =
        err.code === 'EADDRINUSE'
          ? `another program is listening on 127.0.0.1:${port} on this machine`
          : err.code === 'EACCES'
            ? `port ${port} needs privileges on this machine`
            : `cannot listen on 127.0.0.1:${port} here (${err.code ?? err.message})`;
      resolve({ free: false, reason });
    });
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve({ free: true })));
  });
}
