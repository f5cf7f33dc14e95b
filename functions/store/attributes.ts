import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { corruptRecord, type StoreError } from './errors';

/**
 * Small typed converters between plain values and DynamoDB attribute values. The store writes a
 * handful of fixed shapes, so these replace `@aws-sdk/util-dynamodb` (not installed, and a
 * generic marshaller would hide type mistakes behind `any`).
 */

/** An item as the low-level client sees it. */
export type Item = Record<string, AttributeValue>;

export const str = (value: string): AttributeValue => ({ S: value });
export const num = (value: number): AttributeValue => {
  // NaN or Infinity would be rejected by DynamoDB far from the bug that produced them.
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return { N: String(value) };
};
export const bool = (value: boolean): AttributeValue => ({ BOOL: value });
/** A list, not a string set: sets are unordered and cannot be empty. */
export const strList = (values: readonly string[]): AttributeValue => ({ L: values.map(str) });
export const map = (fields: Readonly<Record<string, AttributeValue | undefined>>): AttributeValue => ({
  M: compact(fields),
});

/** Drops `undefined` fields, so optional values are absent rather than written as nulls. */
export const compact = (fields: Readonly<Record<string, AttributeValue | undefined>>): Item => {
  const item: Item = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) item[name] = value;
  return item;
};

/** Reads attributes of one item, naming the item in every error. */
export class ItemReader {
  public constructor(
    private readonly item: Item,
    private readonly key: string,
  ) {}

  public str(name: string): string {
    const value = this.optStr(name);
    if (value === undefined) throw this.missing(name, 'S');
    return value;
  }

  public optStr(name: string): string | undefined {
    const value = this.item[name];
    if (value === undefined) return undefined;
    if (value.S === undefined) throw this.missing(name, 'S');
    return value.S;
  }

  public num(name: string): number {
    const value = this.optNum(name);
    if (value === undefined) throw this.missing(name, 'N');
    return value;
  }

  public optNum(name: string): number | undefined {
    const value = this.item[name];
    if (value === undefined) return undefined;
    if (value.N === undefined) throw this.missing(name, 'N');
    return Number(value.N);
  }

  public optBool(name: string): boolean | undefined {
    const value = this.item[name];
    if (value === undefined) return undefined;
    if (value.BOOL === undefined) throw this.missing(name, 'BOOL');
    return value.BOOL;
  }

  public optStrList(name: string): string[] | undefined {
    return this.item[name] === undefined ? undefined : this.strList(name);
  }

  public strList(name: string): string[] {
    const value = this.item[name];
    if (value?.L === undefined) throw this.missing(name, 'L');
    return value.L.map((entry, index) => {
      if (entry.S === undefined) throw this.missing(`${name}[${index}]`, 'S');
      return entry.S;
    });
  }

  /** A reader for a nested map, or `undefined` when the attribute is absent. */
  public optMap(name: string): ItemReader | undefined {
    const value = this.item[name];
    if (value === undefined) return undefined;
    if (value.M === undefined) throw this.missing(name, 'M');
    return new ItemReader(value.M, `${this.key}.${name}`);
  }

  /** Readers for a list of maps, or `undefined` when the attribute is absent. */
  public optMapList(name: string): ItemReader[] | undefined {
    const value = this.item[name];
    if (value === undefined) return undefined;
    if (value.L === undefined) throw this.missing(name, 'L');
    return value.L.map((entry, index) => {
      if (entry.M === undefined) throw this.missing(`${name}[${index}]`, 'M');
      return new ItemReader(entry.M, `${this.key}.${name}[${index}]`);
    });
  }

  private missing(name: string, type: string): StoreError {
    return corruptRecord(this.key, `attribute ${name} is missing or not of type ${type}`);
  }
}
