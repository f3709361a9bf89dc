/** A value already written canonically at a given depth, spliced in as is by the writer. */
export class CanonicalFragment {
  constructor(
    readonly text: string,
    readonly depth: number,
  ) {}
}
