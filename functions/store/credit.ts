import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str } from './attributes';
import type { StoreTable } from './store-table';
import { type ConditionalUpdate, writeIf, type WriteIfOptions, type WriteOutcome } from './write';
import { StoreError } from './errors';
import { balanceKey, ItemKind, MAIN_PROVIDER } from './keys';

/*
 * The projected balance: what `balance.reserve` is enforced against, kept on the balance item with
 * two counters, so that every sender (Lambda containers, the local runtime) takes its estimate from
 * the same number with one conditional write:
 * - `projected`: the credits the relay believes are left once every send in flight is paid;
 * - `committed`: everything taken from it so far (estimates in flight, then the actual amounts);
 * - `charged`: the part of `committed` that is settled (sent, or kept as maybe sent);
 * - `inFlight`: each unsettled reservation's estimate by the claim token of its send, so that a
 *   reservation is settled once, and the one of a sender that died can be settled by the sweeper.
 * A balance read rebases `projected` on `balance + charged as it was before the read - committed
 * now` (see `rebaseCredit`); a send's answer moves it only when it proves it wrong (see
 * `observeSentCredit`). Between them the counters follow the relay's own sends exactly (each
 * estimate taken, then corrected by the actual `deducted`).
 */

/** What `reserveCredit` takes. */
export interface CreditRequest {
  /** The provider whose credit is taken. @default 'main' */
  readonly provider?: string;
  /** The send's estimated cost. */
  readonly estimate: number;
  /** Take it only if at least this much stays projected (`balance.reserve`); absent: take it whatever is left. */
  readonly floor?: number;
  /** The send's claim token: the reservation's name until it is settled. */
  readonly token: string;
}

/** What `reserveCredit` did. */
export type CreditReservation =
  | {
      readonly reserved: true;
      /** What stays projected after this estimate. */
      readonly projected: number;
      /** `charged` when the estimate was taken: what the send's own answer is compared with (see `observeSentCredit`). */
      readonly basis: number;
    }
  | {
      readonly reserved: false;
      /** The projected balance that refused it; `undefined` when there is none yet (no balance observed). */
      readonly projected: number | undefined;
    };

/** What `settleCredit` records for a reservation. */
export interface CreditSettlement {
  /** The provider whose credit was taken. @default 'main' */
  readonly provider?: string;
  /** The claim token the reservation was taken under. */
  readonly token: string;
  /** The estimate `reserveCredit` took. */
  readonly estimate: number;
  /**
   * What the send is taken to have cost: the service's `deducted` when sent, 0 when it certainly
   * did not go out (the estimate is given back), the estimate itself when it may have gone out.
   */
  readonly charged: number;
}

/** What `rebaseCredit` takes. */
export interface CreditBasis {
  /** The provider whose balance was read. @default 'main' */
  readonly provider?: string;
  /** A balance read from the SMS service. */
  readonly balance: number;
  /** `charged` read before the service produced `balance` (from `getBalanceState`). */
  readonly basis: number;
  /** When the balance was read: kept as `rebasedAt`. */
  readonly now?: Date;
}

const finite = (name: string, value: number): void => {
  if (!Number.isFinite(value)) throw new StoreError(`${name} must be a finite number, got ${value}`);
};

/** Credits are decimal; floating-point sums are cut to micro-credits so the counters do not drift. */
const credits = (value: number): number => Math.round(value * 1e6) / 1e6;

type BalanceUpdate = Omit<ConditionalUpdate, 'Key'>;

/** One conditional update of the balance item (see `writeIf`). */
const writeBalance = async (
  table: StoreTable,
  input: BalanceUpdate,
  options?: WriteIfOptions,
  provider: string = MAIN_PROVIDER,
): Promise<WriteOutcome> => await writeIf(table, { Key: balanceKey(provider), ...input }, options);

/** One conditional update of the balance item: the item after it (with `ReturnValues`), `undefined` when its condition refused it. */
const updateBalance = async (
  table: StoreTable,
  input: BalanceUpdate,
  provider: string = MAIN_PROVIDER,
): Promise<Item | undefined> => {
  const outcome = await writeBalance(table, input, undefined, provider);
  return outcome.applied ? outcome.item : undefined;
};

/**
 * Takes a send's estimate from the projected balance with one conditional update, `projected -
 * estimate` only while `projected >= floor + estimate`: of any number of concurrent senders, only
 * as many as the projected balance pays for get a reservation. Without a `floor` (a critical route)
 * the estimate is taken whatever is left, so normal routes see what critical ones spend.
 *
 * @example
 * ```typescript
 * const taken = await store.reserveCredit({ estimate: 20, floor: config.balance.reserve });
 * if (!taken.reserved) return park(`would leave ${taken.projected - 20}`);
 * ```
 */
