export {
  DEFAULT_LIMIT,
  DEFAULT_MAX_PARTS,
  ELLIPSIS,
  Encoding,
  FitFailureReason,
  LengthPolicy,
  MAX_PARTS_CEILING,
  SEGMENT_CAPACITY,
} from './constants';
export { InvalidFitOptionsError } from './errors';
export { fitMessage } from './fit';
export { encodingOf, isGsmCharacter } from './gsm';
export { GSM_LOOKALIKES, LONE_SURROGATE_REPLACEMENT, toGsmLookalikes } from './lookalikes';
export type { CharacterMapping } from './lookalikes';
export { countSegments, measureMessage } from './measure';
export { normaliseMessage } from './normalise';
export { partPrefix } from './split';
export type {
  FitFailure,
  FitOptions,
  FitResult,
  FitSuccess,
  FittedPart,
  MeasuredText,
} from './types';
