import type { SourceName } from '../sources/registry';

/** How a webhook names its incident (a template) and says it resolved (a condition). */
export interface IncidentRule {
  readonly key: string;
  readonly resolved: string;
}

/**
 * The sources that know an alert that resolves, and how: Alertmanager and Grafana by group key and
 * `status`; PagerDuty, Sentry, Uptime Kuma and CloudWatch alarms over SNS by their own incident id
 * and state. A route of another source pages only with its own `incident:`.
 */
export const INCIDENT_DEFAULTS: Readonly<Partial<Record<SourceName, IncidentRule>>> = {
  alertmanager: { key: '{{ groupKey }}', resolved: "status == 'resolved'" },
  grafana: { key: '{{ groupKey }}', resolved: "status == 'resolved'" },
  pagerduty: { key: '{{ event.data.id }}', resolved: "event.event_type == 'incident.resolved'" },
  sentry: { key: '{{ data.metric_alert.id | default: data.issue.id }}', resolved: "action == 'resolved'" },
  'uptime-kuma': { key: '{{ monitor.id }}', resolved: 'heartbeat.status == 1' },
  sns: {
    key: '{{ MessageJson.AlarmArn | default: MessageJson.AlarmName }}',
    resolved: "MessageJson.NewStateValue == 'OK'",
  },
};
