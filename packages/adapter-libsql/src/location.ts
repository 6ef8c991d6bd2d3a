import { fileURLToPath } from "node:url";

/** A location as this adapter reads it: a local file, or a remote libSQL server. */
export type LibsqlLocation =
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "remote"; readonly url: string };

const REMOTE_SCHEMES = new Set(["libsql:", "http:", "https:", "ws:", "wss:"]);

/**
 * A plain path or a `file:` URL is a file; `libsql:`, `http(s):` and `ws(s):`
 * URLs are remote. Remote URLs are normalized (scheme and host lower-cased,
 * default port and trailing slash dropped) and must not carry credentials:
 * pass `authToken` to libsqlDriver instead, so a token never becomes part of
 * an identity or an error message.
 */
export function parseLocation(location: string): LibsqlLocation {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme.length === 1) return { kind: "file", path: location };
  if (scheme === "file") {
    const path = location.startsWith("file://")
      ? fileURLToPath(location)
      : decodeURIComponent(location.slice("file:".length));
    return { kind: "file", path };
  }
  if (!REMOTE_SCHEMES.has(`${scheme}:`)) {
    throw new TypeError(`unsupported scheme "${scheme}:"`);
  }
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    // Node's own error carries the input, which may hold a token: none is kept.
    throw new TypeError("not a valid URL");
  }
  if (url.username !== "" || url.password !== "" || url.searchParams.has("authToken")) {
    throw new TypeError("credentials in the URL; pass authToken to libsqlDriver instead");
  }
  url.hash = "";
  const path = url.pathname.replace(/\/+$/, "");
  return { kind: "remote", url: `${url.protocol}//${url.host.toLowerCase()}${path}${url.search}` };
}

/**
 * The location as a message may show it: a URL's user name, password and
 * `authToken` parameter replaced by `REDACTED`, so a token a caller put in
 * the URL is never repeated in an error (nor in a log that keeps it).
 */
export function redactLocation(location: string): string {
  const hidden = "REDACTED";
  return location
    .replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#@]*@/, `$1${hidden}@`)
    .replace(/([?&]authToken=)[^&#]*/gi, `$1${hidden}`);
}
