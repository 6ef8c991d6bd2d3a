/**
 * A progress bar on stderr while work runs; silent when stderr is not a
 * terminal. Drawn by hand (one line, rewritten with a carriage return) so that
 * the CLI adds no dependency for the library's users.
 */
export interface Progress {
  update(phase: string, done: number, total: number): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };
const WIDTH = 30;
/** At most one redraw per this many milliseconds, except the last one. */
const FRAME_MS = 100;

export function progress(label: string): Progress {
  const stream = process.stderr;
  if (!stream.isTTY) return SILENT;
  let drawn = false;
  let last = 0;
  const clear = () => stream.write("\r\x1b[2K");
  return {
    update(phase, done, total) {
      const now = Date.now();
      if (drawn && done < total && now - last < FRAME_MS) return;
      last = now;
      const share = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
      const filled = Math.round(share * WIDTH);
      const bar = `${"\u2588".repeat(filled)}${"\u2591".repeat(WIDTH - filled)}`;
      if (!drawn) stream.write("\x1b[?25l");
      clear();
      const amount = phase === "bytes" ? `${mib(done)}/${mib(total)} MiB` : `${done}/${total}`;
      stream.write(`${label} ${phase} [${bar}] ${amount}`);
      drawn = true;
    },
    stop() {
      if (!drawn) return;
      clear();
      stream.write("\x1b[?25h");
      drawn = false;
    },
  };
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
