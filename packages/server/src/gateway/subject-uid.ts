import { VerbatimError } from "verbatim-llm/core";

const SUBJECT_PATTERN = /^[\x21-\x7e]{1,200}$/;

/**
 * The one rule for a subject uid, wherever one enters (`keys create`, `import --subject`,
 * `export --subject`): 1 to 200 printable ASCII characters, no spaces, so that a subject never
 * carries control characters or markup into a terminal, a log or the console.
 */
export function checkSubjectUid(subjectUid: string): string {
  if (!SUBJECT_PATTERN.test(subjectUid)) {
    throw new VerbatimError("invalid_argument", "the subject uid is not valid", {
      where: "--subject",
      hint: "Use 1 to 200 printable ASCII characters without spaces",
    });
  }
  return subjectUid;
}
