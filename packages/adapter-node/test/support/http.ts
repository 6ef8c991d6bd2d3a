/**
 * Plain HTTP requests for the server tests (node:http, so the method and
 * the Host header are the test's to choose), each answer read whole.
 */
import { request } from "node:http";

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, checked field by field in the tests
  json(): any;
}

export function get(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const asked = request(url, { method: options.method ?? "GET", headers: options.headers ?? {} });
    asked.on("error", reject);
    asked.on("response", (response) => {
      const parts: Buffer[] = [];
      response.on("data", (part: Buffer) => parts.push(part));
      response.on("error", reject);
      response.on("end", () => {
        const body = Buffer.concat(parts);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body,
          json: () => JSON.parse(body.toString("utf8")),
        });
      });
    });
    asked.end();
  });
}

/** The URL of a route on a server, with its query. */
export function route(
  base: string,
  path: string,
  query: Record<string, string | number> = {},
): string {
  const url = new URL(path, base);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, String(value));
  return url.href;
}
