#!/usr/bin/env node
// The CLI is written in TypeScript; tsx compiles it on the fly so no build step sits between `npm ci` and use.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../local/cli/main.ts');
await main(process.argv);
