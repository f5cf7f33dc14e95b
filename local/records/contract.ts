/**
 * The local record API's JSON: a record as `sms-relay logs --json`, `/_relay/records` and the
 * console show it, and the requests that list and requeue records, as zod schemas. Written once
 * here, read by the runtime's `/_relay` endpoints, the console's API and (types only) its page, so
 * this file imports nothing that needs Node.
 */
import { z } from 'zod';
import { DISMISS, MAX_MUTE_REASON_CHARS, MAX_MUTE_SECONDS, ONCALL, PAGE_SIZE } from '../../functions/core/defaults';
import { ID_PATTERN } from '../../functions/store/id-pattern';
import { HttpError } from '../http/error';
import {
  DISMISS_STATES,
  expectedSince,
  expectedState,
  MAX_REDRIVE_IDS,
  MAY_HAVE_ARRIVED,
  needsAcceptDuplicates,
  REDRIVE_STATES,
  sinceOf,
  type State,
  STATES,
  stateIn,
} from './states';

export * from './states';

/**
 * One message record as `logs` prints it, `/_relay/records` returns it and the console lists it:
 * numbers masked, no text, no claim token. Absent values are `null`, so every key is always there
 * for scripts.
 */
export interface RecordView {
  readonly id: string;
  readonly route: string;
  readonly state: State;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Masked. */
  readonly to: readonly string[];
  readonly segments: number;
  readonly attempts: number;
  readonly reason: string | null;
  readonly deducted: number | null;
  readonly remainingBalance: number | null;
  /** The provider of the last attempt (the one that sent it, when SENT); `null` before any attempt. */
  readonly provider: string | null;
  /** On a failover: the provider the last attempt moved on from, and why; else `null`. */
  readonly failoverFrom: string | null;
  readonly failoverReason: string | null;
  /** On a DISMISSED record: who ended it unsent, when, why (numbers masked) and from which state; else `null`. */
  readonly dismissal: DismissalView | null;
}

/** Who dismissed a record, when, why, and the state it was dismissed from. */
export interface DismissalView {
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly from: State;
}

/** What a dismissal (`POST /_relay/dismiss`, `sms-relay dismiss`) did. */
export interface DismissResult {
  /** Ids now DISMISSED. */
  readonly dismissed: readonly string[];
  /** Ids left as they were, each with its state now (`null`: no such record) and why. */
  readonly refused: readonly { readonly id: string; readonly state: State | null; readonly why: string }[];
}

/** What the console's Dismiss of one record did. */
export interface DismissAnswer {
  readonly dismissed: boolean;
  readonly record: RecordView | null;
}

/** What a batch requeue (`POST /_relay/redrive`, `sms-relay redrive`) did. */
export interface RequeueOutcome {
  /** Ids moved to PENDING. */
  readonly requeued: readonly string[];
  /** Ids no longer in `from` (sent meanwhile, or redriven by someone else). */
  readonly skipped: readonly string[];
}

/** One page of records, newest first (by last change; by creation when `route` is given). */
export interface RecordsPage {
  readonly records: readonly RecordView[];
  /** Pass back as `cursor` for the next (older) page; absent on the last page. */
  readonly cursor?: string;
}

/** What redriving one record did. */
export interface RedriveAnswer {
  readonly requeued: boolean;
  readonly record: RecordView | null;
}

/** Records one console page lists at most. */
export const MAX_PAGE = 500;
/** Records one `/_relay/records` listing returns at most (six digits, as `limit` always allowed). */
const MAX_LISTING = 999_999;

/** A state of `allowed` in a request, any case. */
export function stateParameter<const T extends readonly State[]>(allowed: T) {
  return z.string().transform((value, context): T[number] => {
    const found = stateIn(value, allowed);
    if (found === undefined) context.addIssue({ code: 'custom', message: expectedState(allowed, value) });
    return found ?? (z.NEVER as T[number]);
  });
}

const sinceParameter = z.string().transform((value, context): Date => {
  const at = sinceOf(value, new Date());
  if (at === undefined) context.addIssue({ code: 'custom', message: expectedSince(value) });
  return at ?? (z.NEVER as Date);
});

/** A whole number from `min` to `max`, as a query parameter writes it. */
export function wholeNumber(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,6}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `must be a whole number from ${min} to ${max}`)
        .max(max, `must be a whole number from ${min} to ${max}`),
    );
}

/** `/_relay/records?route&state&since&limit`: which records to list (`logs`, `redrive`); no limit: all. */
export const RecordListQuery = z.object({
  route: z.string().max(200).optional(),
  state: stateParameter(STATES).optional(),
  since: sinceParameter.optional(),
  limit: wholeNumber(1, MAX_LISTING).optional(),
});

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([0-9A-Z]{1,40})$/;

/** `/console/api/records?…&cursor&limit`: one page of the same listing. */
export const RecordsPageQuery = RecordListQuery.extend({
  cursor: z.string().regex(CURSOR, 'is not one this console gave').optional(),
  limit: wholeNumber(1, MAX_PAGE).default(PAGE_SIZE.default),
});

