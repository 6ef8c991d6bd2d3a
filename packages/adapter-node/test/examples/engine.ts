import { nodeDriver } from "@runledger/adapter-node";
import { ConnectionProvider, readLiveSchema } from "@runledger/core/engine";

// A provider with no schema of its own: its establish hook only configures WAL.
const provider = new ConnectionProvider({ driver: nodeDriver() });
const lease = await provider.open("scratch.db", { create: true });
await lease.transact(async (tx) => {
  await tx.execute("CREATE TABLE note (body TEXT NOT NULL)");
  await tx.savepoint((inner) => inner.execute("INSERT INTO note VALUES (?)", ["kept"]));
});
const live = await lease.read((r) => readLiveSchema(r));
console.log(live.objects.map((object) => object.name)); // ["note"]
await lease.release();
await provider.close();
