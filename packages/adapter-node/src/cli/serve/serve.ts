/**
 * `runledger serve`: a run (or a directory of runs) in the browser, on a
 * local web server that only reads. It listens on 127.0.0.1 unless told
 * another address, prints its URL once it listens, and runs until it is
 * interrupted (Ctrl-C, SIGTERM), then exits 0.
 */
import { EXIT_OK, type Output, report, write } from "../output.js";
import { isLoopback, startServer } from "./server.js";
import { sourceFor } from "./sources.js";

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly catalog?: string;
}

/** The port serve listens on when none is given. */
export const DEFAULT_PORT = 5959;
export const DEFAULT_HOST = "127.0.0.1";

/** Resolves when the process is asked to stop. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export async function serve(path: string, options: ServeOptions, output: Output): Promise<number> {
  const source = await sourceFor(path, options.catalog);
  const served = await startServer(source, { host: options.host, port: options.port });
  // Listening for the stop before the URL is printed: whoever reads it may stop us at once.
  const stopped = interrupted();
  try {
    const shows =
      source.mode === "file"
        ? `the run in ${source.path}`
        : `the runs in ${source.path}${source.catalog === undefined ? "" : ` (catalog ${source.catalog})`}`;
    await report(
      output,
      {
        url: served.url,
        host: served.host,
        port: served.port,
        mode: source.mode,
        path: source.path,
        catalog: source.catalog ?? null,
      },
      () => [`runledger serve: ${served.url}`, `  ${shows}, read-only`, "  Ctrl-C stops"],
    );
    if (!isLoopback(options.host)) {
      await write(
        process.stderr,
        `runledger serve: listening on ${options.host}: other machines can read these runs\n`,
      );
    }
    await stopped;
  } finally {
    await served.close();
  }
  return EXIT_OK;
}
