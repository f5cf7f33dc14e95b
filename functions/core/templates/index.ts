export { createTemplateEngine, DEFAULT_TEMPLATE_OPTIONS } from './engine';
export { TemplateError } from './errors';
export { SMS_FILTERS, DEFAULT_DATE_FORMAT, EPOCH_MILLIS_THRESHOLD } from './filters';
export type { FilterDoc } from './filters';
export { buildScope } from './scope';
export type { ScopeHeaders, ScopeInput } from './scope';
export type {
  CompiledCondition,
  CompiledTemplate,
  RenderOptions,
  RenderResult,
  TemplateEngine,
  TemplateEngineOptions,
  TemplateScope,
} from './types';
