/**
 * What the suite asks of an other-encoding writer and what it answers. The
 * suite starts it with one JSON argument (EncodingWriterRequest); for each
 * build it loads that copy of core (its own module instances, constants
 * changed), writes one run through it with the subject's driver, and
 * finally prints one JSON EncodingWriterReport line and exits.
 */
import type { RunCreate } from "@runledger/core";
import type { DriverSource, FailedMessage } from "./common.js";

export interface EncodingWriterRequest extends DriverSource {
  readonly builds: readonly OtherBuildRun[];
  readonly create: RunCreate;
  /** How many small files the run's one directory holds. */
  readonly files: number;
  /** The size of the one large file (cut into pieces by the build's CHUNK_SIZE). */
  readonly largeBytes: number;
}

export interface OtherBuildRun {
  /** A copy of core's package directory (package.json, dist/), constants changed. */
  readonly core: string;
  /** Where to create the run. */
  readonly location: string;
}

export interface WrittenRun {
  /** The workspace encoding that build writes (its WORKSPACE_ENCODING_V1). */
  readonly encoding: string;
  readonly root: string;
  /** The entries that build lists in the directory afterwards. */
  readonly listed: number;
}

export type EncodingWriterReport =
  | { readonly state: "done"; readonly runs: readonly WrittenRun[] }
  | FailedMessage;
