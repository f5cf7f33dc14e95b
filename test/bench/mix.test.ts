import { describe, expect, it } from 'vitest';
import { apiGatewayEvent, pendingMessages, streamBatches, webhookMix } from '../../bench/harness';
import { checkMixParts } from '../../bench/provider-calls';

describe('the provider-calls mix', () => {
  it('has 20 alert groups, 10 orders, 5 split messages, 5 duplicates and 5 filtered', () => {
    const mix = webhookMix('t');
    expect(mix.requests).toHaveLength(45);
    expect(mix.requests.filter((request) => request.route === 'alerts')).toHaveLength(30);
    expect(mix.requests.filter((request) => request.route === 'orders')).toHaveLength(10);
    expect(mix.requests.filter((request) => request.route === 'digest')).toHaveLength(5);
    expect(new Set(mix.requests).size).toBe(40);
    expect(mix.optimalCalls).toBe(20 + 10 + 5 * 2);
  });

  it('plans as many SMS parts per webhook as the optimum assumes', () => {
    expect(() => checkMixParts('t')).not.toThrow();
  });

  it('builds API Gateway events and stream batches the handlers accept', () => {
    const [first] = webhookMix('t').requests;
    const event = apiGatewayEvent(first!, 1_700_000_000_000);
    expect(event.pathParameters).toEqual({ route: 'alerts' });
    expect(event.requestContext.timeEpoch).toBe(1_700_000_000_000);
    expect(event.body).toBe(first!.body);

    const images = Array.from({ length: 23 }, (_, index) => ({ pk: { S: `MSG#${index}` }, sk: { S: 'MSG' }, id: { S: String(index).padStart(3, '0') }, state: { S: 'PENDING' } }));
    const pending = pendingMessages([...images, { pk: { S: 'DEDUPE#a#b' }, sk: { S: 'DEDUPE' } }, { ...images[0]!, state: { S: 'DROPPED' } }]);
    expect(pending).toHaveLength(23);
    const batches = streamBatches(pending, 10);
    expect(batches.map((batch) => batch.Records.length)).toEqual([10, 10, 3]);
    expect(batches[0]!.Records[0]!.eventName).toBe('INSERT');
    expect(batches[0]!.Records[0]!.dynamodb?.NewImage?.['id']).toEqual({ S: '000' });
  });
});
