import { Validations, type Stage } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks, type NagPack } from 'cdk-nag';

/**
 * The cdk-nag packs every synth runs: AWS Solutions and Serverless. cdk-nag 3 packs are CDK
 * validation plugins, not Aspects; a finding fails the synth unless acknowledged with
 * `Validations.of(construct).acknowledge({ id, reason })` next to the resource it concerns.
 *
 * @example
 * ```ts
 * const packs = relayNagPacks();
 * packs.flatMap((pack) => pack.validateScope(stack).violations); // [] when everything is fixed or acknowledged
 * ```
 */
export function relayNagPacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new ServerlessChecks()];
}

/** Registers `relayNagPacks()` on an app (or stage) so `cdk synth` reports and fails on findings. */
export function addNagChecks(stage: Stage): void {
  Validations.of(stage).addPlugins(...relayNagPacks());
}
