import { randomUUID } from 'node:crypto';

/** An Alertmanager firing webhook of one DiskAlmostFull alert (the `oncall` route's), as both integration suites post it. */
export function alert(summary: string): string {
  return JSON.stringify({
    receiver: 'sms-oncall',
    status: 'firing',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'DiskAlmostFull' },
        annotations: { summary },
        fingerprint: randomUUID(),
      },
    ],
    groupKey: '{}:{alertname="DiskAlmostFull"}',
    commonLabels: { alertname: 'DiskAlmostFull' },
    commonAnnotations: { summary, oncall_phone: '+255 712 345 678' },
    truncatedAlerts: 0,
  });
}