/** A record's id in a path. */
export const RecordIdParameters = z.object({ id: z.string().regex(/^[0-9A-Z]{1,40}$/) });

/**
 * `POST /_relay/redrive`: requeue these ids, each only if it is still in `from`; `from: UNKNOWN`
 * needs `acceptDuplicates: true` (see {@link MAY_HAVE_ARRIVED}).
 */
export const RedriveRequest = z
  .object({
    from: stateParameter(REDRIVE_STATES),
    ids: z.array(z.string().max(40)).max(MAX_REDRIVE_IDS),
    acceptDuplicates: z.boolean().default(false),
  })
  .superRefine(({ from, acceptDuplicates }, context) => {
    if (needsAcceptDuplicates(from) && !acceptDuplicates) {
      context.addIssue({
        code: 'custom',
        path: ['acceptDuplicates'],
        message: `must be true with "from": "UNKNOWN": ${MAY_HAVE_ARRIVED}`,
      });
    }
  });

/** A dismissal's reason: required, any text up to {@link DISMISS}`.maxReasonChars`. */
export const DismissReason = z
  .string()
  .trim()
  .min(1, 'is required: say why these messages are not sent')
  .max(DISMISS.maxReasonChars);

/** Who dismissed: a name, at most {@link DISMISS}`.maxByChars`. */
const DismissedBy = z.string().trim().min(1).max(DISMISS.maxByChars);

/**
 * `POST /_relay/dismiss`: end records unsent, with a `reason` (and `by`; default the relay's OS
 * user). Either `ids` (at most {@link MAX_REDRIVE_IDS}; with `state`, each only while still in it)
 * or a selection, `state` with `route` and `since` as `logs` takes them.
 */
export const DismissRequest = z
  .object({
    ids: z.array(z.string().max(40)).min(1).max(MAX_REDRIVE_IDS).optional(),
    state: stateParameter(DISMISS_STATES).optional(),
    route: z.string().max(200).optional(),
    since: sinceParameter.optional(),
    reason: DismissReason,
    by: DismissedBy.optional(),
  })
  .superRefine(({ ids, state, route, since }, context) => {
    if (ids === undefined && state === undefined)
      context.addIssue({ code: 'custom', path: ['ids'], message: 'send "ids", or "state" (with "route", "since")' });
    if (ids !== undefined && (route !== undefined || since !== undefined))
      context.addIssue({
        code: 'custom',
        path: ['route'],
        message: '"route" and "since" select by "state", not "ids"',
      });
  });

/** The console's Dismiss of one record: why. */
export const DismissRecordRequest = z.strictObject({ reason: DismissReason });

/** The console's redrive of one record: an UNKNOWN one needs `acceptDuplicates: true`, the page's confirmation. */
export const RedriveRecordRequest = z.object({ acceptDuplicates: z.boolean().default(false) });

/** `POST /_relay/unmute` (and the console's unmute): end this route's mute. */
export const UnmuteRequest = z.object({ route: z.string().min(1).max(128) });

/** `POST /_relay/mutes` (and the console's mute): mute a route for `forSeconds` with a reason. */
export const MuteRequest = UnmuteRequest.extend({
  forSeconds: z.number().int().min(1).max(MAX_MUTE_SECONDS),
  reason: z.string().max(MAX_MUTE_REASON_CHARS).default(''),
});

const NAME = z.string().min(1).max(64);

/** `GET /_relay/overrides?schedules=ops,db`: the on-call overrides in force of these schedules. */
/** `GET /_relay/circuit?provider=`: whose circuit; absent, `main`'s. */
export const CircuitQuery = z.object({
  provider: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,62}$/)
    .optional(),
});

export const OverridesQuery = z.object({
  schedules: z
    .string()
    .max(4096)
    .transform((text) => text.split(',').filter((name) => name !== ''))
    .pipe(z.array(NAME).max(100)),
});

/** `POST /_relay/overrides` (`sms-relay oncall override`): put `person` on call for `schedule` for `forSeconds`. */
export const OverrideRequest = z.object({
  schedule: NAME,
  person: NAME,
  forSeconds: z.number().int().min(1).max(ONCALL.maxOverrideSeconds),
  reason: z.string().max(ONCALL.maxReasonChars).default(''),
});

/** `POST /_relay/ack` (`sms-relay ack <incident>`): acknowledge an open incident. */
export const AckRequest = z.object({
  incident: z.string().regex(ID_PATTERN, { message: 'incident is an id as "sms-relay incidents" lists it' }),
});

/** The time and id of a page's last row, from `cursor`. */
export function cursorPosition(cursor: string): { readonly at: string; readonly id: string } {
  const match = CURSOR.exec(cursor);
  if (match === null) throw new HttpError(400, `cursor is not one this console gave: "${cursor}"`);
  return { at: match[1]!, id: match[2]! };
}
