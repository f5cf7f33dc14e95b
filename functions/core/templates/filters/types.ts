import type { FilterImplOptions } from 'liquidjs';

/** `this` inside a LiquidJS filter (LiquidJS exports the type only indirectly). */
export type FilterContext = ThisParameterType<Extract<FilterImplOptions, (...args: never[]) => unknown>>;

/** A filter as registered on the engine. */
export type SmsFilter = (this: FilterContext, value: unknown, ...args: unknown[]) => unknown;

/** What docs/configuration.md (Templates) shows for one filter; every example is checked by the test suite. */
export interface FilterDoc {
  readonly name: string;
  /** How it's called, e.g. `{{ amount | money: 'USD' }}`. */
  readonly usage: string;
  readonly description: string;
  readonly example: { readonly template: string; readonly output: string };
}
