export { compileRecipients } from './compile';
export { maskNumbersInText } from './mask-text';
export { MSISDN_REJECTIONS, maskMsisdn, normalizeMsisdn } from './msisdn';
export { NO_PROVIDER_PREFIX, type Numbering, noProviderReason, normalizeRecipient } from './numbering';
export type { MsisdnResult } from './msisdn';
export { RECIPIENT_DROP_REASONS, resolveRecipients, type OnCallMoment } from './resolve';
export { parseRecipientReference, RecipientReferenceKind, type RecipientReference } from './reference';
export { RECIPIENT_SEPARATORS } from './split';
export { RecipientEntryKind } from './types';
export type {
  CompiledRecipientEntry,
  CompiledRecipients,
  DroppedRecipient,
  ResolvedRecipients,
} from './types';
