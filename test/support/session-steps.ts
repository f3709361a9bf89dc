/**
 * What a client of a stateless agent does with its history between two requests, for the
 * property tests of chain matching (recorded calls and /v1/responses): extend it, send the same
 * request again, or fork it after its first `keep` messages. `session` names one of four
 * sessions of one subject.
 */
import fc from "fast-check";

export type SessionStep =
  | { readonly kind: "extend"; readonly session: number; readonly text: string }
  | { readonly kind: "retry"; readonly session: number }
  | {
      readonly kind: "fork";
      readonly session: number;
      readonly keep: number;
      readonly text: string;
    };

export function sessionStepArbitrary(maxKeep: number): fc.Arbitrary<SessionStep> {
  return fc.oneof(
    fc.record({
      kind: fc.constant("extend" as const),
      session: fc.nat(3),
      text: fc.string({ maxLength: 8 }),
    }),
    fc.record({ kind: fc.constant("retry" as const), session: fc.nat(3) }),
    fc.record({
      kind: fc.constant("fork" as const),
      session: fc.nat(3),
      keep: fc.nat(maxKeep),
      text: fc.string({ maxLength: 8 }),
    }),
  );
}

/** Batches of steps: the steps of one batch run at the same time. */
export function sessionBatchesArbitrary(maxKeep: number): fc.Arbitrary<SessionStep[][]> {
  return fc.array(fc.array(sessionStepArbitrary(maxKeep), { minLength: 1, maxLength: 4 }), {
    minLength: 1,
    maxLength: 6,
  });
}
