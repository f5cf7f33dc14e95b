import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Builds an update from attribute maps. DynamoDB rejects placeholders that an expression does
 * not use, so names and values are kept only when they occur in the final expressions.
 */
export interface UpdateSpec {
  readonly set?: Readonly<Record<string, AttributeValue | undefined>>;
  readonly add?: Readonly<Record<string, AttributeValue>>;
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
  add = {},
  remove = [],
  condition,
  values = {},
}: UpdateSpec): UpdateExpressionParts => {
  const allValues: Record<string, AttributeValue> = { ...values };
  const clauses: string[] = [];
  const sets = Object.entries(set).filter((entry): entry is [string, AttributeValue] => entry[1] !== undefined);
  if (sets.length > 0) {
    clauses.push(`SET ${sets.map(([name]) => `#${name} = :set_${name}`).join(', ')}`);
    for (const [name, value] of sets) allValues[`:set_${name}`] = value;
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
