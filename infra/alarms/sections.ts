import { PAGING } from './paging';
import { PROVIDERS } from './providers';
import { STALLS } from './stalls';
import { STUCK_NOW } from './stuck';
import type { AlarmSection } from './table';
import { UNSENT } from './unsent';
import { WATCHERS } from './watchers';

/**
 * Every alarm of an environment, in the order docs/deploying.md lists them: the template's alarms
 * and the docs' tables are both made from these rows (`npm run docs:alarms` rewrites the docs).
 */
export const ALARM_SECTIONS: readonly AlarmSection[] = [STUCK_NOW, WATCHERS, PROVIDERS, UNSENT, PAGING, STALLS];
