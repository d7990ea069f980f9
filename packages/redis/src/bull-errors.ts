/** BullMQ's answers when a job is no longer held with this token: missing job, lock, active state, or another's lock. */
export const LOST = /^(Missing key for job|Missing lock for job|Job .* is not in the active state|Lock mismatch for job)/;
/** BullMQ's answers to a retry of a job that is no longer a dead letter: removed, or replayed by another call first. */
export const NOT_FAILED = /^(Missing key for job|Job .* is not in the failed state)/;
/** Redis's answer when a key holds another type: a key of the queue's own, not a job. */
export const NOT_A_JOB = /^WRONGTYPE/;

/** A rejection handler answering `answer` for an error whose message matches `refusal`, and throwing any other again. */
export const answerWhen =
  <T>(refusal: RegExp, answer: T) =>
  (error: unknown): T => {
    if (error instanceof Error && refusal.test(error.message)) return answer;
    throw error;
  };
