/**
 * What the suite asks of an open-probe process and what it answers. The
 * suite starts it with one JSON argument (OpenProbeRequest); the probe opens
 * one run once, through core's RunStore on its own driver, reports how the
 * open ended and what it read from the operating system, and exits.
 */
import type { DriverSource, FailedMessage } from "./common.js";

export interface OpenProbeRequest extends DriverSource {
  readonly location: string;
  /** Open with `{ readOnly: true }`. Default: a plain (writable) open. */
  readonly readOnly?: boolean;
  /**
   * Another run opened and released first, so that the measured open pays
   * for no module loading and no code compiled for the first time.
   */
  readonly warmUp?: string;
}

/** What the process read from the kernel during the open: /proc/self/io's counters. */
export interface ReadCounters {
  /** Bytes passed to read() and pread() (page cache hits included). */
  readonly rchar: number;
  /** Read system calls. */
  readonly syscr: number;
}

export type OpenOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: string | undefined;
      readonly message: string;
      readonly details: Record<string, unknown> | undefined;
    };

export type OpenProbeReport =
  | {
      readonly state: "done";
      readonly outcome: OpenOutcome;
      /** Undefined where /proc/self/io cannot be read. */
      readonly reads: ReadCounters | undefined;
    }
  | FailedMessage;
