// The worker's code is TypeScript like the rest of the console: tsx compiles it in this thread, as
// bin/sms-relay.mjs does in the main one (loader hooks are per thread).
import { register } from 'tsx/esm/api';

register();
await import('./preview-worker.ts');
