import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { RuntimeError } from './errors';

/**
 * Every module of dynalite's that is not its public entry point, in one place. The local store
 * adds `TransactWriteItems` (dynalite.ts) and tests
 * LevelDB's lock (local-store.ts) with dynalite's own internals, which no version promises to
 * keep: so the installed dynalite must be the one these were written and tested against, checked
 * before any of them is loaded.
 */

/** The dynalite release whose private modules the local store uses; package.json pins the same. */
export const PINNED_DYNALITE_VERSION = '4.0.0';

/** dynalite's options that the relay sets; the package ships no TypeScript types. */
export interface DynaliteOptions {
  readonly path?: string;
  readonly createTableMs?: number;
  readonly deleteTableMs?: number;
  readonly updateTableMs?: number;
}

export type AttributeMap = Record<string, unknown>;
export type Callback<T = unknown> = (error: DynaliteError | null | undefined, value?: T) => void;
export interface DynaliteError extends Error {
  readonly statusCode?: number;
  readonly body?: unknown;
}
export type Release = (done?: () => void) => () => void;
export interface ItemDb {
  lock(key: string, exec: (release: Release) => void): void;
  get(key: string, cb: Callback<AttributeMap>): void;
  put(key: string, value: AttributeMap, cb: Callback): void;
}
export interface Table {
  readonly TableName: string;
}
export interface Store {
  readonly options: { readonly maxItemSize: number };
  /** LevelDB; its `close` waits for the operations in flight (dynalite's lifecycle manager). */
  readonly db: { close(cb: (error?: Error | null) => void): void };
  getTable(name: string, cb: Callback<Table>): void;
  getItemDb(name: string): ItemDb;
}
/** The parts of `dynalite/db` used (the module dynalite's `index.js` calls `create` through). */
export interface DbModule {
  create(options: DynaliteOptions): Store;
  validateItem(item: AttributeMap, table: Table): DynaliteError | null | undefined;
  createKey(item: AttributeMap, table: Table): string;
  checkConditional(data: object, existing: AttributeMap | undefined): DynaliteError | null | undefined;
  updateIndexes(store: Store, table: Table, existing: AttributeMap | undefined, item: AttributeMap, cb: Callback): void;
  capacityUnits(item: AttributeMap | undefined, isRead: boolean): number;
  validationError(message: string): DynaliteError;
}
export interface Validations {
  checkTypes(data: object, types: object): Record<string, unknown>;
  checkValidations(data: object, types: object, custom: unknown, store: Store): void;
}
/** The part of `level` (dynalite's own LevelDB binding) used to test the lock. */
export interface LevelDatabase {
  open(): Promise<void>;
  close(): Promise<void>;
}
export type LevelConstructor = new (path: string, options: { readonly valueEncoding: string }) => LevelDatabase;

export interface DynaliteInternals {
  /** dynalite's server factory (its `index.js`). */
  readonly dynalite: (options: DynaliteOptions) => Server;
  readonly db: DbModule;
  readonly validations: Validations;
  readonly putItemRules: { readonly types: object; readonly custom: unknown };
  /** The LevelDB binding dynalite opens its files with (resolved from dynalite's own location). */
  readonly Level: LevelConstructor;
}

/**
 * Fails unless `installed` is the pinned release.
 *
 * @throws {RuntimeError} another dynalite is installed
 */
export function assertPinnedDynalite(installed: unknown): void {
  if (installed === PINNED_DYNALITE_VERSION) return;
  throw new RuntimeError(
    `the local store needs dynalite ${PINNED_DYNALITE_VERSION} (it uses that release's internal modules) but dynalite ${String(installed)} is installed: ` +
      'run "npm ci" to install the versions package-lock.json pins',
  );
}

let loaded: DynaliteInternals | undefined;

/**
 * dynalite's internal modules, after checking the installed release is the pinned one.
 *
 * @throws {RuntimeError} another dynalite is installed
 */
export function dynaliteInternals(): DynaliteInternals {
  if (loaded !== undefined) return loaded;
  const requireDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  assertPinnedDynalite((requireDynalite('./package.json') as { version?: unknown }).version);
  const putItemRules = requireDynalite('./validations/putItem') as DynaliteInternals['putItemRules'];
  loaded = {
    dynalite: requireDynalite('./index.js') as DynaliteInternals['dynalite'],
    db: requireDynalite('./db') as DbModule,
    validations: requireDynalite('./validations') as Validations,
    putItemRules,
    Level: (requireDynalite('level') as { Level: LevelConstructor }).Level,
  };
  return loaded;
}
