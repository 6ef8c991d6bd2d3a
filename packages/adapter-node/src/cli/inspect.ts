/**
 * `runledger inspect`: the first question about any file, "what is this?",
 * answered without changing it.
 */
import { stat } from "node:fs/promises";
import { APPLICATION_ID, RUN_SCHEMA_VERSION, SCHEMA_V1, SCHEMA_V1_DIGEST } from "@runledger/core";
import { manifestDigest } from "@runledger/core/engine";
import { EXIT_OK, iso, type Output, report } from "./output.js";
import { describeStop, readRun } from "./store.js";

const hex = (n: number) => `0x${n.toString(16).toUpperCase().padStart(8, "0")}`;

/**
 * What a run file is and holds. It opens the file as any reader does, without
 * create: recognition reads only, so a refused file is left exactly as found
 * and its refusal code is the answer.
 */
export async function inspect(file: string, output: Output): Promise<number> {
  const found = await readRun(file, (lease) =>
    // One snapshot: the header and sqlite_schema are read in the same
    // transaction as the run row and the counts.
    lease.read(async (r) => ({
      live: await r.schema(),
      run: await r.run.get(),
      currentRoot: await r.workspace.currentRoot(),
      counts: await r.counts(),
    })),
  );
  const { live, run, currentRoot, counts } = found;
  const digest = manifestDigest({ ...SCHEMA_V1, ...live });
  const bytes = (await stat(file)).size;
  const value = {
    file,
    bytes,
    recognition: "recognized",
    applicationId: live.applicationId,
    userVersion: live.userVersion,
    schemaDigest: digest,
    schemaDigestMatches: digest === SCHEMA_V1_DIGEST,
    run,
    counts,
    currentRoot,
  };
  const range =
    counts.firstSequence === null ? "" : ` (${counts.firstSequence}..${counts.lastSequence})`;
  await report(output, value, () => [
    `file            ${file} (${bytes} bytes)`,
    `recognition     recognized: ${SCHEMA_V1.title}, version ${RUN_SCHEMA_VERSION}`,
    `application_id  ${hex(live.applicationId)}${live.applicationId === APPLICATION_ID ? ' ("RLDG")' : ""}`,
    `user_version    ${live.userVersion}`,
    `schema digest   ${digest} (${digest === SCHEMA_V1_DIGEST ? "matches" : "differs from"} SCHEMA_V1_DIGEST)`,
    `workflow        ${run.workflowId}`,
    `run             ${run.runId}`,
    `status          ${run.status}, ${describeStop(run.stopReason)}`,
    `created         ${iso(run.createdAt)}`,
    `updated         ${iso(run.updatedAt)}`,
    `journal         ${counts.events} events${range}`,
    `workspace       ${counts.objects} objects, ${counts.chunks} pieces, ${counts.roots} roots, ${counts.pins} pins`,
    `current root    ${currentRoot}`,
  ]);
  return EXIT_OK;
}
