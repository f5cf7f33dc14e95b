import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGING } from '../../../functions/core/defaults';
import { ALERT_REQUEST_KEPT_SECONDS } from '../../../functions/store/alert-api';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const DISK = { route: 'og', alias: 'disk-db-01', message: 'Disk full', priority: 'P1', tags: ['db'], now: T0 };

describe("Opsgenie's alerts: recordAlert, findAlert, updateAlert", () => {
  it('keeps an alert once per incident, with the route\u2019s next tiny id, found by id, alias and tiny id', async () => {
    const { store, rawItem } = await newTable(db);
    const first = await store.recordAlert({ ...DISK, incidentId: 'INC1', description: 'at 94 %' });
    expect(first).toEqual({
      route: 'og',
      incidentId: 'INC1',
      alias: 'disk-db-01',
      tinyId: '1',
      message: 'Disk full',
      description: 'at 94 %',
      priority: 'P1',
      tags: ['db'],
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      notes: 0,
    });
    // A second delivery of the same create: the same alert, no new tiny id.
    expect(await store.recordAlert({ ...DISK, incidentId: 'INC1', message: 'other', now: at(1000) })).toEqual(first);
    expect(await store.findAlert('og', 'INC1', 'id')).toEqual(first);
    expect(await store.findAlert('og', 'disk-db-01', 'alias')).toEqual(first);
    expect(await store.findAlert('og', '1', 'tiny')).toEqual(first);
    expect((await rawItem('ALERT#INC1', 'ALERT'))?.expiresAt?.N).toBe(String(T0.getTime() / 1000 + PAGING.keptSeconds));

    // The alias's next alert (after the first closed) takes the alias and the next tiny id.
    const second = await store.recordAlert({ ...DISK, incidentId: 'INC2', now: at(60_000) });
    expect(second.tinyId).toBe('2');
    expect(await store.findAlert('og', 'disk-db-01', 'alias')).toEqual(second);
    expect(await store.findAlert('og', '1', 'tiny')).toEqual(first);
  });

  it('finds nothing of another route, nor an unknown id, alias or tiny id', async () => {
    const { store } = await newTable(db);
    await store.recordAlert({ ...DISK, incidentId: 'INC1' });
    expect(await store.findAlert('other', 'INC1', 'id')).toBeUndefined();
    expect(await store.findAlert('other', 'disk-db-01', 'alias')).toBeUndefined();
    expect(await store.findAlert('og', 'INC9', 'id')).toBeUndefined();
    expect(await store.findAlert('og', 'nope', 'alias')).toBeUndefined();
    expect(await store.findAlert('og', '7', 'tiny')).toBeUndefined();
    // Another route counts its own tiny ids.
    expect((await store.recordAlert({ ...DISK, route: 'other', incidentId: 'INC3' })).tinyId).toBe('1');
  });

  it('changes the message or description and counts notes; false for an alert it does not have', async () => {
    const { store } = await newTable(db);
    await store.recordAlert({ ...DISK, incidentId: 'INC1' });
    expect(await store.updateAlert('INC1', { message: 'Disk 99 %', now: at(1000) })).toBe(true);
    expect(await store.updateAlert('INC1', { description: 'grows', note: true, now: at(2000) })).toBe(true);
    expect(await store.updateAlert('INC1', { note: true, now: at(3000) })).toBe(true);
    expect(await store.findAlert('og', 'INC1', 'id')).toMatchObject({
      message: 'Disk 99 %',
      description: 'grows',
      notes: 2,
      updatedAt: at(3000).toISOString(),
    });
    expect(await store.updateAlert('INC9', { note: true })).toBe(false);
  });
});

describe("Opsgenie's requests: recordAlertRequest, getAlertRequest", () => {
  it('keeps a request a day, for its own route only', async () => {
    const { store, rawItem } = await newTable(db);
    const request = {
      requestId: 'b3f1c2d4-0000-4000-8000-000000000001',
      route: 'og',
      action: 'Close',
      success: false,
      status: 'Alert does not exist',
      processedAt: T0.toISOString(),
    };
    await store.recordAlertRequest(request);
    expect(await store.getAlertRequest('og', request.requestId)).toEqual(request);
    expect(await store.getAlertRequest('other', request.requestId)).toBeUndefined();
    expect(await store.getAlertRequest('og', 'unknown')).toBeUndefined();
    const item = await rawItem(`ALERTREQ#${request.requestId}`, 'REQUEST');
    expect(item?.kind?.S).toBe('alert-request');
    expect(item?.expiresAt?.N).toBe(String(T0.getTime() / 1000 + ALERT_REQUEST_KEPT_SECONDS));
    const created = { ...request, requestId: 'r2', action: 'Create', success: true, alertId: 'INC1', alias: 'disk' };
    await store.recordAlertRequest(created);
    expect(await store.getAlertRequest('og', 'r2')).toEqual(created);
  });
});
