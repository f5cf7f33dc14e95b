#!/usr/bin/env node
// Runs the CLI's build when it is of the current sources, else the TypeScript sources through tsx:
// see local/cli/launch.mjs.
import { fileURLToPath } from 'node:url';
import { launch } from '../local/cli/launch.mjs';

await launch(process.argv, fileURLToPath(new URL('..', import.meta.url)));
