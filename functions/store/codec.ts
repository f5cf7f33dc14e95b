import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { bool, compact, type Item, ItemReader, map, num, str, strList } from './attributes';
import { ItemKind, messageKey } from './keys';
import { MessageState, TABLE } from './table';
import { corruptRecord } from './errors';
import { DeliveryPolicy } from '../core/config/policies';
import { HISTORY_KEPT } from '../core/defaults';
import { Lane, LANES } from '../core/lanes';
import {
  type Dismissal,
  type LastError,
  MAX_HISTORY_TEXT_CHARS,
  type MessageRecord,
  NoticeKind,
  type SendResult,
  type StateChange,
} from './types';

const STATES: ReadonlySet<string> = new Set(Object.values(MessageState));

/**
 * The attribute a PENDING record is due by (the `byDue` index's sort key): its `nextAttemptAt`, else
 * when it became PENDING. Set with every move to PENDING and removed by the claim; nothing reads it
 * back but the index.
 */
export const DUE_AT = TABLE.indexes.byDue.sortKey;
const DELIVERIES: ReadonlySet<string> = new Set(Object.values(DeliveryPolicy));
const NOTICES: ReadonlySet<string> = new Set(Object.values(NoticeKind));
const LANE_NAMES: ReadonlySet<string> = new Set(Object.values(Lane));

export const lastErrorValue = (error: LastError) =>
  map({
    name: str(error.name),
    status: error.status === undefined ? undefined : num(error.status),
    delivery: error.delivery === undefined ? undefined : str(error.delivery),
    message: str(error.message),
  });

const bounded = (text: string): string => text.slice(0, MAX_HISTORY_TEXT_CHARS);

/** A history entry, with its reason and error message cut to {@link MAX_HISTORY_TEXT_CHARS}. */
export const stateChange = ({
  at,
  state,
  reason,
  error,
  provider,
}: {
  at: string;
  state: MessageState;
  reason?: string | undefined;
  error?: LastError | undefined;
  provider?: string | undefined;
}): StateChange => ({
  at,
  state,
  ...(reason === undefined ? {} : { reason: bounded(reason) }),
  ...(error === undefined ? {} : { error: { ...error, message: bounded(error.message) } }),
  ...(provider === undefined ? {} : { provider }),
});

const stateChangeValue = (change: StateChange): AttributeValue =>
  map({
    at: str(change.at),
    state: str(change.state),
    reason: change.reason === undefined ? undefined : str(change.reason),
    error: change.error === undefined ? undefined : lastErrorValue(change.error),
    provider: change.provider === undefined ? undefined : str(change.provider),
  });

/** A list of history entries as stored; also the operand of the `list_append` of a transition. */
export const historyValue = (changes: readonly StateChange[]): AttributeValue => ({ L: changes.map(stateChangeValue) });

/**
 * A history cut to its bound: the first `HISTORY_KEPT.first` entries and the last `last`, with the
 * entries dropped between them added to `omitted` (the record's `historyOmitted`).
 */
export const boundedHistory = (
  changes: readonly StateChange[],
  omitted = 0,
  last: number = HISTORY_KEPT.last,
): { readonly history: readonly StateChange[]; readonly omitted: number } => {
  const { first } = HISTORY_KEPT;
  if (changes.length <= first + last) return { history: changes, omitted };
  return {
    history: [...changes.slice(0, first), ...changes.slice(changes.length - last)],
    omitted: omitted + changes.length - first - last,
  };
};

/**
 * The most of the service's `recipients` answer a record keeps, as JSON text (UTF-8 bytes). Far
 * below DynamoDB's 400 KB item limit with the record's own recipients beside it, so storing a
 * result always fits.
 */
export const MAX_STORED_RECIPIENTS_CHARS = 32_768;
/**
 * What the `result` map keeps at most, in UTF-8 bytes, of the service's `recipients` answer (the
 * whole answer, up to {@link MAX_STORED_RECIPIENTS_CHARS}, is `resultRecipients` beside it), status
 * text and sender ID (the service's are at most 11 characters). `result` is projected into the
 * state index, whose entry is rewritten on each change of state, so it stays a few hundred bytes:
 * with its names and amounts, at most {@link MAX_RESULT_BYTES}.
 */
const RESULT_BUDGET_BYTES = { recipients: 250, message: 100, senderId: 20 } as const;
/**
 * The most the `result` map of a record weighs by DynamoDB's reckoning (names and values),
 * whatever the service answered: what each state index entry carries of the send's answer.
 */
export const MAX_RESULT_BYTES = 512;

/** The longest start of `text` that fits `maxBytes` of UTF-8, cut between characters. */
const utf8Prefix = (text: string, maxBytes: number): string => {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let prefix = '';
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > maxBytes) break;
    prefix += char;
    bytes += size;
  }
  return prefix;
};

