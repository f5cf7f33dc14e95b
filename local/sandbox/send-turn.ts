import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxState } from './state';
import type { SandboxFault } from './types';

/** A fault that answers (not a delay): a status with its text, or a connection reset. */
export type AnsweringFault = Exclude<SandboxFault, { kind: 'delay' }>;

/** Writes a failing answer in a provider's own shape (plain text, a JSON error…). */
export type FailureWriter = (
  response: ServerResponse,
  status: number,
  text: string,
  headers: Readonly<Record<string, string>>,
) => void;

/**
 * Answers `fault` as a provider would: a reset ends the connection (what a crashed upstream or a
 * dropped load balancer looks like, not a polite close); a status goes out through `write`, with
 * `Retry-After` when the fault has one.
 */
export function answerFault(
  request: IncomingMessage,
  response: ServerResponse,
  fault: AnsweringFault,
  write: FailureWriter,
): void {
  if (fault.kind === 'reset') {
    request.socket.resetAndDestroy();
    return;
  }
  const text = fault.error ?? `Sandbox fault: ${fault.status} ${STATUS_CODES[fault.status] ?? 'Error'}`;
  write(
    response,
    fault.status,
    text,
    fault.retryAfter === undefined ? {} : { 'Retry-After': String(fault.retryAfter) },
  );
}

/**
 * What every sandbox does before it delivers a send, after authentication (so an unauthenticated
 * request never uses up a fault): the rate (429 past it), then the next queued fault (a delay
 * waits first). `undefined` when the request has been answered; otherwise the fault to answer with
 * once the send is delivered (`deliver: true`: sent, but the client is told otherwise), if any.
 */
export async function takeSendTurn(
  {
    request,
    response,
    state,
    signal,
  }: {
    readonly request: IncomingMessage;
    readonly response: ServerResponse;
    readonly state: SandboxState;
    readonly signal: AbortSignal;
  },
  write: FailureWriter,
): Promise<{ readonly afterDelivery: AnsweringFault | undefined } | undefined> {
  if (!state.admitSend()) {
    answerFault(request, response, { kind: 'status', status: 429, retryAfter: 1, error: 'Too many requests' }, write);
    return undefined;
  }
  const fault = state.faults.take();
  if (fault?.kind === 'delay') await sleep(fault.ms, undefined, { signal });
  const failure = fault?.kind === 'delay' ? undefined : fault;
  if (failure !== undefined && failure.deliver !== true) {
    answerFault(request, response, failure, write);
    return undefined;
  }
  return { afterDelivery: failure };
}
