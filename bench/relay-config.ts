/** The relay config both relay benchmarks run: one generic route, one recipient, the body's `message` as the SMS. */
export const SENDER_ID = 'RELAY';
export const TOKEN_NAME = 'bench-token';

export function benchConfigYaml(providerBaseUrl: string): string {
  return `provider:
  baseUrl: ${providerBaseUrl}
  defaultSenderId: ${SENDER_ID}
secrets: sms-relay/bench
routes:
  bench:
    source: generic
    secret: ${TOKEN_NAME}
    recipients: ["+255 712 345 678"]
    template: "{{ message }}"
`;
}

/** The secrets file's JSON for `benchConfigYaml`. */
export const benchSecrets = (providerApiKey: string, token: string): string =>
  JSON.stringify({ providerApiKey, [TOKEN_NAME]: token });
