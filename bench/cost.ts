/**
 * `awsCostPer1000Sms`: what AWS charges for 1,000 SMS of one webhook each, from published prices
 * (us-east-1; sources in BENCHMARKS.md) and the quantities measured by the bench: one API Gateway
 * HTTP API request and one ingest invocation per webhook, one sender invocation per SMS (a stream
 * batch of one, the low-traffic case), the measured median durations billed per started ms at the
 * stack's memory sizes, and the DynamoDB units of `dynamoPerSms` (table units as reported, plus the
 * estimated index writes dynalite does not report). The SMS credit itself is not an AWS cost; it is
 * the denominator of `shareOfSmsSpend`.
 */
import { round } from './stats';

export const PRICES = {
  /** Lambda on Arm (the stack's architecture), first 7.5 billion GB-s a month. */
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  /** HTTP API, first 300 million requests a month. */
  httpApiPerMillionRequests: 1.0,
  /** On-demand, Standard table class. */
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
} as const;

/** The sandbox's price of one SMS to one recipient, and the exchange rate assumed (see BENCHMARKS.md). */
export const SMS_PRICE_TZS = 20;
export const TZS_PER_USD = 2_500;

export interface CostInputs {
  readonly ingestMs: number;
  readonly senderMs: number;
  readonly memoryMb: { readonly ingest: number; readonly sender: number };
  /** Per SMS. */
  readonly writeUnits: number;
  readonly readUnits: number;
}

export interface CostLine {
  readonly item: string;
  readonly quantity: string;
  readonly usd: number;
}

const SMS = 1_000;

/** The cost of 1,000 SMS, line by line. */
export function costPer1000Sms({ ingestMs, senderMs, memoryMb, writeUnits, readUnits }: CostInputs): {
  readonly lines: readonly CostLine[];
  readonly usd: number;
  readonly shareOfSmsSpend: number;
} {
  const gbSeconds = (ms: number, mb: number): number => SMS * (Math.max(1, Math.ceil(ms)) / 1000) * (mb / 1024);
  const ingestGbs = gbSeconds(ingestMs, memoryMb.ingest);
  const senderGbs = gbSeconds(senderMs, memoryMb.sender);
  const lines: CostLine[] = [
    { item: 'API Gateway HTTP API requests', quantity: `${SMS}`, usd: (SMS / 1e6) * PRICES.httpApiPerMillionRequests },
    {
      item: 'Lambda requests (ingest + sender)',
      quantity: `${2 * SMS}`,
      usd: ((2 * SMS) / 1e6) * PRICES.lambdaPerMillionRequests,
    },
    {
      item: `Lambda duration, ingest (${Math.ceil(ingestMs)} ms × ${memoryMb.ingest} MB)`,
      quantity: `${round(ingestGbs, 2)} GB-s`,
      usd: ingestGbs * PRICES.lambdaArmPerGbSecond,
    },
    {
      item: `Lambda duration, sender (${Math.ceil(senderMs)} ms × ${memoryMb.sender} MB)`,
      quantity: `${round(senderGbs, 2)} GB-s`,
      usd: senderGbs * PRICES.lambdaArmPerGbSecond,
    },
    {
      item: 'DynamoDB write request units',
      quantity: `${round(SMS * writeUnits)}`,
      usd: ((SMS * writeUnits) / 1e6) * PRICES.dynamoPerMillionWriteUnits,
    },
    {
      item: 'DynamoDB read request units',
      quantity: `${round(SMS * readUnits)}`,
      usd: ((SMS * readUnits) / 1e6) * PRICES.dynamoPerMillionReadUnits,
    },
  ];
  const usd = lines.reduce((sum, line) => sum + line.usd, 0);
  return { lines, usd, shareOfSmsSpend: usd / ((SMS * SMS_PRICE_TZS) / TZS_PER_USD) };
}
