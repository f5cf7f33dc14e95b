import { createDateFilter } from './date';
import { createMoneyFilters } from './money';
import { mask_phone, phone } from './phone';
import { createLiquidDateFilter } from './zone';
import { sms_safe } from './text';
import type { FilterDoc, SmsFilter } from './types';

export type { FilterDoc } from './types';
export { DEFAULT_DATE_FORMAT, EPOCH_MILLIS_THRESHOLD } from './date';

/**
 * The filters the relay adds to Liquid's own. Their names are a public contract: templates in
 * users' configs call them. Each example renders as shown on a default engine (tested).
 *
 * @example
 * ```ts
 * for (const { usage, description } of SMS_FILTERS) console.log(`| \`${usage}\` | ${description} |`);
 * ```
 */
export const SMS_FILTERS: readonly FilterDoc[] = [
  {
    name: 'phone',
    usage: '{{ number | phone }}',
    description: 'A phone number in international display form; unparsable input unchanged.',
    example: { template: "{{ '255712345678' | phone }}", output: '+255 712 345 678' },
  },
  {
    name: 'mask_phone',
    usage: '{{ number | mask_phone }}',
    description: "First four digits, four stars, last three: for messages that mustn't show a number.",
    example: { template: "{{ '0712345678' | mask_phone }}", output: '2557****678' },
  },
  {
    name: 'money',
    usage: "{{ amount | money }} or {{ amount | money: 'USD' }}",
    description:
      'An amount in major units (number or number-like string, e.g. Shopify "29.99") with the currency code; default currency is the engine\'s.',
    example: { template: '{{ 1234567.5 | money }}', output: 'TZS 1,234,567.50' },
  },
  {
    name: 'money_minor',
    usage: "{{ amount | money_minor: 'USD' }}",
    description: "An integer amount in minor units (Stripe), divided by 10^(the currency's ISO 4217 digits).",
    example: { template: "{{ 2999 | money_minor: 'USD' }}", output: 'USD 29.99' },
  },
  {
    name: 'date_tz',
    usage: "{{ time | date_tz }} or {{ time | date_tz: '%d %b %H:%M', 'Europe/London' }}",
    description:
      "A timestamp (ISO 8601, epoch seconds or milliseconds) in the engine's time zone or the one given; strftime format, default %Y-%m-%d %H:%M.",
    example: { template: "{{ '2026-03-01T10:00:00Z' | date_tz }}", output: '2026-03-01 13:00' },
  },
  {
    name: 'sms_safe',
    usage: '{{ text | sms_safe }}',
    description:
      'Replaces or drops characters outside the GSM-7 alphabet (emoji, curly quotes, dashes), so the SMS is billed at 160 characters a part, not 70.',
    example: { template: "{{ '🔥 “Disk” full — 95%' | sms_safe }}", output: '"Disk" full - 95%' },
  },
];

/**
 * The filter implementations, bound to one engine's options. Includes a faster `date` that
 * replaces LiquidJS's own with the same behaviour (not listed in `SMS_FILTERS`: it's Liquid's).
 */
export const createSmsFilters = (options: {
  readonly timeZone: string;
  readonly currency: string;
  readonly locale: string;
}): Readonly<Record<string, SmsFilter>> => ({
  phone,
  mask_phone,
  ...createMoneyFilters(options),
  date_tz: createDateFilter(options),
  sms_safe,
  date: createLiquidDateFilter(options),
});
