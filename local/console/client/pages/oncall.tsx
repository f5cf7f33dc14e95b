/**
 * On call, the on-call home: the open incidents with Acknowledge (as `sms-relay incidents` and
 * `ack`), and per schedule who is on call now and until when, the overrides, the next handoffs and
 * an Override form (as `sms-relay oncall` and `oncall override`).
 */
import { useState } from 'preact/hooks';
import type { IncidentView, ScheduleView } from '../../contract';
import { api, errorText } from '../api';
import { useApi } from '../data';
import { duration } from '../format';
import { formatTime } from '../../../../functions/core/time-format';
import { ErrorBox, Fields } from '../ui';

/** How often On call reads again: open incidents change as people acknowledge. */
const ONCALL_POLL_MS = 10_000;

export function OnCallPage() {
  const { data, error: failed, reload } = useApi('GET /oncall', {}, { pollMs: ONCALL_POLL_MS });
  const schedules = data?.schedules ?? null;
  const error = failed?.message ?? null;
  return (
    <div class="page oncall">
      <OpenIncidents />
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
            <ScheduleCard key={schedule.name} schedule={schedule} onChanged={reload} />
          ))}
        </div>
      )}
    </div>
  );
}

const who = (person: { name: string; number: string }): string => `${person.name} (${person.number})`;

/** The open incidents, oldest first, each with its story so far and an Acknowledge button. */
function OpenIncidents() {
  const { data, error, reload } = useApi('GET /incidents', {}, { pollMs: ONCALL_POLL_MS, keep: true });
  return (
    <section class="panel" data-testid="open-incidents" aria-live="polite">
      <header class="panel-head">
        <h2>Open incidents</h2>
      </header>
      <ErrorBox error={error?.message ?? null} onRetry={reload} />
      {data === null ? null : data.incidents.length === 0 ? (
        <p class="muted">None: nobody is being paged.</p>
      ) : (
        <ul class="plain incidents">
          {data.incidents.map((incident) => (
            <OpenIncident key={incident.id} incident={incident} onDone={reload} />
          ))}
        </ul>
      )}
    </section>
  );
}

function OpenIncident({ incident, onDone }: { incident: IncidentView; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const acknowledge = async () => {
    setBusy(true);
    try {
      const { acknowledged } = await api('POST /incidents/:id/ack', { params: { id: incident.id } });
      setNote(acknowledged ? 'Acknowledged: escalation has stopped.' : 'Already closed.');
      onDone();
    } catch (error) {
      setNote(errorText(error));
    } finally {
      setBusy(false);
    }
  };
  const last = incident.story.at(-1);
  return (
    <li data-testid="open-incident" data-id={incident.id}>
      <p class="break">
        <b>{incident.text}</b>
      </p>
      <p class="muted">
        route {incident.route}, opened {formatTime(incident.openedAt)}, level {incident.level}
        {last === undefined
          ? ''
          : `, last: ${last.line}${last.states.length === 0 ? '' : ` (${last.states.join(', ')})`}`}
        {incident.nextDueAt === null ? ', no step left' : `, next step ${formatTime(incident.nextDueAt)}`}{' '}
        <button
          type="button"
          class="primary"
          disabled={busy}
          data-testid="acknowledge"
          onClick={() => void acknowledge()}
        >
          Acknowledge
        </button>
        {note === null ? null : <span role="status"> {note}</span>}
      </p>
    </li>
  );
}

function ScheduleCard({ schedule, onChanged }: { schedule: ScheduleView; onChanged: () => void }) {
  const now = schedule.now;
  const at = (iso: string): string => formatTime(iso, { in: schedule.timeZone });
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
                <span data-testid="oncall-until">{now.until === null ? 'further notice' : at(now.until)}</span>
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
              {at(handoff.at)} → {who(handoff.person)}
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
              {who(override.person)} from {at(override.from)} until {at(override.until)}
              {override.reason === '' ? '' : `: ${override.reason}`}
            </li>
          ))}
        </ul>
      )}
      <OverrideForm schedule={schedule} onChanged={onChanged} />
    </article>
  );
}

/** Puts someone of the rotation on call for a while, as `sms-relay oncall override`. */
function OverrideForm({ schedule, onChanged }: { schedule: ScheduleView; onChanged: () => void }) {
  const [person, setPerson] = useState(schedule.rotation[0] ?? '');
  const [length, setLength] = useState('8h');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const submit = async () => {
    setBusy(true);
    try {
      await api('POST /oncall/:schedule/override', {
        params: { schedule: schedule.name },
        body: { person, for: length, reason },
      });
      setNote(null);
      setReason('');
      onChanged();
    } catch (error) {
      setNote(errorText(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="override-form"
      data-testid="override-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <label>
        Put
        <select value={person} onChange={(event) => setPerson(event.currentTarget.value)} data-testid="override-person">
          {schedule.rotation.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label>
        on call for
        <input
          value={length}
          size={4}
          onInput={(event) => setLength(event.currentTarget.value)}
          data-testid="override-for"
        />
      </label>
      <label>
        because
        <input value={reason} onInput={(event) => setReason(event.currentTarget.value)} data-testid="override-reason" />
      </label>
      <button type="submit" disabled={busy} data-testid="override-submit">
        Override
      </button>
      {note === null ? null : <span class="error-text"> {note}</span>}
    </form>
  );
}
