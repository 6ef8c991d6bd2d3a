/**
 * Resolves every `NAME.localhost` to 127.0.0.1 inside this process.
 *
 * sqld picks a namespace (one database) from the first label of the Host a
 * client connects to, so a test reaches namespace `run-7` of a local server at
 * `http://run-7.localhost:PORT`. The name `*.localhost` means loopback (RFC
 * 6761) and browsers resolve it so, but Node asks the system resolver, which
 * on many hosts does not know it. A deployment gets the same effect from a
 * wildcard DNS record; tests get it from this. Only names ending in
 * `.localhost` are touched; every other lookup goes to the original.
 */
import dns from "node:dns";

let installed = false;

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

export function resolveLocalhostSubdomains(): void {
  if (installed) return;
  installed = true;
  const original = dns.lookup;
  const patched = (hostname: string, options: unknown, callback?: unknown): void => {
    const done = (typeof options === "function" ? options : callback) as LookupCallback;
    const settings = (typeof options === "object" && options !== null ? options : {}) as {
      all?: boolean;
    };
    if (typeof hostname === "string" && hostname.toLowerCase().endsWith(".localhost")) {
      if (settings.all) process.nextTick(done, null, [{ address: "127.0.0.1", family: 4 }]);
      else process.nextTick(done, null, "127.0.0.1", 4);
      return;
    }
    (original as (...args: unknown[]) => void).call(dns, hostname, options, callback);
  };
  dns.lookup = patched as unknown as typeof dns.lookup;
}
