import type { CommandListing } from './main';

export declare const BUILD_DIR: string;
export declare const ENTRY_FILE: string;
export declare const MANIFEST_FILE: string;
export declare const SOURCE_ENTRY: string;
export declare function stampOf(
  root: string,
  inputs: readonly string[],
  read?: (input: string) => Uint8Array | string,
): string;
export declare function findBuild(
  root: string,
): { readonly entry: string; readonly listings: CommandListing[] } | { readonly reason: 'missing' | 'changed' };
export declare function launch(argv: readonly string[], root: string): Promise<void>;
export declare function runSources(argv: readonly string[], root: string): Promise<void>;
export declare function sourcesCommand(root: string, cliArgs: readonly string[]): string[];
