/**
 * The functions' configured memory, read from the CDK construct's defaults (`DEFAULT_MEMORY_MB` in
 * `infra/sms-relay.ts`). Read from the source text rather than imported, because importing the
 * construct loads aws-cdk-lib (seconds of CPU and a large heap in the measuring process);
 * `test/bench/memory.test.ts` checks the parsed values against the imported constant.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HANDLER_NAMES, type HandlerName } from '../infra/bundle';

const DEFAULTS = /export const DEFAULT_MEMORY_MB = \{([^}]*)\}/;

/** Parses `DEFAULT_MEMORY_MB` out of the text of `infra/sms-relay.ts`. */
export function parseMemoryDefaults(source: string): Record<HandlerName, number> {
  const body = DEFAULTS.exec(source)?.[1];
  if (body === undefined) throw new Error('DEFAULT_MEMORY_MB not found in infra/sms-relay.ts');
  const entries = new Map<string, number>();
  for (const match of body.matchAll(/['"]?([\w-]+)['"]?\s*:\s*(\d+)/g)) entries.set(match[1] as string, Number(match[2]));
  return Object.fromEntries(
    HANDLER_NAMES.map((name) => {
      const mb = entries.get(name);
      if (mb === undefined) throw new Error(`DEFAULT_MEMORY_MB has no entry for ${name}`);
      return [name, mb];
    }),
  ) as Record<HandlerName, number>;
}

/** The memory defaults of the deployed functions, in MB. */
export function readMemoryDefaults(repoRoot: string): Record<HandlerName, number> {
  return parseMemoryDefaults(readFileSync(join(repoRoot, 'infra', 'sms-relay.ts'), 'utf8'));
}
