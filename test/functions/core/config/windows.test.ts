import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { problemsOf } from './support';

const config = (route: string): string => `
provider:
  baseUrl: https://sms.example.co.tz
routes:
  orders:
    source: shopify
    secret: shop-secret
${route
  .trim()
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
`;

describe('quietHours and digest in the config', () => {
  it('loads both, with every day by default and the digest template compiled', () => {
    const route = loadConfig(
      config(`
recipients: ["0712345678"]
quietHours: { from: "22:00", to: "07:00" }
digest: { window: 10m }
digestTemplate: "{{ count }} orders: {{ messages | join: '; ' }}"`),
    ).routes.get('orders')!;
    expect(route.config.quietHours).toEqual({
      from: '22:00',
      to: '07:00',
      days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
    });
    expect(route.config.digest).toEqual({ window: 600 });
    expect(route.digestTemplate?.source).toBe("{{ count }} orders: {{ messages | join: '; ' }}");
  });

  it('compiles the default digest template for a route that sets none', () => {
    const route = loadConfig(config(`recipients: ["0712345678"]\ndigest: { window: 5m }`)).routes.get('orders')!;
    expect(route.digestTemplate?.source).toContain('{{ count }} orders {{ window }}');
  });

  it('refuses quietHours on a critical route', () => {
    expect(
      problemsOf(config(`recipients: ["0712345678"]\npriority: critical\nquietHours: { from: "22:00", to: "07:00" }`)),
    ).toEqual([
      'routes.orders.quietHours: a critical route is never quiet: remove quietHours, or send what can wait to another route',
    ]);
  });

  it('refuses templated recipients on a digest or quiet-hours route', () => {
    expect(problemsOf(config(`recipients: ["0712345678", "{{ customer.phone }}"]\ndigest: { window: 10m }`))).toEqual([
      "routes.orders.recipients: digest sends one SMS to the route's literal recipients; a templated recipient differs per webhook and cannot be merged into it",
    ]);
    expect(
      problemsOf(config(`recipients: ["{{ customer.phone }}"]\nquietHours: { from: "22:00", to: "07:00" }`)),
    ).toEqual([
      "routes.orders.recipients: quietHours sends one SMS to the route's literal recipients; a templated recipient differs per webhook and cannot be merged into it",
    ]);
  });

  it('names each malformed value', () => {
    expect(
      problemsOf(
        config(
          `recipients: ["0712345678"]\nquietHours: { from: "7pm", to: "07:00", days: [monday] }\ndigest: { window: soon }`,
        ),
      ),
    ).toEqual([
      expect.stringMatching(/^routes\.orders\.quietHours\.from: a time of day is HH:MM/),
      expect.stringMatching(
        /^routes\.orders\.quietHours\.days\[0\]: a day is one of sun, mon, tue, wed, thu, fri, sat/,
      ),
      expect.stringMatching(/^routes\.orders\.digest\.window: "soon" is not a duration/),
    ]);
    expect(problemsOf(config(`recipients: ["0712345678"]\nquietHours: { from: "07:00", to: "07:00" }`))).toEqual([
      'routes.orders.quietHours.to: from and to are the same time: quiet hours need a length',
    ]);
  });

  it('refuses a digestTemplate without digest or quietHours, and one that does not compile', () => {
    expect(problemsOf(config(`recipients: ["0712345678"]\ndigestTemplate: "{{ count }}"`))).toEqual([
      'routes.orders.digestTemplate: digestTemplate applies to routes with digest or quietHours',
    ]);
    expect(
      problemsOf(config(`recipients: ["0712345678"]\ndigest: { window: 10m }\ndigestTemplate: "{{ count | nope }}"`)),
    ).toEqual([expect.stringMatching(/^routes\.orders\.digestTemplate: .*nope/)]);
  });
});
