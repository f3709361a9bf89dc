import { VerbatimError } from "verbatim-llm/core";

export function notFound(what: "job" | "turn", id: string): VerbatimError {
  return new VerbatimError("job_not_found", `no ${what} ${id} for this subject`, {
    where: `${what}Id`,
    hint: "Check the id, and that the request is made as the subject that owns the job",
  });
}

export function stateConflict(message: string): VerbatimError {
  return new VerbatimError("job_state_conflict", message, {
    hint: "Read the job to see its state",
  });
}
