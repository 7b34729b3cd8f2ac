import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A forward proxy that tunnels (CONNECT), as undici asks any proxy to, and records each tunnel's
 * target.
 */
export async function startConnectProxy(): Promise<{
  url: string;
  tunnels: string[];
  stop(): void;
}> {
  const tunnels: string[] = [];
  const server = createServer().on('connect', (req, client: Socket, head: Buffer) => {
    tunnels.push(req.url!);
    const [host, port] = req.url!.split(':');
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).on('error', () => {});
      client.pipe(upstream).on('error', () => {});
    });
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tunnels,
    stop: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
