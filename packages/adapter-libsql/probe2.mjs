import fs from "node:fs";
import { createClient } from "@libsql/client";

const d = "/tmp/t16/q";
fs.rmSync(d, { recursive: true, force: true });
fs.mkdirSync(d);
const f = d + "/a.db";
const c = createClient({ url: "file:" + f, concurrency: 1 });
await c.execute("pragma journal_mode=wal");
await c.execute("create table t(x)");
for (let i = 0; i < 5; i++) await c.execute("insert into t values (1)");
c.close();
console.log("after close", fs.readdirSync(d));
for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
console.log("after turns", fs.readdirSync(d));
if (global.gc) {
  global.gc();
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  console.log("after gc", fs.readdirSync(d));
}
