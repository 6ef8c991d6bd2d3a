/**
 * Every frozen schema manifest of this build, by the name it is exported
 * under: for the tests that go through all of them (identity, ownership).
 */
import { READ_MODEL_SCHEMA_V1 } from "../src/commit-log/read-model-schema-v1.js";
import { COMMIT_LOG_SCHEMA_V1 } from "../src/commit-log/schema-v1.js";
import { DATASTORE_SCHEMA_V1 } from "../src/repositories/datastore/schema-v1.js";
import { CATALOG_SCHEMA_V1 } from "../src/run/catalog/schema-v1.js";
import { SCHEMA_V1 } from "../src/run/schema-v1.js";
import type { SchemaManifest } from "../src/schema/manifest.js";

export const MANIFESTS: Readonly<Record<string, SchemaManifest>> = {
  SCHEMA_V1,
  CATALOG_SCHEMA_V1,
  COMMIT_LOG_SCHEMA_V1,
  READ_MODEL_SCHEMA_V1,
  DATASTORE_SCHEMA_V1,
};
