import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Builds an update from attribute maps. DynamoDB rejects placeholders that an expression does
 * not use, so names and values are kept only when they occur in the final expressions.
 */
export interface UpdateSpec {
  readonly set?: Readonly<Record<string, AttributeValue | undefined>>;
  /** Set only when the attribute is absent (`if_not_exists`): a first-seen time. */
  readonly setIfAbsent?: Readonly<Record<string, AttributeValue>>;
  readonly add?: Readonly<Record<string, AttributeValue>>;
  /**
   * Lists (`L`) to append to list attributes, which are created when absent:
   * `list_append(if_not_exists(#name, []), value)`. Appending in the update that makes a change
   * keeps the change and its log entry one atomic write.
   */
  readonly append?: Readonly<Record<string, AttributeValue>>;
  readonly remove?: readonly string[];
  /** May use `#name` for any attribute name and the `:placeholders` of `values`. */
  readonly condition?: string;
  readonly values?: Readonly<Record<string, AttributeValue>>;
}

export interface UpdateExpressionParts {
  readonly UpdateExpression: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, AttributeValue>;
}

export const buildUpdate = ({
  set = {},
  setIfAbsent = {},
  add = {},
  append = {},
  remove = [],
  condition,
  values = {},
}: UpdateSpec): UpdateExpressionParts => {
  const allValues: Record<string, AttributeValue> = { ...values };
  const clauses: string[] = [];
  const sets = Object.entries(set).filter((entry): entry is [string, AttributeValue] => entry[1] !== undefined);
  const firsts = Object.entries(setIfAbsent);
  const appends = Object.entries(append);
  if (sets.length + firsts.length + appends.length > 0) {
    const assignments = [
      ...sets.map(([name]) => `#${name} = :set_${name}`),
      ...firsts.map(([name]) => `#${name} = if_not_exists(#${name}, :first_${name})`),
      ...appends.map(([name]) => `#${name} = list_append(if_not_exists(#${name}, :empty_${name}), :append_${name})`),
    ];
    clauses.push(`SET ${assignments.join(', ')}`);
    for (const [name, value] of sets) allValues[`:set_${name}`] = value;
    for (const [name, value] of firsts) allValues[`:first_${name}`] = value;
    for (const [name, value] of appends) {
      allValues[`:empty_${name}`] = { L: [] };
      allValues[`:append_${name}`] = value;
    }
  }
  const adds = Object.entries(add);
  if (adds.length > 0) {
    clauses.push(`ADD ${adds.map(([name]) => `#${name} :add_${name}`).join(', ')}`);
    for (const [name, value] of adds) allValues[`:add_${name}`] = value;
  }
  if (remove.length > 0) clauses.push(`REMOVE ${remove.map((name) => `#${name}`).join(', ')}`);
  const update = clauses.join(' ');
  const text = `${update} ${condition ?? ''}`;

  const names: Record<string, string> = {};
  for (const [, name] of text.matchAll(/#(\w+)/g)) if (name !== undefined) names[`#${name}`] = name;
  const usedValues = Object.fromEntries(
    Object.entries(allValues).filter(([placeholder]) => new RegExp(`${placeholder}(?!\\w)`).test(text)),
  );
  return {
    UpdateExpression: update,
    ...(condition === undefined ? {} : { ConditionExpression: condition }),
    ...(Object.keys(names).length === 0 ? {} : { ExpressionAttributeNames: names }),
    ...(Object.keys(usedValues).length === 0 ? {} : { ExpressionAttributeValues: usedValues }),
  };
};
