import { Tokenizer, TypeGuards } from 'liquidjs';
import type { Liquid } from 'liquidjs';
import { TemplateError } from './errors';

const UNARY_OPERATORS = new Set(['not']);

/**
 * Rejects expressions LiquidJS would silently half-read. Its parser stops at the first thing it
 * doesn't understand, so `status = 'firing'` (one `=`) evaluates `status` alone — truthy for any
 * status — and `status ==` compares with nothing. A `when` with such a typo would send every
 * webhook, so the whole expression must be consumed: operands and operators alternating, then
 * optional filters, then nothing.
 */
export const assertCompleteExpression = (expression: string, liquid: Liquid): void => {
  const tokenizer = new Tokenizer(
    expression,
    liquid.options.operators,
    undefined,
    undefined,
    liquid.options.groupedExpressions,
  );
  let expectOperand = true;
  let previousOperator: string | undefined;
  for (const token of tokenizer.readExpressionTokens()) {
    if (TypeGuards.isOperatorToken(token)) {
      const operator = token.operator;
      const unary = UNARY_OPERATORS.has(operator);
      if (expectOperand && !unary) {
        throw new TemplateError(
          previousOperator === undefined
            ? `expected a value before "${operator}"`
            : `expected a value between "${previousOperator}" and "${operator}"`,
        );
      }
      if (!expectOperand && unary) throw new TemplateError(`expected an operator before "${operator}"`);
      previousOperator = operator;
      expectOperand = true;
    } else {
      if (!expectOperand) throw new TemplateError(`expected an operator before "${token.getText()}"`);
      expectOperand = false;
    }
  }
  if (expectOperand) {
    throw new TemplateError(
      previousOperator === undefined ? 'expected a value' : `expected a value after "${previousOperator}"`,
    );
  }
  tokenizer.skipBlank();
  if (!tokenizer.end() && tokenizer.peek() !== '|') {
    throw new TemplateError(`unexpected "${tokenizer.remaining().trim()}"`);
  }
  tokenizer.readFilters();
  tokenizer.skipBlank();
  if (!tokenizer.end()) throw new TemplateError(`unexpected "${tokenizer.remaining().trim()}"`);
};