export const reserveCredit = async (
  table: StoreTable,
  { estimate, floor, token, provider }: CreditRequest,
): Promise<CreditReservation> => {
  finite('estimate', estimate);
  if (estimate < 0) throw new StoreError(`estimate must be ≥ 0, got ${estimate}`);
  if (floor !== undefined) finite('floor', floor);
  const outcome = await writeBalance(
    table,
    {
      UpdateExpression:
        'SET #projected = #projected - :estimate, #inFlight.#token = :estimate ADD #committed :estimate',
      ConditionExpression: floor === undefined ? 'attribute_exists(#projected)' : '#projected >= :need',
      ExpressionAttributeNames: {
        '#projected': 'projected',
        '#committed': 'committed',
        '#inFlight': 'inFlight',
        '#token': token,
      },
      ExpressionAttributeValues: {
        ':estimate': num(estimate),
        ...(floor === undefined ? {} : { ':need': num(credits(floor + estimate)) }),
      },
      ReturnValues: 'ALL_NEW',
    },
    { current: true },
    provider,
  );
  if (!outcome.applied) {
    // The balance item that refused it, with the refusal on AWS (read after it locally).
    return { reserved: false, projected: new ItemReader(outcome.current ?? {}, 'BALANCE').optNum('projected') };
  }
  const read = new ItemReader(outcome.item, 'BALANCE');
  return { reserved: true, projected: read.optNum('projected') ?? 0, basis: read.optNum('charged') ?? 0 };
};

/**
 * Settles a reservation of `reserveCredit`: `projected` gets back `estimate - charged` (the estimate's
 * error once the actual cost is known, the whole estimate for a send that certainly did not go out)
 * and `charged` grows by `charged`, by one update of counters (ADD), so concurrent settlements all
 * count.
 *
 * @example
 * ```typescript
 * await store.settleCredit({ estimate: 20, charged: result.deducted });
 * ```
 */
export const settleCredit = async (
  table: StoreTable,
  { token, estimate, charged, provider }: CreditSettlement,
): Promise<void> => {
  finite('estimate', estimate);
  finite('charged', charged);
  await settleReservation(table, { token, estimate, charged, provider });
};

/**
 * The settling update: conditional on the reservation still being in flight, so it counts once
 * (a sender and the sweeper settling the same send); `undefined` when it was not (or is gone),
 * else the balance item after it.
 */
const settleReservation = async (
  table: StoreTable,
  { token, estimate, charged, provider }: CreditSettlement,
): Promise<Item | undefined> => {
  const back = credits(estimate - charged);
  return await updateBalance(
    table,
    {
      UpdateExpression: 'ADD #projected :back, #committed :forward, #charged :charged REMOVE #inFlight.#token',
      ConditionExpression: 'attribute_exists(#inFlight.#token)',
      ExpressionAttributeNames: {
        '#projected': 'projected',
        '#committed': 'committed',
        '#charged': 'charged',
        '#inFlight': 'inFlight',
        '#token': token,
      },
      ExpressionAttributeValues: { ':back': num(back), ':forward': num(-back), ':charged': num(charged) },
      ReturnValues: 'ALL_NEW',
    },
    provider,
  );
};

/**
 * Settles the reservation of a send whose sender stopped (its record left in `SENDING`) as maybe
 * sent: its estimate stays taken until a balance read shows what it cost. Nothing when that send
 * took no reservation or it was settled already.
 *
 * @example
 * ```typescript
 * await store.keepStaleCredit({ token: record.claimToken });
 * ```
 */
export const keepStaleCredit = async (
  table: StoreTable,
  { token, provider = MAIN_PROVIDER }: { readonly token: string; readonly provider?: string },
): Promise<void> => {
  const state = await table.client.send(
    new GetItemCommand({
      TableName: table.tableName,
      Key: balanceKey(provider),
      ConsistentRead: true,
      ProjectionExpression: '#inFlight.#token',
      ExpressionAttributeNames: { '#inFlight': 'inFlight', '#token': token },
    }),
  );
  const estimate = state.Item?.['inFlight']?.M?.[token]?.N;
  if (estimate === undefined) return;
  await settleReservation(table, { token, estimate: Number(estimate), charged: Number(estimate), provider });
};

/**
 * Rebases the projected balance on a balance read from the SMS service: `projected = balance + basis
 * - committed`, where `basis` is `charged` as read before the service produced `balance`. Every send
 * settled since then is subtracted (the balance cannot show it), and every send still in flight
 * keeps its estimate; a send the balance already shows and that was settled after `basis` was read
 * counts twice, which errs on the side of parking, and lasts until the next observation. An
 * observation on an older basis than the one in place is ignored (`false`): it knows less.
 *
 * @example
 * ```typescript
 * const { charged } = await store.getBalanceState();
 * const { balance } = await sms.getBalance();
 * await store.rebaseCredit({ balance, basis: charged ?? 0 });
 * ```
 */
