import cliProgress from "cli-progress";

/** A progress bar on stderr while work runs; silent when stderr is not a terminal. */
export interface Progress {
  update(phase: string, done: number, total: number): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

export function progress(label: string): Progress {
  if (!process.stderr.isTTY) return SILENT;
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} {phase} [{bar}] {value}/{total}`,
      clearOnComplete: true,
      hideCursor: true,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(phase, done, total) {
      if (!started) {
        bar.start(total, done, { phase });
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(done, { phase });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