/**
 * The service's `recipients` as stored: as returned when its JSON fits `maxBytes` (UTF-8), else
 * `{ truncated: true, count, first }` with as many leading entries as fit.
 */
export const storedRecipients = (recipients: unknown, maxBytes = MAX_STORED_RECIPIENTS_CHARS): string => {
  const whole = JSON.stringify(recipients) ?? 'null';
  if (Buffer.byteLength(whole) <= maxBytes) return whole;
  const entries = Array.isArray(recipients) ? recipients : [];
  const first: unknown[] = [];
  let length = 64;
  for (const entry of entries) {
    const size = Buffer.byteLength(JSON.stringify(entry) ?? 'null');
    if (length + size + 1 > maxBytes) break;
    first.push(entry);
    length += size + 1;
  }
  return JSON.stringify({ truncated: true, count: Array.isArray(recipients) ? recipients.length : null, first });
};

/**
 * The attributes of a send's answer: `result`, small (at most {@link MAX_RESULT_BYTES}: the amounts,
 * the status text and sender ID cut short, the recipients' answer cut to its first entries, in the
 * truncated form a version before this one reads too), and `resultRecipients`, the recipients'
 * answer whole (bounded by {@link MAX_STORED_RECIPIENTS_CHARS}), which no index holds.
 */
export const resultAttributes = (result: SendResult) => ({
  result: map({
    deducted: num(result.deducted),
    remainingBalance: result.remainingBalance === undefined ? undefined : num(result.remainingBalance),
    message: str(utf8Prefix(result.message, RESULT_BUDGET_BYTES.message)),
    senderId: str(utf8Prefix(result.senderId, RESULT_BUDGET_BYTES.senderId)),
    recipients: str(storedRecipients(result.recipients, RESULT_BUDGET_BYTES.recipients)),
  }),
  resultRecipients: str(storedRecipients(result.recipients)),
});

export const dismissalValue = (dismissal: Dismissal) =>
  map({ by: str(dismissal.by), at: str(dismissal.at), reason: str(dismissal.reason), from: str(dismissal.from) });

/** The full item of a message record. */
export const messageItem = (record: MessageRecord): Item =>
  compact({
    ...messageKey(record.id),
    kind: str(ItemKind.Message),
    id: str(record.id),
    route: str(record.route),
    dedupeKey: str(record.dedupeKey),
    lane: str(record.lane),
    index: num(record.index),
    part: num(record.part),
    parts: num(record.parts),
    text: str(record.text),
    to: strList(record.to),
    senderId: record.senderId === undefined ? undefined : str(record.senderId),
    encoding: str(record.encoding),
    characters: num(record.characters),
    segments: num(record.segments),
    delivery: str(record.delivery),
    notice: record.notice === undefined ? undefined : str(record.notice),
    incident: record.incident === undefined ? undefined : str(record.incident),
    critical: record.critical === true ? bool(true) : undefined,
    state: str(record.state),
    attempts: num(record.attempts),
    redrives: num(record.redrives),
    createdAt: str(record.createdAt),
    updatedAt: str(record.updatedAt),
    nextAttemptAt: record.nextAttemptAt === undefined ? undefined : str(record.nextAttemptAt),
    [DUE_AT]: record.state === MessageState.Pending ? str(record.nextAttemptAt ?? record.updatedAt) : undefined,
    claimedAt: record.claimedAt === undefined ? undefined : str(record.claimedAt),
    wokenAt: record.wokenAt === undefined ? undefined : str(record.wokenAt),
    claimToken: record.claimToken === undefined ? undefined : str(record.claimToken),
    reason: record.reason === undefined ? undefined : str(record.reason),
    provider: record.provider === undefined ? undefined : str(record.provider),
    failoverFrom: record.failoverFrom === undefined ? undefined : str(record.failoverFrom),
    failoverReason: record.failoverReason === undefined ? undefined : str(record.failoverReason),
    lastError: record.lastError === undefined ? undefined : lastErrorValue(record.lastError),
    ...(record.result === undefined ? {} : resultAttributes(record.result)),
    sentAt: record.sentAt === undefined ? undefined : str(record.sentAt),
    digestId: record.digestId === undefined ? undefined : str(record.digestId),
    digestOf: record.digestOf === undefined ? undefined : strList(record.digestOf),
    dismissal: record.dismissal === undefined ? undefined : dismissalValue(record.dismissal),
    history: historyValue(record.history),
    historyOmitted: record.historyOmitted === undefined ? undefined : num(record.historyOmitted),
    [TABLE.timeToLive]: num(record.expiresAt),
  });

