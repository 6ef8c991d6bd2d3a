/**
 * How a catalog is recognized or created: the steps every one-row-headed
 * runledger database takes (../commit-log/establish.ts), with the catalog's
 * manifest and its `runledger_catalog` row. A catalog is always created when
 * absent — naming its location is asking for one — but a file there that
 * is not a catalog is refused like any foreign file and left as found.
 */

import type { EstablishSteps } from "../../commit-log/context.js";
import { establishSingletonDatabase } from "../../commit-log/establish.js";
import type { InjectedContext } from "../../port/context.js";
import { CATALOG_SCHEMA_V1 } from "./schema-v1.js";

export function establishCatalog(context: InjectedContext): EstablishSteps {
  return establishSingletonDatabase(CATALOG_SCHEMA_V1, {
    populate: (tx) =>
      tx
        .execute("INSERT INTO runledger_catalog (singleton, created_at) VALUES (1, ?)", [
          context.clock(),
        ])
        .then(() => undefined),
    singleton: "SELECT created_at FROM runledger_catalog",
    what: "its runledger_catalog row",
  });
}
