/**
 * A graph interrupted in one process is resumed in another from the thread's
 * file alone: nothing of the first process survives but what the saver wrote.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeDriver } from "@runledger/adapter-node";
import { afterEach, beforeEach, expect, it } from "vitest";
import { tempDirectory } from "./support/backends.js";
import { expectEveryFileVerifies } from "./support/verify.js";

const script = fileURLToPath(new URL("./support/approval.mjs", import.meta.url));
const cli = fileURLToPath(new URL("../../adapter-node/bin/runledger.js", import.meta.url));
const runledger = (...args: string[]) =>
  JSON.parse(execFileSync(process.execPath, [cli, ...args, "--json"], { encoding: "utf8" }));
const run = (...args: string[]) =>
  JSON.parse(execFileSync(process.execPath, [script, ...args], { encoding: "utf8" }).trim());

let directory = tempDirectory();
beforeEach(() => {
  directory = tempDirectory();
});
afterEach(() => directory.remove());

it("resumes an interrupted graph in a new process from the thread's file, and the file verifies", async () => {
  const first = run(directory.path, "start");
  expect(first.next).toStrictEqual(["ask"]);
  expect(first.interrupts[0].value).toStrictEqual({ question: "send the draft?" });
  expect(first.messages.map((m: { text: string }) => m.text)).toStrictEqual([
    "write it",
    "a draft",
  ]);
  const second = run(directory.path, "resume", "yes");
  expect(second.next).toStrictEqual([]);
  expect(second.messages.map((m: { text: string }) => m.text)).toStrictEqual([
    "write it",
    "a draft",
    "yes",
    "sent",
  ]);
  expect(await expectEveryFileVerifies(nodeDriver(), directory.path)).toBe(1);
});

it("leaves a thread file the CLI reads: log shows its checkpoints, ls the newest one's channels", () => {
  run(directory.path, "start");
  run(directory.path, "resume", "no");
  const file = `${directory.path}/approval.db`;
  const { events } = runledger("log", file, "--limit", "1000");
  const checkpoints = events.filter(
    (event: { record: { kind: string } }) => event.record.kind === "langgraph.checkpoint",
  );
  expect(checkpoints.length).toBe(5);
  expect(checkpoints.every((event: { key: string }) => event.key.startsWith("c::"))).toBe(true);
  const { entries } = runledger("ls", file, "channels");
  expect(entries.map((entry: { name: string }) => entry.name)).toStrictEqual([
    "approved.json",
    "messages",
  ]);
  const messages = runledger("ls", file, "channels/messages");
  expect(messages.entries.map((entry: { name: string }) => entry.name)).toStrictEqual([
    "00000000-00000003",
  ]);
});