/**
 * The message record of an item. Optional fields are left out rather than set to `undefined`, so
 * records compare cleanly and serialise without noise.
 */
export const messageFromItem = (item: Item): MessageRecord => {
  const where = item[TABLE.partitionKey]?.S ?? '(no key)';
  const read = new ItemReader(item, where);
  if (read.optStr('kind') !== ItemKind.Message) throw corruptRecord(where, 'not a message record');
  const state = read.str('state');
  if (!STATES.has(state)) throw corruptRecord(where, `unknown state ${state}`);
  const delivery = read.str('delivery');
  if (!DELIVERIES.has(delivery)) throw corruptRecord(where, `unknown delivery ${delivery}`);

  const lastErrorRead = read.optMap('lastError');
  const resultRead = read.optMap('result');
  const dismissalRead = read.optMap('dismissal');
  const notice = read.optStr('notice');
  if (notice !== undefined && !NOTICES.has(notice)) throw corruptRecord(where, `unknown notice ${notice}`);
  const lane = read.optStr('lane') ?? LANES.unmarked;
  if (!LANE_NAMES.has(lane)) throw corruptRecord(where, `unknown lane ${lane}`);
  const optional = {
    senderId: read.optStr('senderId'),
    notice: notice as NoticeKind | undefined,
    incident: read.optStr('incident'),
    critical: read.optBool('critical') === true ? (true as const) : undefined,
    nextAttemptAt: read.optStr('nextAttemptAt'),
    claimedAt: read.optStr('claimedAt'),
    wokenAt: read.optStr('wokenAt'),
    claimToken: read.optStr('claimToken'),
    reason: read.optStr('reason'),
    provider: read.optStr('provider'),
    failoverFrom: read.optStr('failoverFrom'),
    failoverReason: read.optStr('failoverReason'),
    lastError: lastErrorRead && lastErrorFrom(lastErrorRead),
    result: resultRead && {
      deducted: resultRead.num('deducted'),
      ...defined({ remainingBalance: resultRead.optNum('remainingBalance') }),
      message: resultRead.str('message'),
      senderId: resultRead.str('senderId'),
      // A record written before `resultRecipients` keeps the whole answer in `result`.
      recipients: parseJson(read.optStr('resultRecipients') ?? resultRead.str('recipients'), where),
    },
    sentAt: read.optStr('sentAt'),
    digestId: read.optStr('digestId'),
    digestOf: item['digestOf'] === undefined ? undefined : read.strList('digestOf'),
    dismissal: dismissalRead && dismissalFrom(dismissalRead, where),
  };
  return {
    id: read.str('id'),
    route: read.str('route'),
    dedupeKey: read.str('dedupeKey'),
    lane: lane as Lane,
    index: read.num('index'),
    part: read.num('part'),
    parts: read.num('parts'),
    text: read.str('text'),
    to: read.strList('to'),
    encoding: read.str('encoding'),
    characters: read.num('characters'),
    segments: read.num('segments'),
    delivery: delivery as DeliveryPolicy,
    state: state as MessageState,
    attempts: read.num('attempts'),
    redrives: read.num('redrives'),
    createdAt: read.str('createdAt'),
    updatedAt: read.str('updatedAt'),
    expiresAt: read.num(TABLE.timeToLive),
    ...defined(optional),
    history: (read.optMapList('history') ?? []).map((entry) => stateChangeFrom(entry, where)),
    ...defined({ historyOmitted: read.optNum('historyOmitted') }),
  };
};

const lastErrorFrom = (read: ItemReader): LastError => ({
  name: read.str('name'),
  ...defined({ status: read.optNum('status'), delivery: read.optStr('delivery') }),
  message: read.str('message'),
});

const dismissalFrom = (read: ItemReader, where: string): Dismissal => {
  const from = read.str('from');
  if (!STATES.has(from)) throw corruptRecord(where, `unknown state ${from} in dismissal`);
  return { by: read.str('by'), at: read.str('at'), reason: read.str('reason'), from: from as MessageState };
};

const stateChangeFrom = (read: ItemReader, where: string): StateChange => {
  const state = read.str('state');
  if (!STATES.has(state)) throw corruptRecord(where, `unknown state ${state} in history`);
  const error = read.optMap('error');
  return {
    at: read.str('at'),
    state: state as MessageState,
    ...defined({
      reason: read.optStr('reason'),
      error: error && lastErrorFrom(error),
      provider: read.optStr('provider'),
    }),
  };
};

const defined = <T extends Record<string, unknown>>(fields: T): Partial<T> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;

const parseJson = (text: string, where: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corruptRecord(where, 'result.recipients is not JSON', { cause: error });
  }
};
