#!/usr/bin/env node
// The `runledger` command. The CLI itself is built from src/cli/ into dist/cli.js.
import { main } from "../dist/cli.js";

process.exitCode = await main(process.argv.slice(2));
