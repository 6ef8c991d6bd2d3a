/**
 * A server that speaks only Hrana 2 over WebSocket, made of sqld: a TCP
 * proxy on 127.0.0.1 that, in each connection's upgrade request, offers sqld
 * only the `hrana2` subprotocol, then passes every byte both ways unchanged.
 * The client sees sqld choose `hrana2` among what it offered.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface Hrana2Proxy {
  /** `ws://…` for a namespace, through the proxy. */
  namespaceUrl(name: string): string;
  stop(): Promise<void>;
}

/** Starts the proxy in front of sqld's HTTP port (`port`). */
export async function startHrana2Proxy(port: number): Promise<Hrana2Proxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onHead);
      const request = head
        .subarray(0, end)
        .toString("latin1")
        .replace(/^sec-websocket-protocol:.*$/im, "Sec-WebSocket-Protocol: hrana2");
      upstream.write(Buffer.concat([Buffer.from(request, "latin1"), head.subarray(end)]));
      client.pipe(upstream);
      upstream.pipe(client);
    };
    client.on("data", onHead);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    namespaceUrl: (name) => `ws://${name}.localhost:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
