/**
 * Many runs on one libSQL server: one database per run, each a namespace of
 * a server started with `--enable-namespaces`. sqld reads the namespace from
 * the first label of the host name a client connects to, so a run's location
 * is `http://RUN.db.example.com:8080` (a wildcard DNS name pointing at the
 * server; Turso names its databases the same way). A namespace is created
 * through the server's admin API; given its URL, the driver creates a run's
 * namespace when the run is opened with `create`.
 */
import { RunledgerError } from "@runledger/core/port";
import {
  adminAuthRefused,
  authRefused,
  httpStatus,
  isNetworkFailure,
  missingNamespace,
  readOnlyToken,
  unreachable,
} from "./remote-errors.js";

export interface NamespaceAdmin {
  /** The admin API's base URL (sqld's `--admin-listen-addr`), e.g. `http://127.0.0.1:9090`. */
  readonly adminUrl: string;
  /**
   * The admin API's key (sqld's `--admin-auth-key`), sent as
   * `Authorization: Basic <key>`: sqld compares the header with exactly that
   * and answers 401 to a bearer token.
   */
  readonly adminAuthKey?: string;
}

/** The namespace a remote URL names: the first label of its host. */
export function namespaceOf(url: string): string {
  const host = new URL(url).hostname;
  const dot = host.indexOf(".");
  return dot === -1 ? host : host.slice(0, dot);
}

/** Creates the namespace `url` names, unless it exists. */
export async function ensureNamespace(admin: NamespaceAdmin, url: string): Promise<void> {
  const name = namespaceOf(url);
  await askAdmin(admin, `${encodeURIComponent(name)}/create`, "POST", {
    doing: `cannot create namespace ${JSON.stringify(name)} for ${url}`,
    fine: (status, text) => status === 400 && /already exists/i.test(text),
  });
}

/** Deletes the namespace `url` names, and with it the database. */
export async function deleteNamespace(admin: NamespaceAdmin, url: string): Promise<void> {
  const name = namespaceOf(url);
  await askAdmin(admin, encodeURIComponent(name), "DELETE", {
    doing: `cannot delete namespace ${JSON.stringify(name)} of ${url}`,
    fine: () => false,
  });
}

/** One request to the admin API; an answer that is not ok (nor `fine`) is the error it means. */
async function askAdmin(
  admin: NamespaceAdmin,
  path: string,
  method: "POST" | "DELETE",
  what: { readonly doing: string; readonly fine: (status: number, text: string) => boolean },
): Promise<void> {
  const { doing } = what;
  let response: Response;
  try {
    response = await fetch(`${admin.adminUrl.replace(/\/+$/, "")}/v1/namespaces/${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(admin.adminAuthKey === undefined
          ? {}
          : { authorization: `Basic ${admin.adminAuthKey}` }),
      },
      ...(method === "POST" ? { body: "{}" } : {}),
    });
  } catch (error) {
    throw unreachable(`${doing} (admin API at ${admin.adminUrl})`, error);
  }
  if (response.ok) return;
  const text = await response.text();
  if (what.fine(response.status, text)) return;
  if (response.status === 401 || response.status === 403) {
    throw adminAuthRefused(
      doing,
      admin.adminAuthKey !== undefined,
      new Error(`admin API answered ${response.status}: ${text}`),
    );
  }
  throw new RunledgerError(
    "storage_error",
    `${doing}: the admin API answered ${response.status} ${text}; check that the server runs with --enable-namespaces`,
  );
}

/**
 * Over WebSocket a server that refuses a token, or has no such namespace,
 * closes the handshake without saying why. One HTTP request to the same
 * server asks: its status tells the two apart (or finds the server gone).
 * Undefined when the HTTP answer explains nothing.
 */
export async function diagnoseClosedWebSocket(
  url: string,
  authToken: string | undefined,
  doing: string,
  cause: unknown,
  writable: boolean,
): Promise<RunledgerError | undefined> {
  const http = new URL(url);
  const tls =
    http.protocol === "wss:" ||
    (http.protocol === "libsql:" && http.searchParams.get("tls") !== "0");
  const base = `${tls ? "https" : "http"}://${http.host}`;
  try {
    const response = await fetch(`${base}/v2/pipeline`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(authToken === undefined ? {} : { authorization: `Bearer ${authToken}` }),
      },
      // A writable open runs `PRAGMA foreign_keys` first, which a read-only
      // token is refused (403): the probe runs it too, to tell that apart.
      body: JSON.stringify({
        baton: null,
        requests: [
          ...(writable ? [{ type: "execute", stmt: { sql: "PRAGMA foreign_keys" } }] : []),
          { type: "close" },
        ],
      }),
    });
    const status = response.status;
    await response.body?.cancel();
    if (status === 401) return authRefused(doing, cause);
    if (status === 403) return readOnlyToken(doing, cause);
    if (status === 404) return missingNamespace(doing, cause);
    return undefined;
  } catch (error) {
    if (isNetworkFailure(error) || httpStatus(error) === undefined)
      return unreachable(doing, cause);
    return undefined;
  }
}