export const rebaseCredit = async (
  table: StoreTable,
  { balance, basis, now = table.clock(), provider }: CreditBasis,
): Promise<boolean> => {
  finite('balance', balance);
  finite('basis', basis);
  const item = await updateBalance(
    table,
    {
      UpdateExpression:
        'SET #projected = :anchor - if_not_exists(#committed, :zero), #basis = :basis, #rebasedAt = :now, #kind = :kind, #inFlight = if_not_exists(#inFlight, :none)',
      ConditionExpression: 'attribute_not_exists(#basis) OR #basis <= :basis',
      ExpressionAttributeNames: {
        '#projected': 'projected',
        '#committed': 'committed',
        '#basis': 'creditBasis',
        '#rebasedAt': 'rebasedAt',
        '#kind': 'kind',
        '#inFlight': 'inFlight',
      },
      ExpressionAttributeValues: {
        ':none': { M: {} },
        ':kind': str(ItemKind.Balance),
        ':now': str(now.toISOString()),
        ':anchor': num(credits(balance + basis)),
        ':zero': num(0),
        ':basis': num(basis),
      },
    },
    provider,
  );
  return item !== undefined;
};

/** A send's answer for `observeSentCredit`. */
export interface SentCredit {
  /** The provider that sent. @default 'main' */
  readonly provider?: string;
  /** The service's `remainingBalance`. */
  readonly balance: number;
  /** The service's `deducted`. */
  readonly deducted: number;
  /** The send's reservation, when it took one: its claim token, estimate and `basis`. */
  readonly reservation?: { readonly token: string; readonly estimate: number; readonly basis: number };
}

/**
 * Applies a send's answer to the projected balance: the reservation is settled with the actual
 * `deducted` (see `settleCredit`), then the answer's `remainingBalance` moves the projected balance
 * when it proves it wrong:
 * - up to `remainingBalance + basis + deducted - committed` when that is higher (a top-up): every
 *   send reserved since the reservation is subtracted, sends settled before it are in the answer,
 *   so this never exceeds what is truly left; written only while `committed` is unchanged;
 * - down to `remainingBalance` when that is lower (credit spent outside the relay, from the
 *   dashboard or another application on the same account).
 * With the relay the only spender and no top-up, neither applies: the counters are exact.
 *
 * @example
 * ```typescript
 * await store.observeSentCredit({ balance: result.remainingBalance, deducted: result.deducted, reservation });
 * ```
 */
export const observeSentCredit = async (
  table: StoreTable,
  { balance, deducted, reservation, provider }: SentCredit,
): Promise<void> => {
  finite('balance', balance);
  finite('deducted', deducted);
  if (reservation !== undefined) {
    const after = await settleReservation(table, {
      token: reservation.token,
      estimate: reservation.estimate,
      charged: deducted,
      provider,
    });
    if (after === undefined) return;
    const read = new ItemReader(after, 'BALANCE');
    const projected = read.optNum('projected');
    const committed = read.optNum('committed') ?? 0;
    const raised = credits(balance + reservation.basis + deducted - committed);
    if (projected !== undefined && raised > projected) {
      await updateBalance(
        table,
        {
          UpdateExpression: 'SET #projected = :raised',
          ConditionExpression: '#committed = :committed AND #projected < :raised',
          ExpressionAttributeNames: { '#projected': 'projected', '#committed': 'committed' },
          ExpressionAttributeValues: { ':raised': num(raised), ':committed': num(committed) },
        },
        provider,
      );
      return;
    }
  }
  await updateBalance(
    table,
    {
      UpdateExpression: 'SET #projected = :balance',
      ConditionExpression: '#projected > :balance',
      ExpressionAttributeNames: { '#projected': 'projected' },
      ExpressionAttributeValues: { ':balance': num(balance) },
    },
    provider,
  );
};

/**
 * Credit reservations against the projected balance: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const creditOperations = (table: StoreTable) => ({
  /** Takes a send's estimate from the projected balance, conditional on keeping `floor`. See {@link reserveCredit}. */
  reserveCredit: async (request: CreditRequest): Promise<CreditReservation> => await reserveCredit(table, request),
  /** Corrects a reservation with what the send is taken to have cost. See {@link settleCredit}. */
  settleCredit: async (settlement: CreditSettlement): Promise<void> => await settleCredit(table, settlement),
  /** Rebases the projected balance on a balance the service reported. See {@link rebaseCredit}. */
  rebaseCredit: async (basis: CreditBasis): Promise<boolean> => await rebaseCredit(table, basis),
  /** Settles the reservation of a sender that stopped as maybe sent. See {@link keepStaleCredit}. */
  keepStaleCredit: async (stale: { readonly token: string; readonly provider?: string }): Promise<void> =>
    await keepStaleCredit(table, stale),
  /** Settles a sent message's reservation and checks the projected balance against its answer. See {@link observeSentCredit}. */
  observeSentCredit: async (sent: SentCredit): Promise<void> => await observeSentCredit(table, sent),
});
