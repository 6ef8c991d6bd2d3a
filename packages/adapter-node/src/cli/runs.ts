/**
 * `runledger runs`: the runs a catalog lists (`store.list`), newest first,
 * every page of them. It only reads: a catalog that is not there is
 * `not_found`, never created, and no run file is opened.
 */
import { existsSync } from "node:fs";
import { isRunledgerError, type RunEntry, RunledgerError, RunStore } from "@runledger/core";
import { nodeDriver } from "../driver.js";
import { EXIT_OK, type Output, report, usage } from "./output.js";

export interface RunsOptions {
  readonly workflow?: string;
  /** One status, or several separated by commas. */
  readonly status?: string;
}

export async function runs(catalog: string, flags: RunsOptions, output: Output): Promise<number> {
  if (!existsSync(catalog)) {
    throw new RunledgerError(
      "not_found",
      `no run catalog at ${catalog}: a store makes one when given new RunStore({ driver, catalog })`,
    );
  }
  const filters = {
    ...(flags.workflow === undefined ? {} : { workflowId: flags.workflow }),
    ...(flags.status === undefined ? {} : { status: flags.status.split(",") as never }),
  };
  const store = new RunStore({ driver: nodeDriver(), catalog });
  const listed: RunEntry[] = [];
  try {
    let after: string | undefined;
    do {
      const page = await store
        .list({ ...filters, limit: 1_000, ...(after === undefined ? {} : { after }) })
        .catch((error: unknown) => {
          // A filter this command passed on as given: the command line was wrong.
          if (isRunledgerError(error, "invalid_argument")) throw usage(error.message);
          throw error;
        });
      listed.push(...page.runs);
      after = page.next;
    } while (after !== undefined);
  } finally {
    await store.close();
  }
  await report(output, { catalog, runs: listed }, () =>
    listed.length === 0
      ? ["no runs"]
      : listed.map((run) =>
          [
            run.status.padEnd(11),
            new Date(run.updatedAt).toISOString(),
            `${run.workflowId}/${run.runId}`,
            `seq ${run.lastSequence}`,
            run.location,
          ].join("  "),
        ),
  );
  return EXIT_OK;
}
