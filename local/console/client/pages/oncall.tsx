/** On call: per schedule, who is on call now and until when, the overrides, the next handoffs. */
import type { ScheduleView } from '../../contract';
import { useApi } from '../data';
import { duration, fullTime } from '../format';
import { ErrorBox, Fields } from '../ui';

export function OnCallPage() {
  const { data, error: failed, reload } = useApi('GET /oncall', {}, { pollMs: 30_000 });
  const schedules = data?.schedules ?? null;
  const error = failed?.message ?? null;
  return (
    <div class="page oncall">
      <ErrorBox error={error} onRetry={reload} />
      {schedules === null ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : schedules.length === 0 ? (
        <p class="empty">
          No <code>schedules</code> in the config.
        </p>
      ) : (
        <div class="cards">
          {schedules.map((schedule) => (
            <ScheduleCard key={schedule.name} schedule={schedule} />
          ))}
        </div>
      )}
    </div>
  );
}

const who = (person: { name: string; number: string }): string => `${person.name} (${person.number})`;

function ScheduleCard({ schedule }: { schedule: ScheduleView }) {
  const now = schedule.now;
  return (
    <article class="card" data-testid="schedule-card" data-schedule={schedule.name}>
      <header class="card-head">
        <h2>{schedule.name}</h2>
        <span class="tag">{schedule.timeZone}</span>
        {schedule.notifyHandoff ? <span class="tag">handoff SMS</span> : null}
      </header>
      <Fields
        items={[
          [
            'On call now',
            now === null ? (
              'nobody'
            ) : (
              <span data-testid="oncall-now">
                {who(now.person)} until{' '}
                <span title={now.until === null ? undefined : fullTime(now.until)} data-testid="oncall-until">
                  {now.untilLocal ?? 'further notice'}
                </span>
                {now.override === null
                  ? ''
                  : ` (override${now.override.reason === '' ? '' : `: ${now.override.reason}`})`}
              </span>
            ),
          ],
          ['Rotation', `${schedule.rotation.join(' → ')}, ${duration(schedule.every)} each`],
        ]}
      />
      <h3>Next handoffs</h3>
      {schedule.handoffs.length === 0 ? (
        <p class="muted">None: nobody else is ever on call.</p>
      ) : (
        <ol data-testid="handoffs">
          {schedule.handoffs.map((handoff) => (
            <li key={handoff.at} data-testid="handoff">
              <span title={fullTime(handoff.at)}>{handoff.atLocal}</span> → {who(handoff.person)}
            </li>
          ))}
        </ol>
      )}
      <h3>Overrides</h3>
      {schedule.overrides.length === 0 ? (
        <p class="muted">None in force or ahead.</p>
      ) : (
        <ul data-testid="overrides">
          {schedule.overrides.map((override) => (
            <li key={`${override.from}-${override.person.name}`} data-testid="override">
              {who(override.person)} from <span title={fullTime(override.from)}>{override.fromLocal}</span> until{' '}
              <span title={fullTime(override.until)}>{override.untilLocal}</span>
              {override.reason === '' ? '' : `: ${override.reason}`}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
