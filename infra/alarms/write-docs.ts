/**
 * `npm run docs:alarms`: rewrites docs/deploying.md's alarm tables from infra/alarms/ (a test fails
 * while they differ).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withAlarmTables } from './docs';

const DEPLOYING_DOC = 'docs/deploying.md';

const before = readFileSync(DEPLOYING_DOC, 'utf8');
const after = withAlarmTables(before);
writeFileSync(DEPLOYING_DOC, after);
console.log(
  before === after ? `${DEPLOYING_DOC}: alarm tables up to date` : `${DEPLOYING_DOC}: alarm tables rewritten`,
);
