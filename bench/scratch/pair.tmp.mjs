import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { freePort, sqldBinary } from "@runledger/conformance/sqld";

const bin = sqldBinary();
const d1 = mkdtempSync(join(tmpdir(), "p-")),
  d2 = mkdtempSync(join(tmpdir(), "r-"));
const [hp, gp, hr] = await Promise.all([freePort(), freePort(), freePort()]);
const p = spawn(
  bin,
  [
    "--no-welcome",
    "--db-path",
    join(d1, "data.sqld"),
    "--http-listen-addr",
    `127.0.0.1:${hp}`,
    "--grpc-listen-addr",
    `127.0.0.1:${gp}`,
  ],
  { stdio: ["ignore", "pipe", "pipe"] },
);
let plog = "";
p.stderr.on("data", (c) => (plog += c));
p.stdout.on("data", (c) => (plog += c));
await new Promise((r) => setTimeout(r, 1500));
const r = spawn(
  bin,
  [
    "--no-welcome",
    "--db-path",
    join(d2, "data.sqld"),
    "--http-listen-addr",
    `127.0.0.1:${hr}`,
    "--primary-grpc-url",
    `http://127.0.0.1:${gp}`,
  ],
  { stdio: ["ignore", "pipe", "pipe"] },
);
let rlog = "";
r.stderr.on("data", (c) => (rlog += c));
r.stdout.on("data", (c) => (rlog += c));
await new Promise((res) => setTimeout(res, 2000));
try {
  const primary = createClient({ url: `http://127.0.0.1:${hp}` });
  const replica = createClient({ url: `ws://127.0.0.1:${hr}` });
  await primary.execute("CREATE TABLE t (x)");
  await primary.execute("INSERT INTO t VALUES (1)");
  const t0 = Date.now();
  let n;
  for (;;) {
    try {
      n = (await replica.execute("SELECT count(*) n FROM t")).rows[0].n;
      if (n >= 1) break;
    } catch (e) {}
    await new Promise((res) => setTimeout(res, 10));
  }
  console.log("visible on replica after", Date.now() - t0, "ms");
  await replica.execute("INSERT INTO t VALUES (2)");
  console.log(
    "primary after replica write",
    (await primary.execute("SELECT count(*) n FROM t")).rows,
  );
  const tx = await replica.transaction("write");
  await tx.execute("INSERT INTO t VALUES (3)");
  console.log("tx read", (await tx.execute("SELECT count(*) n FROM t")).rows);
  await tx.commit();
  console.log("primary after replica tx", (await primary.execute("SELECT count(*) n FROM t")).rows);
  console.log("replica reads own write", (await replica.execute("SELECT count(*) n FROM t")).rows);
  try {
    await replica.execute("PRAGMA application_id = 3");
  } catch (e) {
    console.log("pragma", e.message.slice(0, 80));
  }
} catch (e) {
  console.log("ERR", e.message, plog.slice(-500), rlog.slice(-1500));
}
p.kill("SIGKILL");
r.kill("SIGKILL");
