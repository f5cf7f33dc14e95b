import type { LoadedConfig } from '../../functions/core/config/load';
import type { MessageStore } from '../../functions/store';

/**
 * Where the console's data comes from: the config it describes and a store to read. The running
 * runtime passes its own store; `sms-relay console` opens the local store per request (so a
 * runtime can start meanwhile) or a deployed table.
 */
export interface ConsoleSource {
  /** One line: where the records come from. */
  readonly description: string;
  /** `local` or the `--env` name. */
  readonly environment: string;
  readonly loaded: LoadedConfig;
  /** Each route as written in the config file (no defaults filled in): what "copy as YAML" starts from. */
  readonly rawRoutes: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Base of the webhook URLs (`http://127.0.0.1:3000`, the API's URL), when known. */
  readonly webhookBase: string | undefined;
  /** Example payloads per source (`<dir>/<source>/*.json`). */
  readonly fixturesDir: string | undefined;
  withStore<T>(use: (store: MessageStore) => Promise<T>): Promise<T>;
  /** Told the id of a record a redrive sent back to `PENDING` (the runtime sends it at once). */
  readonly onRequeued?: (id: string) => void;
  readonly clock?: () => Date;
}
