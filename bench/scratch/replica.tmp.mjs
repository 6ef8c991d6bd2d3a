import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { startSqld } from "@runledger/conformance/sqld";

const server = await startSqld({});
try {
  const primary = createClient({ url: server.url("http") });
  await primary.execute("CREATE TABLE t (x)");
  await primary.execute("INSERT INTO t VALUES (1)");
  const dir = mkdtempSync(join(tmpdir(), "rep-"));
  const replica = createClient({ url: `file:${join(dir, "r.db")}`, syncUrl: server.url("http") });
  console.log("sync", await replica.sync());
  console.log("read", (await replica.execute("SELECT * FROM t")).rows);
  try {
    await replica.execute("INSERT INTO t VALUES (2)");
    console.log("write ok");
  } catch (e) {
    console.log("write err", e.code, e.message);
  }
  console.log("primary sees", (await primary.execute("SELECT count(*) n FROM t")).rows);
  console.log("replica sees before sync", (await replica.execute("SELECT count(*) n FROM t")).rows);
  await replica.sync();
  console.log("replica sees after sync", (await replica.execute("SELECT count(*) n FROM t")).rows);
  try {
    const tx = await replica.transaction("write");
    await tx.execute("INSERT INTO t VALUES (3)");
    const r = await tx.execute("SELECT count(*) n FROM t");
    console.log("in tx", r.rows);
    await tx.commit();
    console.log("tx ok");
  } catch (e) {
    console.log("tx err", e.code, e.message);
  }
  console.log("primary sees", (await primary.execute("SELECT count(*) n FROM t")).rows);
  try {
    await replica.execute("PRAGMA application_id = 5");
    console.log("pragma ok");
  } catch (e) {
    console.log("pragma err", e.code, e.message);
  }
  console.log((await replica.execute("PRAGMA journal_mode")).rows);
  replica.close();
  primary.close();
} catch (e) {
  console.log("ERR", e);
  console.log(server.output().slice(-2000));
} finally {
  await server.stop();
}
