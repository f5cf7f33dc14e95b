/**
 * The runtime's local-only API under `/_relay`: what `sms-relay logs`, `redrive`, `dismiss`,
 * `mute`, `unmute`, `mutes`, `oncall`, `incidents`, `ack` and `circuit` call while a runtime holds
 * the local store (LevelDB admits one process). {@link RELAY_API} is its route map: the runtime's
 * server (`local/runtime/server.ts`) reads each request with its schemas and serves exactly these
 * endpoints, and the CLI's one client (`local/shared/relay-client.ts`) takes its paths, requests and
 * answers from the map's type. These paths, methods and JSON keys are public: scripts call them.
 *
 * Every request carries `Authorization: Bearer <consoleSecret of runtime.json>`; every POST
 * `content-type: application/json`. Errors are `{ "error": "…" }` with a 4xx/5xx status.
 */
import type { DeliveredIncident } from '../../functions/relay/incident-story';
import type { CloseOutcome, Mute, OnCallOverride } from '../../functions/store';
import { answers, type AnswerOfRoute, type RouteCall, type RouteMap, type RouteRequest } from '../http/route-map';
import { type CircuitChange, CircuitRequest } from './circuit-contract';
import type { CircuitView } from './circuit-view';
import {
  AckRequest,
  DismissRequest,
  type DismissResult,
  MuteRequest,
  OverrideRequest,
  CircuitQuery,
  OverridesQuery,
  RecordListQuery,
  type RecordView,
  RedriveRequest,
  type RequeueOutcome,
  UnmuteRequest,
} from './contract';

/** A route of the runtime's config and its `timeZone`, as `GET /routes` lists it. */
export interface RouteZone {
  readonly id: string;
  readonly timeZone: string;
}

/** One schedule's person on call now, as `GET /oncall` lists it: names only, never a number. */
export interface OnCallNowView {
  readonly schedule: string;
  readonly person: string;
  /** ISO-8601 UTC; `null` when nobody else ever takes over (a rotation of one person). */
  readonly until: string | null;
  /** The schedule's time zone, in which `oncall` tells `until`. */
  readonly timeZone: string;
  /** The override's reason (`''` when none was given) when an override put `person` on call; else `null`. */
  readonly overrideReason: string | null;
}

export const RELAY_API = {
  /** `logs`, `redrive`: records newest first (by last change; by creation with `route`); no `limit`: all. */
  'GET /records': { query: RecordListQuery, answer: answers<{ readonly records: RecordView[] }>() },
  /** `redrive`: requeue these ids, each only if still in `from`. */
  'POST /redrive': { body: RedriveRequest, answer: answers<RequeueOutcome>() },
  /** `dismiss`: end records unsent, by ids or by `state` (with `route`, `since`). */
  'POST /dismiss': { body: DismissRequest, answer: answers<DismissResult>() },
  /** `mutes`: the mutes in force. */
  'GET /mutes': { answer: answers<{ readonly mutes: Mute[] }>() },
  /** `mutes`: the routes of the runtime's config and the time zone each tells time in, so the CLI loads no config. */
  'GET /routes': { answer: answers<{ readonly routes: RouteZone[] }>() },
  /** `mute`: a route of the runtime's config, for `forSeconds`. */
  'POST /mutes': { body: MuteRequest, answer: answers<{ readonly mute: Mute }>() },
  /** `unmute`: `unmuted` is false when none was in force. */
  'POST /unmute': { body: UnmuteRequest, answer: answers<{ readonly unmuted: boolean }>() },
  /** `oncall`: the overrides in force of `schedules` (comma-separated). */
  'GET /overrides': { query: OverridesQuery, answer: answers<{ readonly overrides: OnCallOverride[] }>() },
  /** `oncall`: who each schedule of the runtime's config puts on call now, overrides included, in config order. */
  'GET /oncall': { answer: answers<{ readonly oncall: OnCallNowView[] }>() },
  /** `oncall override`: a person of the runtime's config on call for one of its schedules. */
  'POST /overrides': { body: OverrideRequest, answer: answers<{ readonly override: OnCallOverride }>() },
  /** `incidents`: the open incidents, oldest first. */
  'GET /incidents': { answer: answers<{ readonly incidents: DeliveredIncident[] }>() },
  /** `ack`: one of concurrent acknowledgements wins (`closed`). */
  'POST /ack': { body: AckRequest, answer: answers<CloseOutcome>() },
  /** `circuit`: the SMS service's circuit. */
  'GET /circuit': { query: CircuitQuery, answer: answers<{ readonly circuit: CircuitView }>() },
  /** `circuit open --for`, `circuit close`: the circuit before and after. */
  'POST /circuit': { body: CircuitRequest, answer: answers<CircuitChange>() },
} as const satisfies RouteMap;

/** An endpoint of `/_relay`, `'METHOD /path'` without the prefix. */
export type RelayEndpoint = keyof typeof RELAY_API;
/** What `endpoint` answers. */
export type RelayAnswer<E extends RelayEndpoint> = AnswerOfRoute<(typeof RELAY_API)[E]>;
/** What the server's handler of `endpoint` is given, read by its schemas. */
export type RelayRequest<E extends RelayEndpoint> = RouteRequest<(typeof RELAY_API)[E]>;
/** What a client sends to `endpoint`. */
export type RelayCall<E extends RelayEndpoint> = RouteCall<(typeof RELAY_API)[E]>;
