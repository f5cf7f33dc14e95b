// The worker's code is TypeScript like the rest of local/: tsx compiles it in this thread, as the
// console's preview worker does (loader hooks are per thread). The CLI's build points here too.
import { register } from 'tsx/esm/api';

register();
await import('./dynalite-worker.ts');
