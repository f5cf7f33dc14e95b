import { describe, expect, it } from 'vitest';
import { AWS_TIME_TO_SMS_TARGET, awsPathSteps, awsTimeToSmsSection, pathTotals } from '../../bench/aws-time-to-sms';
import { STREAM } from '../../functions/core/defaults';

describe('time to SMS on AWS, on paper', () => {
  it("meets the targets with the stack's batching window and a reused connection", () => {
    const totals = pathTotals(awsPathSteps());
    expect(totals.p50Ms).toBeLessThanOrEqual(AWS_TIME_TO_SMS_TARGET.p50Ms);
    expect(totals.p99Ms).toBeLessThanOrEqual(AWS_TIME_TO_SMS_TARGET.p99Ms);
  });

  it("counts the stream's batching window in full, as at alert rates", () => {
    const stream = awsPathSteps().find((step) => step.step === 'stream to the sender');
    expect(stream?.p50Ms).toBeGreaterThanOrEqual(STREAM.maxBatchingWindowSeconds * 1_000);
    expect(awsTimeToSmsSection().join('\n')).toContain(`batching window ${STREAM.maxBatchingWindowSeconds} s`);
  });
});
