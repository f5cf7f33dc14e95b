/**
 * On call: who of the config's `people` a schedule's rotation (or an override) puts on call at an
 * instant, and until when. Pure: the overrides are read from the store by the caller.
 */
export { compileOnCall } from './compile';
export { onCallAt, type OnCallNow, type OnCallOverride, type People } from './resolve';
export { shiftAt, type Shift } from './rotation';
export {
  NO_ONE,
  parseLocalDateTime,
  type CompiledSchedule,
  type OnCallDirectory,
  type Person,
  type Rotation,
} from './schedule';
